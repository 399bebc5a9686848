"""Components by name through entry points: the built-ins, a clear error for a wrong name, and a
third-party package that adds a loader and a generator without touching the project."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evidenceqa import registry
from evidenceqa.registry import MissingExtra, UnknownComponent
from tests.cli.test_cli import run


def test_the_built_ins_register_through_entry_points() -> None:
    assert registry.names("loader") == ["bmc", "html", "jats", "jsonl", "markdown", "medquad", "pdf", "text"]
    assert registry.names("embedder") == ["minilm", "minilm-onnx", "onnx", "openai"]
    assert registry.names("backend") == ["lancedb", "milvus"]
    assert registry.names("generator") == ["extractive", "llm"]


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownComponent, match=r"^unknown generator 'gpt'; choose from: extractive, llm$"):
        registry.load("generator", "gpt")


def test_a_missing_extra_names_the_extra_to_install() -> None:
    error = MissingExtra("the backend 'milvus'", "milvus", "pymilvus")
    assert str(error) == (
        "the backend 'milvus' needs the 'milvus' extra: pip install 'evidenceqa[milvus]' "
        "(no module named 'pymilvus')"
    )


PLUGIN = '''
"""A third party's package: index cards (.card: a title line, then the text) and a generator that
answers with the first evidence passage, quoted."""

from pathlib import Path

from evidenceqa.answer.base import Draft
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.records import Sentence

SUFFIXES = (".card",)


def load(path: Path):
    title, _, body = path.read_text(encoding="utf-8").partition("\\n")
    yield Document(doc_id="card-" + path.stem, title=title.strip(), doc_type="card",
                   sections=[Section("Card", [Paragraph(body.strip())])])


class Quote:
    name = "quote"

    def generate(self, question, evidence, on_delta=None):
        first = evidence[0]
        text = first.chunk.body.split(". ")[0].rstrip(".") + f". [{first.n}]"
        if on_delta:
            on_delta(text)
        return Draft(text, [Sentence(text, [first.n])], abstained=False, model="quote")


def quote(settings, embedder):
    return Quote()
'''

ENTRY_POINTS = """
[evidenceqa.loaders]
card = evidenceqa_cards

[evidenceqa.generators]
quote = evidenceqa_cards:quote
"""


def install_plugin(site: Path) -> None:
    """What `pip install evidenceqa-cards` leaves on sys.path: the module and its dist-info."""
    (site / "evidenceqa_cards.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "evidenceqa_cards-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evidenceqa-cards\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)


def test_a_plugin_package_adds_a_loader_and_a_generator_used_by_name(tmp_path: Path) -> None:
    site, library, home = tmp_path / "site", tmp_path / "cards", tmp_path / "home"
    site.mkdir()
    library.mkdir()
    install_plugin(site)
    (library / "chg.card").write_text(
        "Chlorhexidine and mucous membranes\n"
        "Chlorhexidine gluconate should not be used on mucous membranes of the eye or ear. "
        "Povidone-iodine is preferred there.\n"
    )
    env = {"PYTHONPATH": str(site)}

    ingested = run(home, "ingest", str(library), env=env)
    assert ingested.returncode == 0, ingested.stderr

    asked = run(home, "ask", "chlorhexidine on mucous membranes?", "--json",
                env=env | {"EVIDENCEQA_GENERATOR": "quote"})  # fmt: skip
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["generator"] == "quote"
    assert answer["answer"].startswith("Chlorhexidine gluconate should not be used on mucous membranes")
    assert [c["doc_id"] for c in answer["citations"]] == ["card-chg"]

    without = run(home, "ask", "chlorhexidine?", env={"EVIDENCEQA_GENERATOR": "quote"})
    assert without.returncode == 2
    assert without.stderr.strip().endswith("unknown generator 'quote'; choose from: extractive, llm")
