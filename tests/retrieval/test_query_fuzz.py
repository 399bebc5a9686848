"""Hostile questions: any text through the temporal parser and the query reading, and through a real
Retriever and Answerer (100 KB, control characters, only punctuation, query syntax). Each gives a sane
result or a clear QuestionError; the CLI says why and exits 2 before loading any model."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.answer.pipeline import Answerer
from evidenceqa.retrieval.query_class import classify, clinical_terms
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.retrieval.retriever import Retriever
from evidenceqa.retrieval.temporal import parse_temporal, scoped
from tests.conftest import indexed_engine

TODAY = date(2026, 11, 29)
LIMIT = 2000  # the max_question_chars default
# Words the temporal rules react to, so random sentences of them reach the rules' corners.
VOCABULARY = (
    "since before after until between from to and or in the last past recent latest current new "
    "guidelines studies trial published 5 five ten decade decades years year 1990s 2010 2015 2019 "
    "2021 2090 1850 - – , ? . onwards later earlier prior pre- post- mg patients this WHO SSI"
).split()
CONTROL = "".join(map(chr, [*range(0x00, 0x20), *range(0x7F, 0xA0)]))
HOSTILE = [
    "?!.,;:()[]{}…",
    "\x00\x1b[31mDoes shaving\x07 increase infection?\x00",
    'title:shave AND (infection OR "spinal*) ~2 \\ ^3',
    "'; DROP TABLE chunks; --",
    "שְׁלוֹם ‮ 👩‍⚕️ ç̧̧ \u200b\u2028 Does shaving increase infection?",
    "since 2015 " * 150,
    "x" * LIMIT,
]
DOCS = [
    ("shave", 2007, "Shaving the incision site before spinal surgery increased the rate of infection."),
    ("chg", 2015, "Chlorhexidine gluconate should not be used on mucous membranes."),
]


def _bounded(year: int | None) -> bool:
    return year is None or TODAY.year - 250 <= year <= TODAY.year + 2


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=300), st.lists(st.sampled_from(VOCABULARY), max_size=30).map(" ".join),
                 st.text(alphabet=CONTROL + "2015 since", max_size=100)))  # fmt: skip
def test_any_text_gives_a_coherent_time_limit(question: str) -> None:
    parsed = parse_temporal(question, TODAY)
    assert _bounded(parsed.year_min) and _bounded(parsed.year_max)
    if parsed.year_min is not None and parsed.year_max is not None:
        assert parsed.year_min <= parsed.year_max
    assert not (parsed.recency and (parsed.year_min or parsed.year_max))
    assert (parsed.phrase is None) == (parsed.text == question)
    assert isinstance(parsed.describe(), str) and parsed.filters() is not None
    assert scoped(parsed, question).describe()
    assert classify(question) in ("definition", "guideline", "clinical-specific", "general")
    assert isinstance(clinical_terms(question), list)


@pytest.mark.parametrize("unit", ["since 2015 and ", "2010-2015 ", "in the last 5 years ", "recent guidelines ",
                                  "what is ", "?!.,", "x"])  # fmt: skip
def test_a_100_kb_question_is_read_in_linear_time(unit: str) -> None:
    question = (unit * (100_000 // len(unit) + 1))[:100_000]
    started = time.perf_counter()
    parse_temporal(question, TODAY)
    classify(question)
    clinical_terms(question)
    # Linear: well under a second on one core (was 4 s when overlaps were checked pairwise).
    assert time.perf_counter() - started < 5


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=LIMIT + 20))
def test_a_question_is_cleaned_or_refused_clearly(question: str) -> None:
    try:
        cleaned = clean_question(question, LIMIT)
    except QuestionError as exc:
        assert str(exc) == "the question is empty" or str(exc).startswith(
            f"the question is {len(question):,}"
        )
        return
    assert cleaned and cleaned == cleaned.strip() and len(cleaned) <= LIMIT
    assert not any(c in CONTROL.replace("\t", "").replace("\n", "") for c in cleaned)


def test_the_limit_error_names_the_setting() -> None:
    with pytest.raises(QuestionError, match=r"^the question is 100,000 characters long; the limit is 2,000 "
                                            r"\(setting max_question_chars\)$"):  # fmt: skip
        clean_question("x" * 100_000, LIMIT)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    with indexed_engine(tmp_path_factory.mktemp("hostile"), DOCS, models_dir) as opened:
        yield opened


@pytest.fixture(scope="module")
def retriever(engine: Engine) -> Retriever:
    return engine.retriever(today=TODAY)


@pytest.fixture(scope="module")
def answerer(engine: Engine) -> Answerer:
    return engine.answerer(MemoryCache(100), today=TODAY)


@pytest.mark.parametrize("question", HOSTILE)
def test_hostile_questions_get_a_sane_search_and_answer(
    retriever: Retriever, answerer: Answerer, question: str
) -> None:
    response = retriever.search(question, mode="hybrid")
    assert [r.rank for r in response.results] == list(range(1, len(response.results) + 1))
    assert response.question == clean_question(question, LIMIT)
    answer = answerer.ask(question)
    assert answer.question == response.question  # what is stored carries no control characters
    assert answer.abstained or all(c.doc_id in {d for d, _, _ in DOCS} for c in answer.citations)


@pytest.mark.parametrize(
    ("question", "reason"), [("x" * 100_000, "100,000 characters"), (" \x00\x1b\t", "empty")]
)
def test_overlong_and_empty_questions_are_refused_before_any_work(
    retriever: Retriever, answerer: Answerer, question: str, reason: str
) -> None:
    with pytest.raises(QuestionError, match=reason):
        retriever.search(question)
    with pytest.raises(QuestionError, match=reason):
        answerer.ask(question)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(question=st.text(min_size=1, max_size=200), mode=st.sampled_from(["hybrid", "bm25", "dense"]))
def test_any_question_searches_or_is_refused(retriever: Retriever, question: str, mode: str) -> None:
    try:
        response = retriever.search(question, mode=mode)
    except QuestionError:  # only a question of blanks and control characters (it is never too long here)
        assert not "".join(c for c in question if c not in CONTROL).strip()
        return
    assert {r.chunk.doc_id for r in response.results} <= {d for d, _, _ in DOCS}


@pytest.mark.parametrize("command", ["ask", "search"])
def test_the_cli_refuses_an_overlong_question_with_the_reason(tmp_path: Path, command: str) -> None:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "evidenceqa", "--home", str(tmp_path), command, "x" * 100_000],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2
    assert (
        "error: the question is 100,000 characters long; the limit is 2,000 (setting max_question_chars)"
        in (" ".join(result.stderr.split()))
    )
    assert not (tmp_path / "catalogue.sqlite3").exists()  # refused before the library was opened
    assert time.perf_counter() - started < 60
