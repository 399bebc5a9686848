"""Hybrid retrieval: a question in, ranked chunks out, with what was done to get them.

question ─▶ temporal phrase → year filter (or recency boost); a phrase about the evidence
            ("studies since 2015") is removed from the text, one about events ("in 2010, how
            many cases…") stays and only rules out evidence older than the event
         ─▶ abbreviation expansion from the library's own vocabulary, then clinical shorthand it
            never defines (keyword side)
         ─▶ keyword (BM25 on analysed terms) and dense (embedding) search, pre-filtered in the engine
         ─▶ fusion (RRF or weighted, dense weight alpha from the settings, the seed's rules or a
            learned per-class table; alpha = "adaptive": per question, in the fusion its model was
            fitted for)
         ─▶ optionally a second stage: a cross-encoder re-scores the top candidates (evidenceqa.retrieval.rerank)
         ─▶ chunks from the catalogue
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, field_validator

from evidenceqa import evidence_types
from evidenceqa.documents import Chunk
from evidenceqa.embeddings.base import Embedder
from evidenceqa.home import HomeOptions
from evidenceqa.index.base import CONTENT_LEVELS, Filters, Hit, SearchBackend
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.versions import Successor
from evidenceqa.library.vocabulary import Vocabulary
from evidenceqa.retrieval.adaptive import AdaptiveAlpha, idf_mass, query_signals
from evidenceqa.retrieval.fusion import Fusion, dense_weights, fuse
from evidenceqa.retrieval.query_class import classify, learned_alpha, rule_alpha
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.retrieval.rerank import CrossEncoder, blend
from evidenceqa.retrieval.temporal import Temporal, parse_temporal, scoped
from evidenceqa.retrieval.unknown import unknown_names
from evidenceqa.text.tokens import analyze

SearchMode = Literal["hybrid", "bm25", "dense"]
# The best fixed dense weight on the development sets (docs/retrieval.md). A query class the learned
# table does not cover takes it. And abstention's signals (evidenceqa.answer.abstain), which read the
# top evidence, read it as fused at this weight under adaptive fusion: a weight that moves per
# question moves which chunks sit on top, and the signals then separated gap questions less well.
FIXED_ALPHA = 0.3
# How much a recency question lifts the newest candidate over the oldest (score × (1 + boost)).
RECENCY_BOOST = 0.5
# How much "prefer stronger evidence" lifts a guideline (score × 1.3); each weaker rank is lifted
# less, a narrative review a sixth as much, and unranked types (patient information, other) not
# at all. A preference, not a filter: a much better match of a weaker type still ranks first.
EVIDENCE_BOOST = 0.3
# A recency question ("current guidance on …") asks for the edition in force: a superseded one keeps
# this share of its score, so it ranks below the version that replaced it unless that one is a far
# worse match.
SUPERSEDED_SCORE = 0.5


@dataclass
class SearchResult:
    rank: int
    chunk: Chunk
    score: float
    ranks: dict[str, int]  # retriever → rank at which it found this chunk
    superseded_by: Successor | None = None  # the newer version that replaces this chunk's document

    def to_dict(self) -> dict[str, Any]:
        """One result as `search --json`, the batch file and the API write it."""
        chunk = self.chunk
        return {
            "rank": self.rank,
            "chunk_id": chunk.chunk_id,
            "doc_id": chunk.doc_id,
            "title": chunk.title,
            "section": " > ".join(chunk.section_path),
            "hierarchy_level": chunk.hierarchy_level,
            "year": chunk.year,
            "evidence_type": chunk.evidence_type,
            "text": chunk.body,
            "score": round(self.score, 6),
            "found_by": self.ranks,
            "superseded_by": asdict(self.superseded_by) if self.superseded_by else None,
        }


@dataclass
class SearchResponse:
    question: str
    query_text: str  # what was embedded: the question without its temporal phrase
    keyword_terms: str  # what BM25 searched: analysed text plus vocabulary expansions
    mode: SearchMode
    filters: dict[str, object]  # every filter applied, user's and parsed
    temporal: str | None  # how a temporal phrase was read, if there was one
    expansions: list[tuple[str, str]]
    query_class: str
    alpha: float | None
    results: list[SearchResult]
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Best raw score per retriever (BM25, cosine): fused scores only rank within one question, so
    # whether the library holds an answer at all is judged on these (evidenceqa.answer.abstain).
    top_scores: dict[str, float] = field(default_factory=dict)
    # Each retriever's raw score at depth 10 (at its last hit when it found fewer): an answerable
    # question tends to have a clear winner, so top ÷ tenth is another adequacy signal.
    tenth_scores: dict[str, float] = field(default_factory=dict)
    # What decided the dense weight when alpha = "adaptive" (evidenceqa.retrieval.adaptive); else empty.
    signals: dict[str, float] = field(default_factory=dict)
    # The evidence abstention judges when it is not `results`: with alpha = "adaptive", the results
    # as fused at FIXED_ALPHA.
    adequacy_results: list[SearchResult] | None = None
    # The question's words that name something the library never mentions (evidenceqa.retrieval.unknown).
    unknown_names: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The response as `search --json` and the API write it (what was searched, how, and the results)."""
        return {
            "question": self.question,
            "query_text": self.query_text,
            "mode": self.mode,
            "filters": self.filters,
            "temporal": self.temporal,
            "expansions": [list(pair) for pair in self.expansions],
            "query_class": self.query_class,
            "alpha": self.alpha,
            "timings_ms": self.timings_ms,
            "results": [result.to_dict() for result in self.results],
        }


ALPHA_CHOICES = "alpha is a number from 0 to 1, 'rules', 'learned' or 'adaptive'"


class RetrievalOptions(HomeOptions):
    search_k: int = Field(10, ge=1, le=1000)
    # How a fixed `alpha` fuses: weighted (min-max) fusion at dense weight 0.3 beat BM25 alone, dense
    # alone, RRF and the seed's rules on every development benchmark (docs/retrieval.md). The
    # adaptive model brings its own fusion.
    fusion: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = Field(60, ge=1)
    fusion_depth: int = Field(100, ge=1, le=10000)
    # Weight of the dense retriever: "adaptive" (per question, from signals of its own two result
    # lists: evidenceqa.retrieval.adaptive; left out of its fit, each development benchmark ranks
    # better with it than with the best fixed weight, docs/retrieval.md), a number from 0 to 1 (0.3:
    # that fixed weight), "rules" (the seed's query rules) or "learned" (per query class, from
    # `alpha.json` in the data home).
    alpha: str = "adaptive"
    # The second stage (evidenceqa.retrieval.rerank): "off", or a folder holding a cross-encoder trained by
    # `evidenceqa train-reranker`. It re-scores the top `rerank_depth` fused candidates, blending
    # its score with the fused one by `rerank_weight` (0: the first-stage order).
    rerank: str = "off"
    rerank_depth: int = Field(20, ge=1, le=200)
    rerank_weight: float = Field(0.5, ge=0.0, le=1.0)
    max_question_chars: int = Field(2000, ge=10, le=100_000)  # longer: a clear error (API: 422)

    @field_validator("alpha")
    @classmethod
    def _alpha_is_known(cls, value: str) -> str:
        if value in ("rules", "learned", "adaptive"):
            return value
        try:
            number = float(value)
        except ValueError:
            raise ValueError(ALPHA_CHOICES) from None
        if not 0.0 <= number <= 1.0:
            raise ValueError(ALPHA_CHOICES)
        return value


class Retriever:
    def __init__(
        self,
        settings: RetrievalOptions,
        catalogue: Catalogue,
        backend: SearchBackend,
        embedder: Embedder,
        vocabulary: Vocabulary | None = None,
        today: date | None = None,
    ) -> None:
        self.settings = settings
        self.catalogue = catalogue
        self.backend = backend
        self.embedder = embedder
        self.vocabulary = vocabulary if vocabulary is not None else Vocabulary()  # an empty one is falsy
        self.today = today or date.today()
        self.alpha_table = (
            _load_alpha_table(settings.home / "alpha.json") if settings.alpha == "learned" else {}
        )
        self.adaptive = AdaptiveAlpha.load() if settings.alpha == "adaptive" else None
        self.reranker = CrossEncoder(Path(settings.rerank)) if settings.rerank != "off" else None
        # A hybrid search's keyword half runs on this thread while the dense half is searched, where
        # the backend allows both at once (docs/performance.md).
        self._keyword_thread: ThreadPoolExecutor | None = None

    def search(
        self,
        question: str,
        k: int | None = None,
        mode: SearchMode = "hybrid",
        filters: Filters | None = None,
        level: Literal["content", "document"] = "content",
        temporal: bool = True,
    ) -> SearchResponse:
        if mode not in get_args(SearchMode):  # else no list is searched and nothing is found, silently
            raise ValueError(f"search mode {mode!r}: one of {', '.join(get_args(SearchMode))}")
        k = k or self.settings.search_k
        clock = _Clock()
        question = clean_question(
            question, self.settings.max_question_chars
        )  # QuestionError: empty, too long
        parsed = (
            scoped(parse_temporal(question, self.today), question) if temporal else Temporal(text=question)
        )
        applied, parsed = _with_years(filters or Filters(), parsed, level)
        expansion = self.vocabulary.expand(parsed.text)
        terms = analyze(expansion.text)
        unknown = unknown_names(parsed.text, self.catalogue, [short for short, _ in expansion.added])
        clock.lap("parse")
        query_class = classify(parsed.text)
        lists = self._lists(parsed, terms, mode, applied, k, clock)
        signals, scales = (
            self.adaptive_inputs(lists, terms) if mode == "hybrid" and self.adaptive else ({}, {})
        )
        alpha = (
            None
            if mode != "hybrid"
            else self.adaptive.alpha(signals)
            if self.adaptive
            else self._alpha(query_class)
        )
        hits = self._ordered(lists, mode, alpha, scales, parsed, applied, self.adaptive)
        chunks: dict[str, Chunk] = {}
        if self.reranker is not None and mode == "hybrid":
            hits, chunks = self._reranked(self.reranker, parsed.text, hits)
            clock.lap("rerank")
        results = self._results(hits[:k], chunks)
        adequacy = None
        if self.adaptive and mode == "hybrid":
            fixed = self._ordered(lists, mode, FIXED_ALPHA, {}, parsed, applied, model=None)
            adequacy = self._results(fixed[:k], {result.chunk.chunk_id: result.chunk for result in results})
        clock.lap("fetch")
        return SearchResponse(
            question=question,
            query_text=parsed.text,
            keyword_terms=terms,
            mode=mode,
            filters=applied.describe(),
            temporal=parsed.describe() if parsed.phrase else None,
            expansions=list(expansion.added),
            query_class=query_class,
            alpha=alpha,
            results=results,
            timings_ms=clock.laps,
            signals=signals,
            adequacy_results=adequacy,
            top_scores={name: hits[0].score for name, hits in lists.items() if hits},
            tenth_scores={name: hits[:10][-1].score for name, hits in lists.items() if hits},
            unknown_names=unknown,
        )

    def _lists(self, parsed: Temporal, terms: str, mode: SearchMode, filters: Filters,
               k: int, clock: _Clock) -> dict[str, list[Hit]]:  # fmt: skip
        """Each retriever's candidates, best first: deep enough to fuse, or to re-rank by recency or
        evidence type."""
        reordered = parsed.recency or filters.prefer_evidence
        depth = self.settings.fusion_depth if mode == "hybrid" or reordered else k
        lists: dict[str, list[Hit]] = {}
        keyword: Future[list[Hit]] | None = None
        if mode in ("hybrid", "dense"):
            vector = self.embedder.embed_query(parsed.text)  # on every core: nothing beside it
            clock.lap("embed")
            if mode == "hybrid" and terms and getattr(self.backend, "concurrent_search", False):
                if self._keyword_thread is None:
                    self._keyword_thread = ThreadPoolExecutor(1, thread_name_prefix="keyword-search")
                keyword = self._keyword_thread.submit(self.backend.search_keyword, terms, depth, filters)
            lists["dense"] = self.backend.search_dense(vector, depth, filters)
        if keyword is not None:
            lists["keyword"] = keyword.result()
        elif mode in ("hybrid", "bm25") and terms:
            lists["keyword"] = self.backend.search_keyword(terms, depth, filters)
        clock.lap("search")
        return lists

    def adaptive_inputs(
        self, lists: dict[str, list[Hit]], terms: str
    ) -> tuple[dict[str, float], dict[str, float]]:
        """What the adaptive weight reads of one question's two lists (evidenceqa.retrieval.adaptive),
        and what score-distribution fusion divides each list's scores by (BM25: the question's idf mass)."""
        query_terms = terms.split()
        best = [hits[0].chunk_id for hits in lists.values() if hits]
        top_terms = {
            cid: set(analyze(chunk.text).split()) for cid, chunk in self.catalogue.get_chunks(best).items()
        }
        term_df = self.catalogue.term_frequencies(query_terms)
        signals = query_signals(lists, query_terms, term_df, top_terms)
        return signals, {"keyword": idf_mass(query_terms, term_df)}

    def _ordered(self, lists: dict[str, list[Hit]], mode: SearchMode, alpha: float | None,
                 scales: dict[str, float], parsed: Temporal, applied: Filters,
                 model: AdaptiveAlpha | None) -> list[Hit]:  # fmt: skip
        """The candidates fused (as the adaptive `model` says, or without one by the settings' fixed
        fusion) and lifted (recency, stronger evidence), best first."""
        hits = self._ranked(lists, mode, alpha, scales, parsed.recency or applied.prefer_evidence, model)
        if parsed.recency:
            hits = _current_first(_boost_recent(hits, self.catalogue), self.catalogue)
        if applied.prefer_evidence:
            hits = _prefer_evidence(hits, self.catalogue)
        return hits

    def _ranked(self, lists: dict[str, list[Hit]], mode: SearchMode, alpha: float | None,
                scales: dict[str, float], reordered: bool, model: AdaptiveAlpha | None) -> list[Hit]:  # fmt: skip
        """The fused candidates, best first; `reordered`: a recency or evidence lift follows."""
        if mode != "hybrid":
            hits = next(iter(lists.values()), [])
            for rank, hit in enumerate(hits, start=1):
                hit.ranks = {"dense" if mode == "dense" else "keyword": rank}
            return hits
        weight = alpha if alpha is not None else 0.5
        depth = self.settings.fusion_depth
        if model is None:
            fusion = Fusion(self.settings.fusion, weight, self.settings.rrf_k, depth)
        elif not reordered:
            fusion = model.fusion_of(weight, depth, self.settings.rrf_k)
        else:
            # The lifts multiply fused scores and were set on min-max ones: a score distribution can
            # be so peaked that no lift reorders it, so the question's weight fuses min-max scores.
            fusion = Fusion("weighted", weight, self.settings.rrf_k, depth)
        return fuse(lists, dense_weights(fusion.alpha), fusion, fusion.depth, scales)

    def _alpha(self, query_class: str) -> float:
        setting = self.settings.alpha
        if setting == "rules":
            return rule_alpha(query_class)
        if setting == "learned":
            return learned_alpha(query_class, self.alpha_table, default=FIXED_ALPHA)
        return float(setting)

    def _reranked(
        self, reranker: CrossEncoder, question: str, hits: list[Hit]
    ) -> tuple[list[Hit], dict[str, Chunk]]:
        """The top `rerank_depth` re-scored by the cross-encoder (on the text each chunk was embedded
        with: title and section path included), the rest after them in first-stage order."""
        top = hits[: self.settings.rerank_depth]
        chunks = self.catalogue.get_chunks([hit.chunk_id for hit in top])
        top = [hit for hit in top if hit.chunk_id in chunks]
        logits = reranker.score(question, [chunks[hit.chunk_id].text for hit in top])
        return blend(top, logits, self.settings.rerank_weight) + hits[self.settings.rerank_depth :], chunks

    def _results(self, hits: Sequence[Hit], fetched: dict[str, Chunk]) -> list[SearchResult]:
        missing = [hit.chunk_id for hit in hits if hit.chunk_id not in fetched]
        chunks = {**fetched, **self.catalogue.get_chunks(missing)} if missing else fetched
        replaced = self.catalogue.superseded_by(hit.doc_id for hit in hits)
        return [
            SearchResult(
                rank=rank,
                chunk=chunks[hit.chunk_id],
                score=hit.score,
                ranks=dict(hit.ranks),
                superseded_by=replaced.get(hit.doc_id),
            )
            for rank, hit in enumerate((h for h in hits if h.chunk_id in chunks), start=1)
        ]


def _with_years(filters: Filters, parsed: Temporal, level: str) -> tuple[Filters, Temporal]:
    """The user's filters narrowed by the question's years; an explicit user bound wins, and where
    the question's years contradict the user's ("before 2019" with a filter from 2022), the
    user's alone apply (and the question's years are returned as not applied). Bounds that hold no
    year are refused (QuestionError), never searched."""
    levels = ("document",) if level == "document" else filters.levels or CONTENT_LEVELS
    applied = replace(
        filters,
        levels=levels,
        year_min=filters.year_min if filters.year_min is not None else parsed.year_min,
        year_max=filters.year_max if filters.year_max is not None else parsed.year_max,
    )
    if problem := filters.year_problem():
        raise QuestionError(problem)
    if applied.year_problem():
        applied = replace(applied, year_min=filters.year_min, year_max=filters.year_max)
        parsed = replace(parsed, year_min=None, year_max=None, overruled=True)
    return applied, parsed


def _boost_recent(hits: list[Hit], catalogue: Catalogue) -> list[Hit]:
    years = catalogue.chunk_years([hit.chunk_id for hit in hits])
    known = [y for y in years.values() if y is not None]
    if len(set(known)) < 2:
        return hits
    oldest, newest = min(known), max(known)
    lifts = {c: (y - oldest) / (newest - oldest) for c, y in years.items() if y is not None}
    return _lifted(hits, lifts, RECENCY_BOOST)


def _current_first(hits: list[Hit], catalogue: Catalogue) -> list[Hit]:
    """The candidates with every superseded edition's score × SUPERSEDED_SCORE."""
    replaced = catalogue.superseded_by(hit.doc_id for hit in hits)
    if not replaced:
        return hits
    for hit in hits:
        if hit.doc_id in replaced:
            hit.score *= SUPERSEDED_SCORE
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))


def _prefer_evidence(hits: list[Hit], catalogue: Catalogue) -> list[Hit]:
    weakest = max(t.rank for t in evidence_types.TYPES)
    ranks = {t.key: t.rank for t in evidence_types.TYPES}
    lifts = {
        chunk_id: (weakest + 1 - rank) / weakest
        for chunk_id, kind in catalogue.chunk_evidence_types([hit.chunk_id for hit in hits]).items()
        if (rank := ranks.get(kind or "", 0))
    }
    return _lifted(hits, lifts, EVIDENCE_BOOST)


def _lifted(hits: list[Hit], lifts: dict[str, float], boost: float) -> list[Hit]:
    """Each score × (1 + boost × its chunk's lift, 0–1), best first."""
    for hit in hits:
        hit.score *= 1 + boost * lifts.get(hit.chunk_id, 0.0)
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))  # ties: the same order on every backend


def _load_alpha_table(path: Path) -> dict[str, float]:
    """Per query class dense weights, learned by `benchmarks/fusion_grid.py --write-alpha`."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
        return {str(name): float(value) for name, value in table.items()}
    except FileNotFoundError:
        raise ValueError(
            f"alpha = 'learned' needs the per-class table {path}: "
            f"run benchmarks/fusion_grid.py --home {path.parent} --write-alpha {path} BENCHMARK..."
        ) from None
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError(f"{path}: not a table of query class → dense weight ({exc})") from None


class _Clock:
    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._last = self._start = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round((now - self._last) * 1000, 2)
        self.laps["total"] = round((now - self._start) * 1000, 2)
        self._last = now
