"""Answerer end to end on a small real home: retrieval, adequacy, generation, citation check, cache."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evidenceqa.answer import ABSTAIN_MESSAGE, GenerationError
from evidenceqa.answer.abstain import CALIBRATION_FILE, FEATURES, Abstainer
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.answer.extractive import TEMPLATE_DOCUMENTS as TEMPLATE_PAGES
from evidenceqa.answer.pipeline import Answerer
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.records import Answer
from tests.answer.openai_server import OpenAIServer, answer, failure, llm_settings
from tests.conftest import indexed_engine

DOCS = [
    ("shave", 2007, "Shaving the incision site immediately before spinal surgery increased the rate of "
     "postoperative infection. Clipping did not."),
    ("chg", 2015, "Chlorhexidine gluconate should not be used on mucous membranes. It is safe on intact skin "
     "before surgery."),
    ("txa", 2019, "Tranexamic acid reduced blood loss after total knee arthroplasty without more thrombosis."),
    ("sgx", 2018, "Sugammadex 2 mg/kg reversed a moderate rocuronium block within 3 minutes in 1,200 patients."),
]  # fmt: skip
SUGAMMADEX = "What dose of sugammadex reverses a moderate rocuronium block?"
SHAVE = "Does shaving the incision site increase infection after spinal surgery?"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    with indexed_engine(tmp_path_factory.mktemp("home"), DOCS, models_dir) as opened:
        yield opened


def test_extractive_answer_cites_the_passage_that_says_it(engine: Engine) -> None:
    result = engine.answerer(MemoryCache(16)).ask(SHAVE)
    assert not result.abstained and result.generator == "extractive"
    assert result.citations[0].doc_id == "shave"
    assert (
        result.citations[0].text
        in engine.catalogue.get_chunks([result.citations[0].chunk_id])[result.citations[0].chunk_id].body
    )  # the exact supporting text, for highlighting
    assert f"[{result.citations[0].n}]" in result.answer
    assert result.unsupported == 0
    assert {"search", "generate", "check", "total"} <= set(result.timings_ms)
    assert result.cost_usd == {"embed": 0.0, "search": 0.0, "generate": 0.0, "total": 0.0}
    assert result.index_version == engine.catalogue.index_version


def test_second_identical_question_comes_from_the_cache_until_the_library_changes(engine: Engine) -> None:
    answerer = engine.answerer(MemoryCache(16))
    first = answerer.ask(SHAVE)
    again = answerer.ask("does shaving the incision site increase infection after spinal surgery")
    assert again.cache_hit and not first.cache_hit
    assert again.answer == first.answer and again.citations == first.citations
    answerer.index_version = lambda: first.index_version + 1  # an ingest bumps the version
    assert not answerer.ask(SHAVE).cache_hit


def test_a_cached_answer_is_only_served_for_the_same_evidence_budget_calibration_and_shorthand(
    engine: Engine,
) -> None:
    answerer = engine.answerer(MemoryCache(16))
    assert not answerer.ask(SHAVE, k=1).cache_hit
    assert not answerer.ask(SHAVE, k=3).cache_hit  # not the one-chunk answer
    assert answerer.ask(SHAVE, k=3).cache_hit
    answerer.abstainer = Abstainer([0.0] * len(FEATURES), 50.0, 0.5, "refitted")
    assert not answerer.ask(SHAVE, k=3).cache_hit  # a refit decides anew what is answered
    assert answerer.ask(SHAVE, k=3).cache_hit
    vocabulary = replace(answerer.retriever.vocabulary, shorthand={"CHG": "chlorhexidine gluconate"})
    answerer.retriever.vocabulary = vocabulary
    assert not answerer.ask(SHAVE, k=3).cache_hit  # other shorthand may find other evidence


def test_answers_round_trip_through_their_dict(engine: Engine) -> None:
    result = engine.answerer(MemoryCache(16)).ask(SHAVE)
    assert Answer.from_dict(result.to_dict()) == result


def test_a_question_the_library_cannot_answer_is_abstained_on(engine: Engine) -> None:
    answerer = engine.answerer(MemoryCache(16))
    # By hand: p(answerable) = σ(10·dense_top + keyword_per_term + 5·coverage + keyword_margin − 9).
    weights = {"dense_top": 10.0, "keyword_per_term": 1.0, "coverage": 5.0, "keyword_margin": 1.0}
    answerer.abstainer = Abstainer([weights.get(name, 0.0) for name in FEATURES], bias=-9.0, threshold=0.5)
    result = answerer.ask("Which volcano erupted in Iceland in 2010?")
    assert result.abstained and result.answer == ABSTAIN_MESSAGE
    assert result.citations == [] and result.p_answerable is not None and result.p_answerable < 0.5
    answered = answerer.ask(SHAVE)  # the same calibration answers what the library holds
    assert not answered.abstained and answered.p_answerable is not None and answered.p_answerable > 0.5


def test_a_calibration_refitted_by_another_process_judges_the_next_question(engine: Engine) -> None:
    # An ingest refits abstention.json while the app's answerer stays open.
    path = engine.settings.home / CALIBRATION_FILE
    before = path.read_bytes() if path.is_file() else None
    answerer = engine.answerer(MemoryCache(16))
    try:
        assert not answerer.ask(SHAVE, use_cache=False).abstained
        Abstainer([0.0] * len(FEATURES), bias=-50.0, threshold=0.5, fitted_on="refit").save(
            engine.settings.home
        )
        assert answerer.ask(SHAVE, use_cache=False).abstained  # nothing is answerable to this model
        path.write_text("{", encoding="utf-8")  # half-written or damaged: the last good one stays
        assert answerer.ask(SHAVE, use_cache=False).abstained
        answerer.abstainer = Abstainer()  # one the caller chose is never replaced by the home's
        Abstainer([0.0] * len(FEATURES), bias=-60.0, threshold=0.5, fitted_on="again").save(
            engine.settings.home
        )
        assert not answerer.ask(SHAVE, use_cache=False).abstained
    finally:
        path.unlink(missing_ok=True)
        if before is not None:
            path.write_bytes(before)


def _llm(engine: Engine, server: OpenAIServer):
    settings = llm_settings(
        engine.settings, f"{server.url}/v1", llm_price_in_per_1k=0.15, llm_price_out_per_1k=0.6
    )
    return Engine(settings, engine.catalogue, engine.embedder, engine.backend).answerer(MemoryCache(16))


def test_llm_answer_is_checked_priced_and_streamed(engine: Engine) -> None:
    with OpenAIServer() as server:
        server.script(
            answer("Shaving the incision site before spinal surgery increased postoperative infection [1]. ",
                   "Mars has two moons [7].", usage=(1000, 200))
        )  # fmt: skip
        deltas: list[str] = []
        result = _llm(engine, server).ask(SHAVE, on_delta=deltas.append)
    assert "".join(deltas) == result.answer
    assert [s.supported for s in result.sentences] == [True, False]
    assert "cites [7]" in (result.sentences[1].problem or "")
    assert result.unsupported == 1 and [c.n for c in result.citations] == [1]
    assert result.cost_usd["generate"] == pytest.approx((1000 * 0.15 + 200 * 0.6) / 1000)
    assert result.usage.prompt_tokens == 1000


def test_llm_failure_is_an_error_and_is_not_cached(engine: Engine) -> None:
    with OpenAIServer() as server:
        server.script(failure(401, "bad key"))
        answerer = _llm(engine, server)
        with pytest.raises(GenerationError, match="401"):
            answerer.ask(SHAVE)
        server.script(answer("Shaving increased infection [1]."))
        assert not answerer.ask(SHAVE).cache_hit


@pytest.mark.parametrize(
    ("claim", "block", "problem"),
    [
        (
            "Sugammadex 4 mg/kg reversed a moderate rocuronium block within 3 minutes",
            "sgx",
            "states 4 mg/kg, which",
        ),
        (
            "Sugammadex 2 mg/kg reversed a moderate rocuronium block within 3 minutes",
            "shave",
            "does not support",
        ),
        (
            "Sugammadex 2 mg/kg reversed a moderate rocuronium block within 3 minutes in 1200 patients",
            "sgx",
            None,
        ),
    ],
    ids=["wrong dose", "wrong block", "correct"],
)
def test_each_llm_claim_is_checked_against_the_passage_it_cites(
    engine: Engine, claim: str, block: str, problem: str | None
) -> None:
    with OpenAIServer() as server:
        answerer = _llm(engine, server)
        pending = answerer.prepare(SUGAMMADEX, use_cache=False)
        n = {r.chunk.doc_id: r.rank for r in pending.response.results}[block]
        server.script(answer(f"{claim} [{n}]."))
        result = answerer.finish(pending)
    (sentence,) = result.sentences
    assert sentence.supported is (problem is None) and result.unsupported == (problem is not None)
    assert problem is None or problem in (sentence.problem or ""), sentence.problem


@contextmanager
def home_of(tmp_path: Path, engine: Engine, documents: list[dict[str, Any]]) -> Iterator[Engine]:
    """A home of its own holding `documents` (library JSONL rows), ingested and indexed."""
    library = tmp_path / "lib.jsonl"
    library.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    with Engine.open(engine.settings.model_copy(update={"home": tmp_path / "data"})) as home:
        Ingestor(home.catalogue, ChunkingConfig()).ingest_file(library)
        home.sync()
        yield home


def floor_answerer(home: Engine) -> Answerer:
    """The home's answerer with the uncalibrated abstention floor: a library this small calibrates nothing."""
    return replace(home.answerer(MemoryCache(16)), abstainer=Abstainer())


def test_an_answers_sources_are_numbered_one_per_document_without_gaps(
    tmp_path: Path, engine: Engine
) -> None:
    """Whatever evidence numbers the LLM cites, the reader sees [1], [2], … in order of first use,
    one per document, in the stream as in the record."""
    review = {"doc_id": "pubmed-1", "title": None, "doc_type": "journal-abstract", "topics": ["Hair Removal"],
              "sections": [{"heading": "Results", "paragraphs": [
                  "Shaving the incision site before surgery increased surgical site infection."]},
                           {"heading": "Conclusions", "paragraphs": [
                  "Clipping hair before surgery did not increase surgical site infection."]}]}  # fmt: skip
    other = {"doc_id": "txa", "title": "Tranexamic acid", "sections": [{"paragraphs": [DOCS[2][2]]}]}
    with home_of(tmp_path, engine, [review, other]) as home, OpenAIServer() as server:
        server.script(answer("Shaving increased infection [3]. ", "Clipping did not [2][1]. Nor [1-3]."))
        deltas: list[str] = []
        result = _llm(home, server).ask("Does shaving before surgery increase infection?",
                                        on_delta=deltas.append)  # fmt: skip
    assert "".join(deltas) == result.answer
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", result.answer)]
    assert numbers[0] == 1 and set(numbers) == {c.n for c in result.citations} == set(
        range(1, max(numbers) + 1)
    )
    by_document = {c.doc_id: c.n for c in result.citations}
    assert len(by_document) == max(numbers)  # one number per document
    assert sum(c.doc_id == "pubmed-1" for c in result.citations) == 2  # both passages, under one number


def test_a_yes_no_answer_hears_the_first_sources_conclusion_the_search_did_not_rank(
    tmp_path: Path, engine: Engine
) -> None:
    """One result is all the evidence (k=1): the study's Results, which match the question's words
    best. Its Conclusions, which say what it found as a whole, are read from the catalogue and quoted."""
    results = ("Infection after spinal surgery occurred in 5% of patients whose incision site was shaved "
               "before spinal surgery and in 4% of those whose incision site was not shaved.")  # fmt: skip
    conclusion = "Razor preparation of the operative field is not associated with wound sepsis."
    study = {"doc_id": "pubmed-7", "title": "Shaving before spinal surgery", "doc_type": "journal-abstract",
             "sections": [{"heading": "Results", "paragraphs": [results]},
                          {"heading": "Conclusions", "paragraphs": [conclusion]}]}  # fmt: skip
    with home_of(tmp_path, engine, [study]) as home:
        answerer = floor_answerer(home)
        question = (
            "Does shaving the incision site before spinal surgery increase infection after spinal surgery?"
        )
        searched = answerer.retriever.search(question, k=1)
        assert conclusion not in searched.results[0].chunk.body  # the search ranks the Results first
        result = answerer.ask(question, k=1, use_cache=False)
        assert conclusion in result.answer, result.answer
        assert any(conclusion in c.text for c in result.citations)
        # Another kind of question keeps to the evidence ranked for it.
        listed = answerer.ask("What were the infection rates after shaving before spinal surgery?", k=1)
        assert conclusion not in listed.answer


def test_a_study_the_search_found_by_its_methods_answers_with_its_conclusion(
    tmp_path: Path, engine: Engine
) -> None:
    """The search's one result (k=1) is a trial's Methods, which an answer never quotes: the answer
    quotes the trial's Conclusions, read from the catalogue, rather than having nothing to say."""
    methods = "Eighty-seven patients with trigeminal neuralgia were randomised to one or two isocentres."
    conclusion = (
        "Treating a longer length of nerve in radiosurgery for trigeminal neuralgia does not improve "
        "pain relief but adds facial numbness."
    )
    study = {"doc_id": "pubmed-8", "title": "", "doc_type": "journal-abstract",
             "sections": [{"heading": "Methods", "paragraphs": [methods]},
                          {"heading": "Conclusions", "paragraphs": [conclusion]}]}  # fmt: skip
    with home_of(tmp_path, engine, [study]) as home:
        answerer = floor_answerer(home)
        question = "Radiosurgery for trigeminal neuralgia with one or two isocentres: which is better?"
        assert [r.chunk.body for r in answerer.retriever.search(question, k=1).results] == [methods]
        result = answerer.ask(question, k=1, use_cache=False)

    assert result.answer.startswith(conclusion), result.answer
    assert [c.text for c in result.citations] == [conclusion]


def test_a_sentence_ten_pages_carry_word_for_word_gives_way_to_what_the_page_says(
    tmp_path: Path, engine: Engine
) -> None:
    """An NIH-style library: every condition page explains its symptom table in the same words,
    which match "signs or symptoms" better than the page's own description does."""
    template = "In these cases, the sign or symptom may be rare or common."
    own = "Infants with achondrogenesis have a small body, short arms and legs, and a narrow chest."
    conditions = ["achondrogenesis", *(f"skeletal dysplasia type {n}" for n in range(1, TEMPLATE_PAGES))]
    pages = [
        {"doc_id": f"gard-{n}", "title": name.capitalize(), "doc_type": "patient-information",
         "sections": [{"heading": "Symptoms", "paragraphs": [
             f"{own if n == 0 else f'People with {name} have short bones.'} {template}"]}]}
        for n, name in enumerate(conditions)
    ]  # fmt: skip
    with home_of(tmp_path, engine, pages) as home:
        result = floor_answerer(home).ask("What are the signs or symptoms of achondrogenesis?", k=1)

    assert own in result.answer and template not in result.answer, result.answer
