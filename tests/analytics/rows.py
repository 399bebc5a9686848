"""Hand-made pilot rows for the pure functions' tests."""

from __future__ import annotations

from datetime import timedelta

from evidenceqa.analytics.rows import Exchange
from evidenceqa.store import FeedbackRow
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
) -> Exchange:
    when = START + timedelta(days=day)
    stages = cost or {"embed": 0.0, "search": 0.0, "generate": 0.0}
    feedback = tuple(
        FeedbackRow(100 * answer_id + i, when, answer_id, 10 + i, r, "", question, abstained)
        for i, r in enumerate(ratings)
    )
    return Exchange(
        answer_id=answer_id, created_at=when, user_id=user, conversation_id=conversation,
        question=question, answer="…", abstained=abstained,
        cited=() if abstained else tuple((d, d.title()) for d in cited),
        latency_ms=None if latency_s is None else latency_s * 1000, cache_hit=cache_hit,
        cost_usd=sum(stages.values()), cost_by_stage=stages, index_version=1, p_answerable=None,
        temporal=None, feedback=feedback,
    )  # fmt: skip
