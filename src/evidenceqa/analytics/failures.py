"""Why an answer failed: a category, with the evidence behind it, for every poorly rated or abstained
answer (`metrics.is_failure`).

Three searches probe the library for the question now, and the abstention model judges each:
- re-run: the question as the pilot asks it (its own time limit), at the answer's evidence depth;
- wider: many more results, and no time limit;
- document level: the documents' overview chunks (title, topics, abstract), no time limit.
A probe has found something relevant when the abstention model would answer from it (p_answerable
at or above the threshold; without a calibration, the permissive floor) and its top three results
hold at least half of the question's terms (the model's `coverage` signal: a document on the topic,
not just on neighbouring words). Its best document is the library's candidate. Then, first match wins:

1. missing content: no probe finds anything relevant: the best scores are below the abstention
   threshold, or no document covers the question's topic.
2. temporal: the question sets a time limit ("since 2020", "latest guideline"): the library has
   the topic, and the limit is the first suspect. (Checked after 1: a question on a topic the library
   lacks needs content, whatever its dates.)
3. retrieval mismatch: a probe's best document is one the answer did not cite (an abstained answer
   cited none): the library has it, the answer did not surface it.
4. edge case: the library's best documents were cited, and the answer was still rated poorly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any, Literal

from evidenceqa.analytics.metrics import is_failure
from evidenceqa.analytics.rows import Exchange
from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.engine import Engine
from evidenceqa.embeddings.base import Embedder
from evidenceqa.retrieval.retriever import Retriever, SearchResponse
from evidenceqa.retrieval.temporal import parse_temporal
from evidenceqa.store import Store, failure_labels, save_automatic_label

Category = Literal["missing_content", "retrieval_mismatch", "temporal", "edge_case"]
CATEGORY_NAMES: dict[str, str] = {
    "missing_content": "Missing content",
    "retrieval_mismatch": "Retrieval mismatch",
    "temporal": "Temporal",
    "edge_case": "Edge case",
}
WIDE_K = 50  # results of the wider searches: several times the evidence an answer sees
DOCS_SHOWN = 3  # documents of each probe kept as evidence
# Share of the question's terms its top results must hold to be on its topic. On the sample library,
# questions whose source is absent reach 0.25-0.45, those whose source is present mostly 0.5-0.9.
MIN_COVERAGE = 0.5


@dataclass(frozen=True)
class FoundDocument:
    doc_id: str
    title: str | None
    year: int | None
    rank: int  # the rank of its best chunk in the probe's results


@dataclass(frozen=True)
class Probe:
    """One search for the question now, and whether the abstention model would answer from it."""

    name: str  # "re-run", "wider", "document level"
    relevant: bool  # the abstention model would answer from these results, and they are on topic
    p_answerable: float | None  # None without a calibration (the floor decides)
    signals: dict[str, float]
    documents: tuple[FoundDocument, ...]  # best first
    time_limit: str | None  # how the question's time phrase was applied, if it was


@dataclass(frozen=True)
class Diagnosis:
    category: Category
    reason: str  # one sentence for the admin
    evidence: dict[str, Any]  # JSON-able: the probes and the facts the category rests on


def documents_of(response: SearchResponse, limit: int = DOCS_SHOWN) -> tuple[FoundDocument, ...]:
    """The distinct documents of a search, best first."""
    found: dict[str, FoundDocument] = {}
    for result in response.results:
        chunk = result.chunk
        if chunk.doc_id not in found:
            found[chunk.doc_id] = FoundDocument(chunk.doc_id, chunk.title, chunk.year, result.rank)
        if len(found) == limit:
            break
    return tuple(found.values())


def probe(name: str, response: SearchResponse, abstainer: Abstainer, embedder: Embedder) -> Probe:
    judgement = abstainer.judge(response, embedder)
    on_topic = judgement.signals.get("coverage", 0.0) >= MIN_COVERAGE
    return Probe(
        name=name,
        relevant=not judgement.abstain and on_topic,
        p_answerable=judgement.p_answerable,
        signals={k: round(v, 4) for k, v in judgement.signals.items()},
        documents=documents_of(response),
        time_limit=response.temporal,
    )


def time_limit(x: Exchange, today: date) -> str | None:
    """The question's time phrase: as the answer recorded it, else as the parser reads it now."""
    return x.answer.temporal or parse_temporal(x.answer.question, today).phrase


def categorise(
    probes: Sequence[Probe], time_phrase: str | None, cited: Sequence[str]
) -> tuple[Category, str]:
    """The category and its one-line reason, from the probes (see the module notes for the order)."""
    relevant = [p for p in probes if p.relevant and p.documents]
    if not relevant:
        return (
            "missing_content",
            "No search, however wide, found a document on the question's topic that the abstention model would answer from.",
        )
    if time_phrase:
        return (
            "temporal",
            f"The library has the topic; the question's time limit ({time_phrase}) narrowed it.",
        )
    for found in relevant:
        best = found.documents[0]
        if best.doc_id not in cited:
            named = f"'{best.title}' ({best.doc_id})" if best.title else best.doc_id
            return (
                "retrieval_mismatch",
                f"The {found.name} search finds {named}, which the answer did not cite.",
            )
    return "edge_case", "The library's best documents were cited, and the answer was still rated poorly."


@dataclass
class Diagnoser:
    """Probes the library for a failed answer's question and categorises the failure."""

    retriever: Retriever
    abstainer: Abstainer
    evidence_k: int
    today: date
    wide_k: int = WIDE_K

    @classmethod
    def of(cls, engine: Engine, today: date | None = None) -> Diagnoser:
        """Over an open data home, with its calibrated abstention model (the one answers use)."""
        today = today or date.today()
        abstainer = Abstainer.load(engine.settings.home)
        return cls(engine.retriever(today), abstainer, engine.settings.evidence_k, today)

    def probes(self, question: str) -> list[Probe]:
        search = self.retriever.search
        searches = {
            "re-run": search(question, k=self.evidence_k),
            "wider": search(question, k=self.wide_k, temporal=False),
            "document level": search(question, k=self.wide_k, level="document", temporal=False),
        }
        return [
            probe(name, found, self.abstainer, self.retriever.embedder) for name, found in searches.items()
        ]

    def diagnose(self, x: Exchange) -> Diagnosis:
        probes = self.probes(x.answer.question)
        phrase = time_limit(x, self.today)
        category, reason = categorise(probes, phrase, x.cited_doc_ids)
        evidence = {
            "reason": reason,
            "abstained": x.answer.abstained,
            "rating": x.rating,
            "p_answerable": x.answer.p_answerable,
            "threshold": self.abstainer.threshold if self.abstainer.weights is not None else None,
            "time_limit": phrase,
            "cited": list(x.cited_doc_ids),
            "index_version": x.answer.index_version,
            "probes": [asdict(p) for p in probes],
        }
        # As the store gives it back (tuples become lists): a fresh label reads like a stored one.
        return Diagnosis(category, reason, json.loads(json.dumps(evidence)))


@dataclass(frozen=True)
class LabelledFailure:
    """A failed answer with the label in force (the admin's correction, else the automatic one)."""

    exchange: Exchange
    category: str
    automatic_category: str
    corrected: bool
    evidence: dict[str, Any]

    @property
    def reason(self) -> str:
        return str(self.evidence.get("reason", ""))


def label_failures(
    store: Store,
    rows: Sequence[Exchange],
    diagnose: Callable[[Exchange], Diagnosis] | None,
    relabel: bool = False,
) -> list[LabelledFailure]:
    """Every failed answer of `rows` with its label. Answers never labelled are diagnosed and stored
    (with `relabel`, all of them again); without `diagnose`, only stored labels are read."""
    failed = [x for x in rows if is_failure(x)]
    stored = failure_labels(store, [x.answer_id for x in failed])
    if diagnose is not None:
        for x in failed:
            if relabel or x.answer_id not in stored:
                found = diagnose(x)
                stored[x.answer_id] = save_automatic_label(store, x.answer_id, found.category, found.evidence)
    return [
        LabelledFailure(x, label.category, label.automatic_category, label.corrected_at is not None, label.evidence)
        for x in failed
        if (label := stored.get(x.answer_id)) is not None
    ]  # fmt: skip
