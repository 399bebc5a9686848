"""Evidence types on a small real index: the filter inside the engine, and the ranking preference."""

from dataclasses import replace

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.index.base import Filters, Hit
from evidenceqa.retrieval.retriever import EVIDENCE_BOOST, _prefer_evidence
from tests.conftest import indexed_engine

# Each text names its design the way the rules read it (evidence_types).
DOCS = [
    (
        "trial",
        2019,
        "Patients were randomly assigned to clipping or shaving; clipping lowered wound infection.",
    ),
    (
        "cohort",
        2015,
        "We retrospectively reviewed 412 patients: shaving before surgery raised wound infection.",
    ),
    ("review", 2012, "In this review we discuss hair removal before surgery and wound infection."),
    ("bench", 2018, "Razor blades were examined under the microscope for bacterial contamination."),
]
QUESTION = "Does shaving before surgery raise wound infection?"


@pytest.fixture(scope="module")
def engine(tmp_path_factory, models_dir):
    with indexed_engine(tmp_path_factory.mktemp("home"), DOCS, models_dir) as opened:
        yield opened


def test_ingest_labels_each_document_from_its_text(engine):
    kinds = {doc_id: engine.catalogue.document(doc_id).evidence_type for doc_id, _, _ in DOCS}
    assert kinds == {
        "trial": "rct",
        "cohort": "observational",
        "review": "narrative-review",
        "bench": "other",
    }


def test_the_evidence_type_filter_runs_in_the_engine_and_is_reported(engine):
    response = engine.retriever().search(
        QUESTION, k=10, filters=Filters(evidence_types=("rct", "observational"))
    )
    assert {r.chunk.doc_id for r in response.results} == {"trial", "cohort"}
    assert response.filters == {"evidence_types": ["rct", "observational"]}
    assert {r.to_dict()["evidence_type"] for r in response.results} == {"rct", "observational"}


def test_preferring_evidence_lifts_each_result_by_its_type_and_keeps_every_result(engine):
    preferred = engine.retriever().search(QUESTION, k=10, filters=Filters(prefer_evidence=True))
    assert preferred.filters == {"prefer_evidence": True}
    # The lifts multiply min-max fused scores at the question's own (adaptive) weight: the plain
    # search at that fixed weight.
    fixed = engine.settings.model_copy(update={"alpha": str(preferred.alpha)})
    at_weight = Engine(fixed, engine.catalogue, engine.embedder, engine.backend).retriever()
    plain = {r.chunk.chunk_id: r.score for r in at_weight.search(QUESTION, k=10).results}
    lift = {"rct": 4 / 6, "observational": 3 / 6, "narrative-review": 1 / 6, "other": 0.0}
    assert {r.chunk.chunk_id: r.score for r in preferred.results} == {
        r.chunk.chunk_id: pytest.approx(
            plain[r.chunk.chunk_id] * (1 + EVIDENCE_BOOST * lift[r.chunk.evidence_type])
        )
        for r in preferred.results
    }
    assert [r.score for r in preferred.results] == sorted((r.score for r in preferred.results), reverse=True)


def test_the_preference_lifts_by_strength_and_a_much_better_weaker_match_still_leads(engine):
    first = {doc: next(engine.catalogue.chunks(doc)).chunk_id for doc, _, _ in DOCS}
    equal = [Hit(first[d], d, 0.5) for d in ("bench", "review", "cohort", "trial")]
    assert [h.doc_id for h in _prefer_evidence([replace(h) for h in equal], engine.catalogue)] == [
        "trial",
        "cohort",
        "review",
        "bench",
    ]
    lifted = {h.doc_id: h.score for h in _prefer_evidence([replace(h) for h in equal], engine.catalogue)}
    assert lifted["bench"] == 0.5 and lifted["trial"] == pytest.approx(0.5 * (1 + EVIDENCE_BOOST * 4 / 6))
    far_better = [Hit(first["review"], "review", 0.9), Hit(first["trial"], "trial", 0.5)]
    assert [h.doc_id for h in _prefer_evidence(far_better, engine.catalogue)] == ["review", "trial"]
