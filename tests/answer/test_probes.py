"""Questions a library asks of itself: written from its sentences, in several styles, never its titles."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from evidenceqa.answer.probes import OPENERS, SCENARIOS, STYLES, probes
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.text.tokens import tokens
from tests.answer.library import abstracts


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Catalogue]:
    home = tmp_path_factory.mktemp("probes")
    with Catalogue(home / "catalogue.sqlite3") as catalogue:
        Ingestor(catalogue, ChunkingConfig()).ingest_file(abstracts(home / "lib.jsonl", 40))
        # A document whose title is a question, as PubMedQA's are: its title must not be asked.
        titled = {"doc_id": "titled", "title": "Does preoperative warming reduce wound infection?",
                  "sections": [{"heading": "Results", "paragraphs": [
                      "Preoperative warming reduced wound infection after clean surgery in a randomised trial "
                      "of hypothermia prevention with forced air blankets."]}]}  # fmt: skip
        (home / "titled.jsonl").write_text(json.dumps(titled) + "\n", encoding="utf-8")
        Ingestor(catalogue, ChunkingConfig()).ingest_file(home / "titled.jsonl")
        yield catalogue


def test_each_probe_comes_from_a_sentence_of_its_own_chunk_in_the_library_s_words(
    catalogue: Catalogue,
) -> None:
    made = probes(catalogue, 41)
    assert len(made) >= 30
    chunks = {c.chunk_id: c for c in catalogue.chunks()}
    for probe in made:
        chunk = chunks[probe.chunk_id]
        assert chunk.doc_id == probe.doc_id and probe.passage in chunk.body
        document = " ".join(c.body for c in chunks.values() if c.doc_id == probe.doc_id)
        asked = set(tokens(probe.question)) - set(tokens(" ".join(_templates())))
        assert asked <= set(tokens(document)), probe


def test_probes_rotate_styles_one_document_each_and_repeat_for_a_seed(catalogue: Catalogue) -> None:
    made = probes(catalogue, 20, seed=3)
    assert {p.style for p in made} == set(STYLES)
    assert len({p.doc_id for p in made}) == len(made)
    assert made == probes(catalogue, 20, seed=3)
    assert made != probes(catalogue, 20, seed=4)


def test_no_probe_asks_a_title_or_a_heading(catalogue: Catalogue) -> None:
    titles = {(r.title or "").lower() for r in catalogue.documents()} | {"results", "methods"}
    made = probes(catalogue, 100)
    assert any(p.doc_id == "titled" for p in made)
    assert all(p.question.lower() not in titles for p in made)


def _templates() -> list[str]:
    return [t.replace("{}", "") for t in OPENERS] + [
        t.format(topic="", words="", related="") for t in SCENARIOS
    ]
