"""Before and after: selections, pairing the same questions, re-runs, and changed outcomes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evidenceqa.analytics.compare import compare, pair_up, parse_selection
from evidenceqa.analytics.rows import Exchange
from tests.analytics.rows import exchange


def test_selections() -> None:
    period = parse_selection("2025-03-03..2025-03-10")
    assert (period.since, period.until) == (
        datetime(2025, 3, 3, tzinfo=UTC),
        datetime(2025, 3, 10, tzinfo=UTC),
    )
    day = parse_selection("2025-03-03")
    assert day.until == datetime(2025, 3, 4, tzinfo=UTC)
    assert parse_selection("index:4").index_version == 4
    assert parse_selection("current").current
    for bad in ("index:x", "March..April"):
        with pytest.raises(ValueError):
            parse_selection(bad)
    version = parse_selection("index:1")
    assert version.holds(exchange(1)) and not version.holds(exchange(1, index_version=2))


def test_changed_outcomes_are_found_on_the_same_questions() -> None:
    a, b, c = "Does shaving increase infection?", "Is tranexamic acid safe?", "Otitis media antibiotics?"
    before = [
        exchange(1, 0.2, question=a, cited=("chg",)),  # poor, then the right paper: improved
        exchange(2, question=b, cited=("txa",)),  # answered both times: unchanged
        exchange(3, abstained=True, question=c),  # abstained, then answered from new content
        exchange(4, abstained=True, question=a, day=-1),  # an older answer to `a`: the latest counts
    ]
    after_stored = [exchange(11, 1.0, question="does SHAVING  increase infection?", cited=("shave",))]
    reran: list[str] = []

    def rerun(question: str) -> Exchange:
        reran.append(question)
        return exchange(0, question=question, cited=("txa",) if question == b else ("new",))

    result = compare(
        parse_selection("index:1"), parse_selection("current"), pair_up(before, after_stored, rerun)
    )
    assert sorted(reran) == sorted([b, c])  # `a` was asked again after: its stored answer is used
    assert [(p.question, p.before_success, p.after_success, p.rerun) for p in result.changed] == [
        (a, False, True, False), (c, False, True, True)
    ]  # fmt: skip
    assert (result.before.questions, result.before.success_rate, result.after.success_rate) == (3, 1 / 3, 1.0)
    assert (result.before.abstention_rate, result.after.abstention_rate, result.reruns) == (1 / 3, 0.0, 2)


def test_a_rerun_with_the_same_evidence_keeps_the_rating() -> None:
    poor = exchange(1, 0.2, question="q", cited=("chg",))
    same = pair_up([poor], [], lambda q: exchange(0, question=q, cited=("chg",)))[0]
    assert same.after.rating == 0.2 and not same.changed
    other = pair_up([poor], [], lambda q: exchange(0, question=q, cited=("shave",)))[0]
    assert other.after.rating is None and other.changed  # new evidence: judged by answering
