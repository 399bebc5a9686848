"""Superseded guidance on a small real index (tests/library/editions.py): results name the newer
edition, and a question that asks for current guidance ranks the edition in force first."""

import pytest

from evidenceqa.index.base import Hit
from evidenceqa.library.versions import Successor
from evidenceqa.retrieval.retriever import SUPERSEDED_SCORE, _current_first
from tests.library.editions import ROWS, TITLE, editions_engine

QUESTION = "Should hair removal be used routinely before surgery to reduce surgical site infection?"


@pytest.fixture(scope="module")
def engine(tmp_path_factory, models_dir):
    with editions_engine(tmp_path_factory.mktemp("home"), models_dir) as opened:
        yield opened


def test_results_name_the_edition_that_replaces_theirs(engine):
    response = engine.retriever().search(QUESTION, k=10)
    marked = {r.chunk.doc_id: r.superseded_by for r in response.results}
    assert marked["cg74"] == Successor("ng125", f"{TITLE} (2019 update)", 2019, stated=False)
    assert marked["leaflet-2012"] == Successor("leaflet-2024", "Having an operation", 2024, stated=True)
    assert marked["ng125"] is None and marked["leaflet-2024"] is None
    (old,) = [r.to_dict() for r in response.results if r.chunk.doc_id == "cg74"]
    assert old["superseded_by"] == {"doc_id": "ng125", "title": f"{TITLE} (2019 update)", "year": 2019,
                                    "stated": False}  # fmt: skip


def test_a_question_for_current_guidance_ranks_the_edition_in_force_first(engine):
    plain = [r.chunk.doc_id for r in engine.retriever().search(QUESTION, k=10).results]
    assert plain.index("cg74") < plain.index("ng125")  # the older edition is the closer match
    current = engine.retriever().search(
        f"What is the current guidance: {QUESTION[0].lower()}{QUESTION[1:]}", k=10
    )
    ranked = [r.chunk.doc_id for r in current.results]
    assert ranked.index("ng125") < ranked.index("cg74")


def test_only_superseded_editions_lose_score(engine):
    first = {row["doc_id"]: next(engine.catalogue.chunks(row["doc_id"])).chunk_id for row in ROWS}
    hits = [Hit(first[d], d, 0.8) for d in ("cg74", "leaflet-2012", "ng125", "leaflet-2024")]
    ranked = _current_first(hits, engine.catalogue)
    assert {h.doc_id: h.score for h in ranked} == {
        "ng125": 0.8, "leaflet-2024": 0.8, "cg74": 0.8 * SUPERSEDED_SCORE, "leaflet-2012": 0.8 * SUPERSEDED_SCORE
    }  # fmt: skip
    assert {h.doc_id for h in ranked[:2]} == {"ng125", "leaflet-2024"}
