"""Generated figures in docs/ match what the commands print now (no hand-typed numbers)."""

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("update_docs", REPO / "scripts" / "update_docs.py")
update_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(update_docs)

DOCS = sorted((REPO / "docs").glob("*.md"))


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_generated_blocks_are_current(path, shared_data):
    text = path.read_text(encoding="utf-8")
    assert update_docs.render(text, measurements=False) == text, f"{path.name} is stale: run `make docs`"


def test_every_generated_block_has_content():
    for path in DOCS:
        for match in update_docs.BLOCK.finditer(path.read_text(encoding="utf-8")):
            assert match.group("body").strip(), f"{path.name}: empty block for `{match.group('command')}`"
