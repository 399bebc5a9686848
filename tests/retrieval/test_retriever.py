"""The retriever end to end on a small real index: temporal handling, recency, expansion, modes."""

from dataclasses import replace
from datetime import date

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.index.base import Filters, Hit
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse
from evidenceqa.retrieval.question import QuestionError
from evidenceqa.retrieval.retriever import FIXED_ALPHA, _boost_recent
from tests.conftest import indexed_engine

DOCS = [
    (
        "old-ssi",
        2004,
        "Surgical site infection (SSI) after hip replacement was reduced by antibiotic prophylaxis.",
    ),
    (
        "new-ssi",
        2021,
        "Surgical site infection (SSI) rates fell with chlorhexidine-alcohol skin preparation.",
    ),
    ("mid-ssi", 2012, "Surgical site infection (SSI) surveillance in orthopaedic wards."),
    ("masks", 2020, "Surgical masks reduce droplet transmission in the operating room."),
    ("undated", None, "Hand hygiene before surgery prevents infection."),
]
QUESTIONS = [
    "How can surgical site infection be prevented?",
    "Do surgical masks reduce droplet transmission?",
    "What is hand hygiene?",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory, models_dir):
    with indexed_engine(tmp_path_factory.mktemp("home"), DOCS, models_dir) as opened:
        yield opened


@pytest.fixture
def retriever(engine):
    return engine.retriever(today=date(2026, 11, 29))


@pytest.mark.parametrize("question", QUESTIONS)
def test_questions_without_temporal_intent_score_the_same_with_it_on_and_off(retriever, question):
    on = retriever.search(question, k=5)
    off = retriever.search(question, k=5, temporal=False)
    assert on.temporal is None and on.filters == {}
    assert [(r.chunk.chunk_id, r.score) for r in on.results] == [
        (r.chunk.chunk_id, r.score) for r in off.results
    ]


def test_explicit_years_filter_and_are_reported(retriever):
    response = retriever.search("studies of surgical site infection before 2013", k=5)
    assert response.filters == {"year_max": 2012}
    assert response.query_text == "studies of surgical site infection"
    assert "year ≤ 2012" in response.temporal
    assert {r.chunk.doc_id for r in response.results} == {"old-ssi", "mid-ssi"}


def test_question_years_that_contradict_the_year_filter_give_way_to_it(retriever):
    response = retriever.search(
        "studies of surgical site infection before 2013", k=5, filters=Filters(year_min=2015)
    )
    assert response.filters == {"year_min": 2015}  # the filter, not an empty range
    assert {r.chunk.doc_id for r in response.results} == {"new-ssi", "masks"}
    assert response.temporal == "'before 2013' not applied: it leaves no year within the year filter"
    narrowed = retriever.search(
        "studies of surgical site infection before 2013", filters=Filters(year_min=2010)
    )
    assert narrowed.filters == {"year_min": 2010, "year_max": 2012}  # where they agree, both apply


def test_a_year_filter_that_holds_no_year_is_refused(retriever):
    with pytest.raises(QuestionError, match=r"the earliest year \(2022\) is after the latest \(2019\)"):
        retriever.search("surgical site infection", filters=Filters(year_min=2022, year_max=2019))


def test_an_unknown_search_mode_is_refused_not_searched_as_nothing(retriever):
    with pytest.raises(ValueError, match=r"search mode 'keyword': one of hybrid, bm25, dense"):
        retriever.search("surgical site infection", mode="keyword")  # type: ignore[arg-type]


def test_last_n_years_excludes_undated_documents(retriever):
    response = retriever.search("evidence on infection prevention from the last 10 years", k=10)
    assert response.filters == {"year_min": 2017}
    assert {r.chunk.doc_id for r in response.results} <= {"new-ssi", "masks"}


def test_recency_boost_lifts_newer_evidence_without_filtering(retriever):
    plain = [r.chunk.doc_id for r in retriever.search("surgical site infection SSI", k=3).results]
    recent = retriever.search("latest evidence on surgical site infection SSI", k=3)
    assert recent.filters == {} and "newer documents first" in recent.temporal
    lifted = [r.chunk.doc_id for r in recent.results]
    # The newest moves up past the oldest; a much better match (mid-ssi, first in both lists) may
    # still lead: a preference, not a filter.
    assert lifted.index("new-ssi") < plain.index("new-ssi")
    assert lifted.index("old-ssi") > plain.index("old-ssi")
    assert set(plain) == set(lifted)


def test_a_recency_question_under_adaptive_fusion_lifts_min_max_scores(engine):
    """A score distribution can be so peaked that no lift reorders it, so a question asking for newer
    evidence is fused by min-max scores at its own adaptive weight, then lifted."""
    settings = engine.settings.model_copy(update={"alpha": "adaptive"})
    adaptive = Engine(settings, engine.catalogue, engine.embedder, engine.backend).retriever(
        today=date(2026, 11, 29)
    )
    recent = adaptive.search("latest evidence on surgical site infection SSI", k=3)
    assert "newer documents first" in recent.temporal and recent.alpha is not None
    depth = settings.fusion_depth
    lists = {
        name: [Hit(r.chunk.chunk_id, r.chunk.doc_id, r.score)
               for r in adaptive.search(recent.query_text, k=depth, mode=mode).results]
        for name, mode in (("keyword", "bm25"), ("dense", "dense"))
    }  # fmt: skip
    weighted = Fusion("weighted", recent.alpha, settings.rrf_k, depth)
    expected = _boost_recent(fuse(lists, dense_weights(recent.alpha), weighted, depth), engine.catalogue)[:3]
    assert [r.chunk.chunk_id for r in recent.results] == [h.chunk_id for h in expected]
    assert [r.score for r in recent.results] == pytest.approx([h.score for h in expected])


def test_under_adaptive_fusion_abstention_judges_the_evidence_at_the_fixed_weight(engine):
    """The abstention model's signals were fitted on evidence fused at FIXED_ALPHA: whatever
    weight a question gets, its adequacy evidence is the fixed-weight search's results."""
    adaptive = Engine(engine.settings.model_copy(update={"alpha": "adaptive"}), engine.catalogue,
                      engine.embedder, engine.backend).retriever()  # fmt: skip
    fixed = Engine(engine.settings.model_copy(update={"alpha": str(FIXED_ALPHA)}), engine.catalogue,
                   engine.embedder, engine.backend).retriever()  # fmt: skip
    for question in [*QUESTIONS, "latest evidence on surgical site infection SSI"]:  # lifted too
        response = adaptive.search(question, k=4)
        expected = fixed.search(question, k=4)
        assert response.adequacy_results is not None and expected.adequacy_results is None
        assert [(r.chunk.chunk_id, r.score) for r in response.adequacy_results] == [
            (r.chunk.chunk_id, r.score) for r in expected.results
        ]
    # A search of one retriever has no fusion whose weight could move its evidence.
    assert adaptive.search(QUESTIONS[0], k=4, mode="dense").adequacy_results is None


def test_vocabulary_mined_at_ingest_expands_abbreviations(retriever):
    response = retriever.search("SSI after hip replacement", k=3, mode="bm25")
    assert [(a, b.lower()) for a, b in response.expansions] == [("SSI", "surgical site infection")]
    assert "surgic site infect" in response.keyword_terms
    assert response.results[0].chunk.doc_id == "old-ssi"


def test_clinical_shorthand_the_library_never_defines_finds_the_long_form(retriever):
    response = retriever.search("abx ppx for hip replacement", k=3, mode="bm25")
    assert response.expansions == [("abx", "antibiotics"), ("ppx", "prophylaxis")]
    assert response.results[0].chunk.doc_id == "old-ssi"  # the only passage on antibiotic prophylaxis


def test_keyword_search_matches_a_passage_written_in_the_other_spelling(retriever):
    response = retriever.search("orthopedic", k=3, mode="bm25")  # the passage says "orthopaedic"
    assert [r.chunk.doc_id for r in response.results] == ["mid-ssi"]


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_each_mode_reports_which_retriever_found_each_result(retriever, mode):
    response = retriever.search("surgical masks droplet transmission", k=3, mode=mode)
    assert response.results[0].chunk.doc_id == "masks"
    expected = {"bm25": {"keyword"}, "dense": {"dense"}, "hybrid": {"keyword", "dense"}}[mode]
    assert set(response.results[0].ranks) == expected
    assert (response.alpha is None) == (mode != "hybrid")
    assert set(response.timings_ms) >= {"parse", "search", "fetch", "total"}


def test_a_year_about_events_keeps_its_words_and_only_rules_out_older_evidence(retriever):
    response = retriever.search("In 2012, how was surgical site infection surveillance organised?", k=5)
    assert response.query_text == "In 2012, how was surgical site infection surveillance organised?"
    assert response.filters == {"year_min": 2012}
    assert "dates what is asked about" in response.temporal
    assert {r.chunk.doc_id for r in response.results} <= {"mid-ssi", "new-ssi", "masks"}
    relative = retriever.search("How have infection rates changed over the last two decades?", k=5)
    assert relative.filters == {} and relative.query_text.endswith("last two decades?")


def test_learned_alpha_needs_its_table_and_then_uses_it(engine, tmp_path):
    settings = engine.settings.model_copy(update={"alpha": "learned", "home": tmp_path})
    learned = Engine(settings, engine.catalogue, engine.embedder, engine.backend)
    with pytest.raises(ValueError, match="alpha = 'learned' needs the per-class table"):
        learned.retriever()
    (tmp_path / "alpha.json").write_text('{"general": 0.9, "definition": 0.1}')
    retriever = learned.retriever()
    assert retriever.search("Do surgical masks reduce droplet transmission?", k=1).alpha == 0.9
    assert retriever.search("What is hand hygiene?", k=1).alpha == 0.1
    assert (
        retriever.search("SSI after THA with MRSA and 2 mg dose", k=1).alpha == 0.3
    )  # class not in the table
    (tmp_path / "alpha.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a table of query class"):
        learned.retriever()


def test_raw_top_scores_say_how_well_the_library_matches_not_just_the_order(retriever):
    on_topic = retriever.search("surgical masks droplet transmission operating room", k=3)
    off_topic = retriever.search("volcanic eruptions in Iceland", k=3)
    assert set(on_topic.top_scores) == {"keyword", "dense"}
    assert "keyword" not in off_topic.top_scores  # no library term matches: BM25 finds nothing
    # Fused scores are relative (the best is near 1 either way); the raw cosine is not.
    assert on_topic.top_scores["dense"] > off_topic.top_scores["dense"] + 0.2
    assert set(retriever.search("surgical masks", k=3, mode="bm25").top_scores) == {"keyword"}
    # Each list's tenth score, or its last when it holds fewer: what a clear winner stands out from.
    assert set(on_topic.tenth_scores) == set(on_topic.top_scores)
    assert all(on_topic.tenth_scores[name] < top for name, top in on_topic.top_scores.items())
    single = retriever.search("surgical masks", k=1, mode="bm25")
    assert single.tenth_scores == single.top_scores


def test_recency_boost_breaks_ties_the_same_way_whatever_order_the_hits_came_in(engine):
    # Undated and oldest get no lift: equal scores stay equal, and the chunk id decides between them.
    first = {doc: next(engine.catalogue.chunks(doc)).chunk_id for doc in ("undated", "old-ssi", "new-ssi")}
    hits = [Hit(first["undated"], "undated", 0.5), Hit(first["old-ssi"], "old-ssi", 0.5),
            Hit(first["new-ssi"], "new-ssi", 0.4)]  # fmt: skip
    forward = [h.chunk_id for h in _boost_recent([replace(h) for h in hits], engine.catalogue)]
    backward = [h.chunk_id for h in _boost_recent([replace(h) for h in reversed(hits)], engine.catalogue)]
    tied = [c for c in forward if not c.startswith("new-ssi")]
    assert forward == backward and tied == sorted(tied)


def _threads_of_searches(retriever, monkeypatch) -> dict[str, str]:
    """The thread each half of the next searches ran on, by half."""
    import threading

    seen: dict[str, str] = {}
    backend = retriever.backend
    for half in ("search_dense", "search_keyword"):
        original = getattr(backend, half)

        def traced(*args, _half=half, _original=original, **kwargs):
            seen[_half] = threading.current_thread().name
            return _original(*args, **kwargs)

        monkeypatch.setattr(backend, half, traced)
    return seen


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_hybrid_search_runs_its_keyword_half_beside_the_dense_half_with_the_same_ranking(
    engine, monkeypatch, question
):
    concurrent = engine.retriever(today=date(2026, 11, 29))
    threads = _threads_of_searches(concurrent, monkeypatch)
    together = concurrent.search(question, k=5)
    assert threads["search_keyword"].startswith("keyword-search")
    assert threads["search_dense"] == "MainThread"
    sequential = engine.retriever(today=date(2026, 11, 29))
    monkeypatch.setattr(sequential.backend, "concurrent_search", False)
    threads.clear()
    one_by_one = sequential.search(question, k=5)
    assert threads["search_keyword"] == threads["search_dense"] == "MainThread"
    assert [(r.chunk.chunk_id, r.score) for r in together.results] == [
        (r.chunk.chunk_id, r.score) for r in one_by_one.results
    ]


def test_a_keyword_only_search_stays_on_the_calling_thread(retriever, monkeypatch):
    threads = _threads_of_searches(retriever, monkeypatch)
    assert retriever.search("surgical site infection", k=3, mode="bm25").results
    assert threads == {"search_keyword": "MainThread"}
