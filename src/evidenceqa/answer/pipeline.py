"""A question in, a checked and cited answer out: cache → retrieve → adequacy → generate → check.

The CLI and the web app both call `Answerer.ask`; everything an answer record holds (citations with
their exact supporting text, filters, per-stage timings and cost, cache hit, index version) is
assembled here, once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field

from evidenceqa.answer.abstain import Abstainer, LiveCalibration
from evidenceqa.answer.base import Draft, Evidence, GenerationError, Generator, Rewriter, abstention, generate
from evidenceqa.answer.cache import Cache, CacheOptions, cache_key, settings_fingerprint
from evidenceqa.answer.citations import (
    SourceNumbers,
    by_source,
    check,
    citations_for,
    nearest_passages,
    unsupported_count,
)
from evidenceqa.answer.context import announced_list, first_conclusion
from evidenceqa.answer.findings import asks_yes_or_no
from evidenceqa.documents import Chunk
from evidenceqa.index.base import Filters
from evidenceqa.records import Answer, Sentence
from evidenceqa.retrieval.followup import FollowUps, Resolution
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.retrieval.retriever import RetrievalOptions, Retriever, SearchResponse, SearchResult
from evidenceqa.text.sentences import body_sentences

log = logging.getLogger(__name__)

# The stored record's generator column holds 200 characters.
FALLBACK_MARK_CHARS = 200
# How many of the closest passages an abstention shows.
NEAREST = 3
# How many earlier questions an LLM reads to rewrite a follow-up; the rules lean on the last only.
MAX_PREVIOUS = 4


@dataclass(frozen=True)
class Pending:
    """A question searched and not yet answered: what `Answerer.finish` needs to write the answer."""

    question: Resolution
    response: SearchResponse
    version: int
    cache_key: str | None  # None: the answer is not to be cached
    started: float
    # Evidence the search did not rank but the answer must hear (`answer.context`).
    context: list[Chunk] = field(default_factory=list)
    # How many documents carry each sentence of the evidence that more than one does.
    shared: dict[str, int] = field(default_factory=dict)


def current(results: Sequence[SearchResult]) -> list[SearchResult]:
    """The results an answer is written from: an edition that a newer one among them replaces is left
    out, so the answer quotes the guidance in force and never two editions that disagree. Alone, a
    superseded edition stays (its card says what replaced it)."""
    held = {r.chunk.doc_id for r in results}
    return [r for r in results if not (r.superseded_by and r.superseded_by.doc_id in held)]


class AnswererOptions(RetrievalOptions, CacheOptions):
    # How many retrieved chunks the generator sees as numbered evidence (with, where the answer needs
    # it, its first source's conclusion when none of it was retrieved: `context.first_conclusion`).
    evidence_k: int = Field(8, ge=1, le=50)
    # USD per 1,000 tokens, for the cost of each answer; 0 for a local model. Azure prices are set by
    # the deployer (they depend on the resource and deployment), so they are configured here too.
    llm_price_in_per_1k: float = Field(0.0, ge=0)
    llm_price_out_per_1k: float = Field(0.0, ge=0)
    # USD per question for the other paid stages: a hosted embeddings API, a managed vector database.
    embedding_price_per_query: float = Field(0.0, ge=0)
    search_price_per_query: float = Field(0.0, ge=0)


@dataclass
class Answerer:
    settings: AnswererOptions
    retriever: Retriever
    generator: Generator
    cache: Cache
    abstainer: Abstainer = field(default_factory=Abstainer)
    # Where `abstainer` was read from: a refit there is used from the next question on.
    calibration: LiveCalibration | None = None
    index_version: Callable[[], int] = lambda: 0
    followups: FollowUps | None = None  # None: every question is searched as asked

    def ask(
        self,
        question: str,
        filters: Filters | None = None,
        k: int | None = None,
        on_delta: Callable[[str], None] | None = None,
        use_cache: bool = True,
        previous: Sequence[str] = (),
        question_years: bool = True,
    ) -> Answer:
        rewritten = self.rewrite(question, previous)
        found = self.prepare(question, filters, k, on_delta, use_cache, previous, rewritten, question_years)
        return found if isinstance(found, Answer) else self.finish(found, on_delta)

    def prepare(
        self,
        question: str,
        filters: Filters | None = None,
        k: int | None = None,
        on_delta: Callable[[str], None] | None = None,
        use_cache: bool = True,
        previous: Sequence[str] = (),
        rewritten: Resolution | None = None,
        question_years: bool = True,
    ) -> Answer | Pending:
        """The cached answer, or the search an answer is to be written from. `previous`: the
        conversation's earlier questions as they were searched, oldest first; a follow-up is
        resolved against them (`rewritten`, the LLM's rewrite, else by the rules), and the resolved
        question is what is searched and cached. `question_years` False: a year limit in the
        question's own words ("since 2015") is not applied (the reader removed it).

        Split from `rewrite` and `finish` so that a server can search on the thread that owns the
        catalogue and wait on an LLM (seconds) on other threads, many at once.
        """
        started = time.perf_counter()
        # Cleaned before the cache key and the record: what is stored is what was searched.
        asked = clean_question(question, self.settings.max_question_chars)
        if rewritten is not None:
            resolved = rewritten
        elif previous and self.followups is not None:
            resolved = self.followups.resolve(asked, previous)
        else:
            resolved = Resolution(asked, asked)
        version = self.index_version()
        if self.calibration is not None:
            self.abstainer = self.calibration.current(self.abstainer)
        k = k or self.settings.evidence_k
        described = (filters or Filters()).describe() | ({} if question_years else {"question_years": False})
        adaptive = self.retriever.adaptive
        key = cache_key(resolved.question, described, version, settings_fingerprint(self.settings), k,
                        self.abstainer.fingerprint(), adaptive.fingerprint() if adaptive else "",
                        self.retriever.vocabulary.shorthand_fingerprint)  # fmt: skip
        cached = self.cache.get(key) if use_cache else None
        if cached is not None:
            return self._from_cache(cached, resolved, started, on_delta)
        response = self.retriever.search(resolved.question, k=k, filters=filters, temporal=question_years)
        # Read here: `finish` touches no catalogue.
        results = current(response.results)
        catalogue = self.retriever.catalogue
        context = first_conclusion(results, catalogue, asks_yes_or_no(resolved.question))
        context += announced_list(results, catalogue)
        chunks = [*(r.chunk for r in results), *context]
        found = self.retriever.catalogue.sentence_documents(
            s.text for c in chunks for s in body_sentences(c.body)
        )
        shared = {sentence: n for sentence, n in found.items() if n > 1}
        return Pending(resolved, response, version, key if use_cache else None, started, context, shared)

    def searched_forms(self, questions: Sequence[str]) -> list[str]:
        """A conversation's questions as asked (an OpenAI client's history) → as they would have been
        searched, each resolved against those before it by the offline rules (one LLM call per
        question would cost more than the answer). One that could not have been asked (empty, over
        max_question_chars: a pasted document) is left out, not refused: it is not this question."""
        searched: list[str] = []
        for question in questions:
            try:
                text = clean_question(question, self.settings.max_question_chars)
            except QuestionError:
                continue
            searched.append(self.followups.resolve(text, searched).question if self.followups else text)
        return searched

    def rewrite(self, question: str, previous: Sequence[str]) -> Resolution | None:
        """A follow-up rewritten against the conversation by the LLM, where one answers (it reads a
        conversation best); None where none does, or it failed: `prepare` resolves it by the rules.
        Touches no catalogue, so any thread may wait on it."""
        if not previous or self.followups is None or not isinstance(self.generator, Rewriter):
            return None
        limit = self.settings.max_question_chars
        asked = clean_question(question, limit)
        try:
            rewritten = self.generator.rewrite_followup(asked, previous[-MAX_PREVIOUS:])
            return Resolution(clean_question(rewritten, limit), asked, "llm")
        except (GenerationError, ValueError) as exc:  # ValueError: an empty or overlong rewrite
            log.warning("follow-up not rewritten by the LLM (%s); resolved by the rules", type(exc).__name__)
            return None

    def finish(self, pending: Pending, on_delta: Callable[[str], None] | None = None) -> Answer:
        """Write, check and cache the answer; touches no catalogue, so any thread may run it."""
        answer = self._answer(pending, on_delta)
        answer.timings_ms["total"] = _ms_since(pending.started)
        # A stand-in for a failed LLM is not kept: once it is back, its own answer is wanted.
        if pending.cache_key and answer.generator == self.generator.name:
            self.cache.set(pending.cache_key, answer.to_dict(), self.settings.cache_ttl_s)
        return answer

    def _answer(self, pending: Pending, on_delta: Callable[[str], None] | None) -> Answer:
        question, response, shared = pending.question, pending.response, pending.shared
        timings = {name: ms for name, ms in response.timings_ms.items() if name != "total"}
        clock = time.perf_counter()
        evidence = [Evidence(r.rank, r.chunk, r.score, shared) for r in current(response.results)]
        # After the ranked evidence, numbered on; scored as the source it belongs to.
        last = max((item.n for item in evidence), default=0)
        evidence += [
            Evidence(last + i, c, evidence[0].score, shared) for i, c in enumerate(pending.context, 1)
        ]
        judgement = self.abstainer.judge(response, self.retriever.embedder)
        if judgement.abstain:
            draft = abstention(self.generator.name, response.unknown_names)
            if on_delta:
                on_delta(draft.text)
        else:
            numbers = SourceNumbers(evidence)  # what streams is numbered as the record will be
            draft = generate(
                self.generator, question.question, evidence, response.expansions, numbers.streamed(on_delta)
            )
            if on_delta and (rest := numbers.flush()):
                on_delta(rest)
        timings["generate"] = _ms_since(clock)
        clock = time.perf_counter()
        sentences = self._checked(draft, evidence)
        timings["check"] = _ms_since(clock)
        citations = [] if draft.abstained else citations_for(sentences, evidence)
        text, sentences, citations = by_source(draft.text, sentences, citations, evidence)
        return Answer(
            question=question.asked,
            searched_for=question.question if question.changed else None,
            answer=text,
            abstained=draft.abstained,
            citations=citations,
            nearest=nearest_passages(question.question, evidence, NEAREST) if draft.abstained else [],
            sentences=sentences,
            unsupported=unsupported_count(sentences),
            generator=_answered_by(self.generator, draft),
            filters=response.filters,
            temporal=response.temporal,
            timings_ms=timings,
            cost_usd=self._cost(draft),
            usage=draft.usage,
            index_version=pending.version,
            p_answerable=judgement.p_answerable,
        )

    def _checked(self, draft: Draft, evidence: list[Evidence]) -> list[Sentence]:
        """Verbatim extractive sentences are supported by construction; generated ones are checked."""
        if draft.abstained or all(s.supported for s in draft.sentences):
            return draft.sentences
        return check(draft.sentences, evidence, self.retriever.embedder)

    def _cost(self, draft: Draft) -> dict[str, float]:
        settings = self.settings
        cost = {
            "embed": settings.embedding_price_per_query,
            "search": settings.search_price_per_query,
            "generate": (draft.usage.prompt_tokens * settings.llm_price_in_per_1k
                         + draft.usage.completion_tokens * settings.llm_price_out_per_1k) / 1000,
        }  # fmt: skip
        return {**cost, "total": sum(cost.values())}

    def _from_cache(
        self,
        cached: dict[str, Any],
        question: Resolution,
        started: float,
        on_delta: Callable[[str], None] | None,
    ) -> Answer:
        answer = Answer.from_dict(cached)
        if on_delta:
            on_delta(answer.answer)
        # A cached answer costs nothing again and takes only the lookup.
        zero = dict.fromkeys(answer.cost_usd, 0.0)
        return replace(
            answer,
            question=question.asked,  # the same search, asked in this conversation's words
            searched_for=question.question if question.changed else None,
            cache_hit=True,
            cost_usd=zero,
            timings_ms={"cache": _ms_since(started), "total": _ms_since(started)},
        )


def _answered_by(generator: Generator, draft: Draft) -> str:
    """The generator's name, or the mark of a stand-in: "extractive (fallback from llm:gpt-4o)"."""
    if draft.fallback_from is None:
        return generator.name
    return f"{draft.model} (fallback from {draft.fallback_from})"[:FALLBACK_MARK_CHARS]


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
