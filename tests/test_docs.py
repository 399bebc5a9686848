"""Generated figures in docs/ match what the commands print now (no hand-typed numbers)."""

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("update_docs", REPO / "scripts" / "update_docs.py")
update_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(update_docs)

DOCS = sorted((REPO / "docs").glob("*.md"))
DECIMAL = re.compile(r"\d+\.\d+")


def same_figures(rendered: str, committed: str) -> bool:
    """Equal, but that a decimal may be one off in its last digit. The embedder's float sums differ
    between CPUs (the kernels onnxruntime picks), which can flip a tie among a thousand rankings:
    the BEIR hybrid's nDCG@10 reads 0.987 on one machine and 0.988 on another."""
    if DECIMAL.split(rendered) != DECIMAL.split(committed):
        return False
    for new, old in zip(DECIMAL.findall(rendered), DECIMAL.findall(committed), strict=True):
        places = len(new.partition(".")[2])
        if len(old.partition(".")[2]) != places or abs(float(new) - float(old)) > 1.5 * 10**-places:
            return False
    return True


def test_figures_may_differ_only_by_one_in_their_last_digit():
    assert same_figures("| 0.987 | 12 |", "| 0.988 | 12 |") and same_figures("a 1.5 b", "a 1.5 b")
    assert not same_figures("| 0.986 | 12 |", "| 0.988 | 12 |")  # two off: a real change
    assert not same_figures("| 0.988 | 13 |", "| 0.988 | 12 |")  # a count is exact
    assert not same_figures("| 0.99 |", "| 0.988 |") and not same_figures("bm25 0.9", "dense 0.9")


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_generated_blocks_are_current(path, shared_data):
    text = path.read_text(encoding="utf-8")
    rendered = update_docs.render(text, measurements=False)
    assert rendered == text or same_figures(rendered, text), f"{path.name} is stale: run `make docs`"


def test_every_generated_block_has_content():
    for path in DOCS:
        for match in update_docs.BLOCK.finditer(path.read_text(encoding="utf-8")):
            assert match.group("body").strip(), f"{path.name}: empty block for `{match.group('command')}`"


def test_a_page_edited_while_its_blocks_run_is_not_overwritten(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(
        "Prose.\n<!-- generated: evidenceqa --version -->\nold\n<!-- end generated -->\n", encoding="utf-8"
    )

    def slow_command(command):
        page.write_text(page.read_text(encoding="utf-8").replace("Prose.", "Edited prose."), encoding="utf-8")
        return "new\n"

    monkeypatch.setattr(update_docs, "run", slow_command)
    monkeypatch.setattr("sys.argv", ["update_docs.py", str(page)])
    with pytest.raises(SystemExit, match="changed while its blocks were regenerated"):
        update_docs.main()
    assert page.read_text(encoding="utf-8").startswith("Edited prose.\n")
    monkeypatch.setattr(update_docs, "run", lambda command: "new\n")
    assert update_docs.main() == 0  # unchanged meanwhile: written
    assert "Edited prose.\n<!-- generated: evidenceqa --version -->\nnew\n" in page.read_text(
        encoding="utf-8"
    )
