"""The pilot's figures on hand-made rows, against values worked out by hand."""

from __future__ import annotations

import pytest

from evidenceqa.analytics.metrics import (
    cost_per_query,
    is_failure,
    latency,
    satisfaction,
    success,
    summarise,
    weekly,
)
from evidenceqa.analytics.report import summary_rows
from tests.analytics.rows import exchange


def test_success_under_each_rule() -> None:
    excellent, poor = exchange(1, 1.0), exchange(2, 0.2)
    unrated_answer, unrated_abstention = exchange(3), exchange(4, abstained=True)
    mixed = exchange(5, 1.0, 0.2)  # two people: mean 0.6, Acceptable
    rated_abstention = exchange(6, 0.6, abstained=True)  # an honest "I don't know", rated Acceptable
    assert [success(x, "feedback") for x in (excellent, poor, unrated_answer, unrated_abstention)] == [
        True, False, None, None
    ]  # fmt: skip
    assert [success(x, "feedback_or_answered") for x in (unrated_answer, unrated_abstention)] == [True, False]
    assert success(mixed, "feedback") and success(rated_abstention, "feedback_or_answered")


def test_failures_are_poorly_rated_or_abstained() -> None:
    assert [is_failure(x) for x in (exchange(1, 0.2), exchange(2, 0.6), exchange(3), exchange(4, abstained=True),
                                    exchange(5, 0.6, abstained=True))] == [True, False, False, True, True]  # fmt: skip


def test_satisfaction_is_the_mean_of_every_rating_and_its_distribution() -> None:
    found = satisfaction([1.0, 1.0, 0.6, 0.2])
    assert found.mean == pytest.approx(0.7)
    assert found.counts == {"Excellent": 2, "Acceptable": 1, "Very poor": 1}
    assert satisfaction([]).mean is None


def test_latency_statistics() -> None:
    found = latency([1.0, 2.0, 3.0, 4.0, 10.0], target_s=5.0)
    assert (found.count, found.mean_s, found.median_s, found.max_s) == (5, 4.0, 3.0, 10.0)
    # p95: linear between the 4th and 5th values (rank 0.95 * 4 = 3.8): 4 + 0.8 * 6.
    assert found.p95_s == pytest.approx(8.8)
    # Population σ: deviations -3, -2, -1, 0, 6 → (9 + 4 + 1 + 0 + 36) / 5 = 10.
    assert found.std_s == pytest.approx(10**0.5)
    assert found.under_target == pytest.approx(0.8)
    assert latency([5.0], 5.0).under_target == 0.0  # "under" is strict
    assert latency([], 5.0).mean_s is None


def test_cost_per_query_by_stage_and_in_total() -> None:
    rows = [
        exchange(1, cost={"embed": 0.001, "search": 0.0, "generate": 0.004}),
        exchange(2, cost={"embed": 0.0, "search": 0.0, "generate": 0.0}, cache_hit=True),  # cached: free
    ]
    assert cost_per_query(rows) == pytest.approx(
        {"embed": 0.0005, "generate": 0.002, "search": 0.0, "total": 0.0025}
    )
    assert cost_per_query([]) == {}


def test_summary_of_a_small_pilot() -> None:
    rows = [
        exchange(1, 1.0, conversation=1, user=1, latency_s=2.0),
        exchange(2, 0.2, conversation=1, user=1, latency_s=4.0),
        exchange(3, conversation=2, user=2, latency_s=6.0, cache_hit=True, channel="mcp"),
        exchange(4, abstained=True, conversation=3, user=2, latency_s=None, channel="openai"),
    ]
    s = summarise(rows, "feedback_or_answered", 5.0)
    assert (s.conversations, s.answers, s.users) == (3, 4, 2)
    assert s.channels == {"chat": 2, "mcp": 1, "openai": 1}  # agents' use counted beside the chat's
    assert ("Answers by channel", "chat 2 · mcp 1 · openai 1") in summary_rows(s)
    assert (s.feedback_responses, s.rated_answers, s.response_rate) == (2, 2, 0.5)
    assert (s.successes, s.judged, s.success_rate) == (2, 4, 0.5)  # 1: rated 1.0, 3: answered
    assert (s.abstentions, s.abstention_rate) == (1, 0.25)
    assert (s.cache_hits, s.cache_hit_rate) == (1, 0.25)
    assert (s.latency.count, s.latency.mean_s, s.latency.under_target) == (3, 4.0, pytest.approx(2 / 3))
    strict = summarise(rows, "feedback", 5.0)
    assert (strict.successes, strict.judged, strict.success_rate) == (1, 2, 0.5)


def test_weeks_are_iso_weeks_from_monday() -> None:
    rows = [exchange(1, 1.0, day=0), exchange(2, 0.2, day=6), exchange(3, day=7), exchange(4, day=15)]
    weeks = weekly(rows, "feedback", 5.0)  # START is a Monday: days 0 and 6 share its week
    assert [(w.start.isoformat(), w.summary.answers) for w in weeks] == [
        ("2025-03-03", 2), ("2025-03-10", 1), ("2025-03-17", 1)
    ]  # fmt: skip
    assert [w.summary.success_rate for w in weeks] == [0.5, None, None]
