"""Hand-made pilot rows for the pure functions' tests."""

from __future__ import annotations

from datetime import timedelta

from evidenceqa.analytics.rows import Exchange
from evidenceqa.records import Answer, Citation, Usage
from evidenceqa.store import Channel, FeedbackRow
from tests.analytics.home import START


def exchange(
    answer_id: int,
    *ratings: float,
    abstained: bool = False,
    latency_s: float | None = 1.0,
    day: int = 0,
    conversation: int = 1,
    user: int = 1,
    cache_hit: bool = False,
    cost: dict[str, float] | None = None,
    question: str = "Does shaving increase infection?",
    cited: tuple[str, ...] = ("shave",),
    index_version: int = 1,
    channel: Channel = "chat",
) -> Exchange:
    when = START + timedelta(days=day)
    stages = cost or {"embed": 0.0, "search": 0.0, "generate": 0.0}
    feedback = tuple(
        FeedbackRow(100 * answer_id + i, when, answer_id, 10 + i, r, "", question, abstained)
        for i, r in enumerate(ratings)
    )
    answer = Answer(
        question=question, answer="…", abstained=abstained,
        citations=[] if abstained else [_citation(n, d) for n, d in enumerate(cited, 1)],
        sentences=[], unsupported=0, generator="extractive", filters={}, temporal=None,
        timings_ms={} if latency_s is None else {"total": latency_s * 1000},
        cost_usd={**stages, "total": sum(stages.values())}, usage=Usage(), index_version=index_version,
        cache_hit=cache_hit,
    )  # fmt: skip
    return Exchange(answer_id, when, user, conversation, answer, feedback, channel=channel)


def _citation(n: int, doc_id: str) -> Citation:
    return Citation(n, doc_id, f"{doc_id}-0", doc_id.title(), 2020, "Results", "…")
