"""The pilot's figures, as pure functions over `Exchange` rows (definitions: docs/analytics.md).

- Success of an answer (`SuccessRule`): "feedback" judges rated answers only, success = mean rating
  >= 0.6 (Acceptable or Excellent); "feedback_or_answered" judges every answer: by its mean rating
  when it has one, else success = it was not abstained.
- Satisfaction: the mean of every rating given (1.0 / 0.6 / 0.2), and how many of each.
- Latency: question in, stored answer out (`timings_ms["total"]`), in seconds; p95 interpolates
  linearly between the two nearest ranks; σ is the population standard deviation.
- Cost per query: the mean over answers of each stage's cost and of the total (a cached answer costs 0).
- Weeks are ISO weeks, Monday to Sunday (UTC); an answer's ratings count in the answer's week.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from statistics import fmean, median, pstdev

import numpy as np

from evidenceqa.analytics.options import SuccessRule
from evidenceqa.analytics.rows import Exchange
from evidenceqa.store import RATINGS

SUCCESS_RATING = RATINGS["Acceptable"]  # a mean rating at least this good is a success


def success(x: Exchange, rule: SuccessRule) -> bool | None:
    """Whether the answer succeeded; None when `rule` does not judge it (unrated under "feedback")."""
    rating = x.rating
    if rating is not None:
        return rating >= SUCCESS_RATING - 1e-9  # the mean of 1.0 and 0.2 is 0.6 up to rounding
    return None if rule == "feedback" else not x.answer.abstained


def is_failure(x: Exchange) -> bool:
    """Poorly rated (mean rating below Acceptable) or abstained: the answers the failure analysis labels."""
    rating = x.rating
    return x.answer.abstained or (rating is not None and rating < SUCCESS_RATING - 1e-9)


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def success_rate(rows: Sequence[Exchange], rule: SuccessRule) -> tuple[int, int, float | None]:
    """(successes, answers judged, rate)."""
    judged = [s for s in (success(x, rule) for x in rows) if s is not None]
    return sum(judged), len(judged), ratio(sum(judged), len(judged))


@dataclass(frozen=True)
class Satisfaction:
    mean: float | None
    counts: dict[str, int]  # "Excellent" / "Acceptable" / "Very poor" → how many ratings


def satisfaction(ratings: Sequence[float]) -> Satisfaction:
    counts = {name: sum(1 for r in ratings if abs(r - value) < 1e-9) for name, value in RATINGS.items()}
    return Satisfaction(fmean(ratings) if ratings else None, counts)


@dataclass(frozen=True)
class Latency:
    """Seconds; None when there is no answer with a recorded total time."""

    count: int
    mean_s: float | None
    median_s: float | None
    p95_s: float | None
    max_s: float | None
    std_s: float | None
    target_s: float
    under_target: float | None  # share of answers strictly under target_s


def latency(seconds: Sequence[float], target_s: float) -> Latency:
    if not seconds:
        return Latency(0, None, None, None, None, None, target_s, None)
    return Latency(
        count=len(seconds),
        mean_s=fmean(seconds),
        median_s=median(seconds),
        p95_s=float(np.percentile(seconds, 95)),
        max_s=max(seconds),
        std_s=pstdev(seconds),
        target_s=target_s,
        under_target=sum(1 for s in seconds if s < target_s) / len(seconds),
    )


def cost_per_query(rows: Sequence[Exchange]) -> dict[str, float]:
    """Mean USD per answer for each stage any answer has, and "total"; empty without answers."""
    if not rows:
        return {}
    stages = sorted({stage for x in rows for stage in x.cost_by_stage})
    cost = {stage: fmean(x.cost_by_stage.get(stage, 0.0) for x in rows) for stage in stages}
    return {**cost, "total": fmean(x.cost_usd for x in rows)}


@dataclass(frozen=True)
class Summary:
    conversations: int
    answers: int
    users: int
    feedback_responses: int  # ratings given
    rated_answers: int  # answers with at least one rating
    response_rate: float | None  # rated answers / answers
    success_rule: SuccessRule
    successes: int
    judged: int  # answers the success rule judged (all, or the rated ones)
    success_rate: float | None
    abstentions: int
    abstention_rate: float | None
    satisfaction: Satisfaction
    latency: Latency
    cache_hits: int
    cache_hit_rate: float | None
    cost_per_query_usd: dict[str, float] = field(default_factory=dict)
    cost_total_usd: float = 0.0
    # Answers per way of asking (chat, api, mcp, openai): how much of the use is agents'.
    channels: dict[str, int] = field(default_factory=dict)
    # Searches and reads that returned passages but no answer, per "channel kind" ("mcp search").
    lookups: dict[str, int] = field(default_factory=dict)


def summarise(rows: Sequence[Exchange], rule: SuccessRule, target_s: float) -> Summary:
    successes, judged, rate = success_rate(rows, rule)
    rated = sum(1 for x in rows if x.ratings)
    abstentions = sum(1 for x in rows if x.answer.abstained)
    hits = sum(1 for x in rows if x.answer.cache_hit)
    return Summary(
        conversations=len({x.conversation_id for x in rows}),
        answers=len(rows),
        users=len({x.user_id for x in rows}),
        feedback_responses=sum(len(x.ratings) for x in rows),
        rated_answers=rated,
        response_rate=ratio(rated, len(rows)),
        success_rule=rule,
        successes=successes,
        judged=judged,
        success_rate=rate,
        abstentions=abstentions,
        abstention_rate=ratio(abstentions, len(rows)),
        satisfaction=satisfaction([r for x in rows for r in x.ratings]),
        latency=latency([x.latency_ms / 1000 for x in rows if x.latency_ms is not None], target_s),
        cache_hits=hits,
        cache_hit_rate=ratio(hits, len(rows)),
        cost_per_query_usd=cost_per_query(rows),
        cost_total_usd=sum(x.cost_usd for x in rows),
        channels=dict(sorted(Counter(x.channel for x in rows).items())),
    )


def week_of(x: Exchange) -> date:
    """The Monday (UTC) of the answer's ISO week."""
    day = x.created_at.date()
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True)
class Week:
    start: date  # a Monday
    summary: Summary


def weekly(rows: Sequence[Exchange], rule: SuccessRule, target_s: float) -> list[Week]:
    """The summary of each ISO week that has answers, in order."""
    weeks: dict[date, list[Exchange]] = defaultdict(list)
    for x in rows:
        weeks[week_of(x)].append(x)
    return [Week(start, summarise(weeks[start], rule, target_s)) for start in sorted(weeks)]
