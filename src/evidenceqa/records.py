"""The answer record every layer shares: what the pipeline returns, the store keeps, the API and the
CLI serialise and analytics reads. One type per concept, with its serialisers beside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TypeVar


class Numbered(Protocol):
    """A citation as the record or the API holds it: `n` is its source's number."""

    @property
    def n(self) -> int: ...


N = TypeVar("N", bound=Numbered)


def by_source_number(citations: Iterable[N]) -> list[tuple[int, list[N]]]:
    """Citations grouped by their source's number, in number order: a document's passages together."""
    grouped: dict[int, list[N]] = {}
    for citation in citations:
        grouped.setdefault(citation.n, []).append(citation)
    return sorted(grouped.items(), key=lambda item: item[0])


@dataclass
class Sentence:
    """One sentence of an answer and the numbers it cites: the evidence's while it is checked, the
    sources' (one per document, `answer.citations.SourceNumbers`) in an answer's record."""

    text: str
    citations: list[int] = field(default_factory=list)
    supported: bool | None = None  # None until checked; verbatim extractive sentences are supported
    support: float | None = None  # the checker's support score, 0–1
    problem: str | None = None  # why it is not supported: "cites [7], which does not exist", …


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Citation:
    """A passage an answer cites, with the exact text that supports it, for highlighting. `n` is its
    source's number: the passages of one document share it."""

    n: int
    doc_id: str
    chunk_id: str
    title: str | None
    year: int | None
    section: str | None
    text: str
    evidence_type: str | None = None  # evidence_types.KEYS; None in answers recorded before it


@dataclass
class Answer:
    """A checked, cited answer to one question (or an abstention), with what it cost and took."""

    question: str
    answer: str
    abstained: bool
    citations: list[Citation]
    sentences: list[Sentence]
    unsupported: int  # sentences the checker could not tie to their cited evidence
    generator: str
    filters: dict[str, Any]
    temporal: str | None
    timings_ms: dict[str, float]
    cost_usd: dict[str, float]  # per stage, and "total"
    usage: Usage
    index_version: int
    p_answerable: float | None = None  # the calibrated adequacy model's belief, when there is one
    cache_hit: bool = False
    query_id: str | None = None
    # A follow-up resolved against its conversation: what was searched, when not the question itself.
    searched_for: str | None = None
    # An abstention's closest passages: what the library holds nearby. Not citations: they do not
    # answer the question, and nothing counts them as support.
    nearest: list[Citation] = field(default_factory=list)

    def sources(self) -> list[tuple[int, list[Citation]]]:
        """The cited sources in number order, each with its passages: one per document."""
        return by_source_number(self.citations)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        values = dict(data)
        values["citations"] = [Citation(**c) for c in data["citations"]]
        values["nearest"] = [Citation(**c) for c in data.get("nearest") or ()]
        values["sentences"] = [Sentence(**s) for s in data["sentences"]]
        values["usage"] = Usage(**data["usage"])
        return cls(**values)

    def shown_passages(self) -> list[Citation]:
        """The passages the answer shows: its citations, then (an abstention's) nearest ones."""
        return [*self.citations, *self.nearest]

    def to_row(self) -> dict[str, Any]:
        """The answer as `ask --json`, the batch file and the API write it: the cost as one total and by
        stage, the unsupported sentences as their text."""
        return {
            "query_id": self.query_id,
            "question": self.question,
            "searched_for": self.searched_for,
            "answer": self.answer,
            "abstained": self.abstained,
            "citations": [asdict(c) for c in self.citations],
            "nearest": [asdict(c) for c in self.nearest],
            "unsupported_sentences": [s.text for s in self.sentences if s.supported is False],
            "filters": self.filters,
            "timings_ms": self.timings_ms,
            "cost_usd": self.cost_usd["total"],
            "cost_by_stage_usd": self.cost_usd,
            "generator": self.generator,
            "p_answerable": self.p_answerable,
            "cache_hit": self.cache_hit,
            "index_version": self.index_version,
        }
