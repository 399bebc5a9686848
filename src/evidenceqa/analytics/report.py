"""The pilot report: every figure, per week too, the failures with their categories and evidence, and
the content gaps, as one object that the CLI writes (Markdown, JSON, PNG, CSV) and the admin
dashboard shows — built by the same function, so the two always agree."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from evidenceqa.analytics import charts, exports
from evidenceqa.analytics.compare import Comparison
from evidenceqa.analytics.failures import (
    CATEGORY_NAMES,
    Diagnoser,
    Diagnosis,
    LabelledFailure,
    label_failures,
)
from evidenceqa.analytics.gaps import GapQuestion, GapTopic, content_gaps
from evidenceqa.analytics.metrics import SuccessRule, Summary, Week, summarise, weekly
from evidenceqa.analytics.options import AnalyticsOptions
from evidenceqa.analytics.rows import Exchange, load_exchanges, period_bounds
from evidenceqa.answer.engine import Engine
from evidenceqa.store import GapReportRow, Store, gap_reports_between, lookups_between
from evidenceqa.text import markdown


@dataclass(frozen=True)
class PilotReport:
    since: date | None  # first day counted; None: from the first answer
    until: date | None  # last day counted (included); None: up to now
    rows: list[Exchange]
    summary: Summary
    weeks: list[Week]
    failures: list[LabelledFailure]
    gaps: list[GapTopic]
    reported: list[GapReportRow] = field(default_factory=list)  # "tell the library team", oldest first

    @property
    def categories(self) -> dict[str, int]:
        """Failures per category in force, every category listed."""
        counts = Counter(f.category for f in self.failures)
        return {category: counts[category] for category in CATEGORY_NAMES}


def gap_questions(
    failures: Sequence[LabelledFailure], reported: Sequence[GapReportRow] = ()
) -> list[GapQuestion]:
    """Abstained and missing-content answers, and those readers reported as missing: what the
    library could not answer, each answer once."""
    found = [
        GapQuestion(f.exchange.answer_id, f.exchange.answer.question)
        for f in failures
        if f.exchange.answer.abstained or f.category == "missing_content"
    ]
    known = {q.answer_id for q in found}
    return found + [GapQuestion(r.answer_id, r.question) for r in reported if r.answer_id not in known]


def build_report(
    store: Store,
    since: date | None,
    until: date | None,
    rule: SuccessRule,
    target_s: float,
    diagnose: Callable[[Exchange], Diagnosis] | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    relabel: bool = False,
) -> PilotReport:
    """The report on the answers of the days `since` to `until` (both included, UTC). Without
    `diagnose`, failures show only their stored labels; without `embed`, there is no gap list."""
    rows = load_exchanges(store, *period_bounds(since, until))
    failures = label_failures(store, rows, diagnose, relabel)
    reported = gap_reports_between(store, *period_bounds(since, until))
    gaps = content_gaps(gap_questions(failures, reported), embed) if embed is not None else []
    counted = lookups_between(store, *period_bounds(since, until))
    lookups = {f"{channel} {kind}": n for (channel, kind), n in sorted(counted.items())}
    summary = replace(summarise(rows, rule, target_s), lookups=lookups)
    weeks = weekly(rows, rule, target_s)
    return PilotReport(since, until, rows, summary, weeks, failures, gaps, reported)


def engine_report(
    store: Store,
    engine: Engine,
    settings: AnalyticsOptions,
    since: date | None,
    until: date | None,
    relabel: bool = False,
) -> PilotReport:
    """The full report over an open data home: what `evidenceqa report pilot` and the admin dashboard
    both show, under the home's settings (success rule, latency target)."""
    return build_report(store, since, until, settings.success_rule, settings.latency_target_s,
                        Diagnoser.of(engine).diagnose, engine.embedder.embed, relabel)  # fmt: skip


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def report_json(report: PilotReport) -> dict[str, Any]:
    """Every figure of the report; the admin dashboard's JSON is exactly this."""
    return _jsonable(
        {
            "since": report.since,
            "until": report.until,
            "summary": asdict(report.summary),
            "weeks": [{"week": w.start.isoformat(), **asdict(w.summary)} for w in report.weeks],
            "categories": report.categories,
            "failures": [failure_json(f) for f in report.failures],
            "gaps": [asdict(g) for g in report.gaps],
            "reported_gaps": [asdict(r) for r in report.reported],
        }
    )


def failure_json(f: LabelledFailure) -> dict[str, Any]:
    x = f.exchange
    return {
        "answer_id": x.answer_id,
        "created_at": x.created_at.isoformat(),
        "question": x.answer.question,
        "abstained": x.answer.abstained,
        "rating": x.rating,
        "category": f.category,
        "automatic_category": f.automatic_category,
        "corrected": f.corrected,
        "reason": f.reason,
        "evidence": f.evidence,
    }


# Markdown ----------------------------------------------------------------------------------------


def pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.6f}"


def summary_rows(s: Summary) -> list[tuple[str, str]]:
    """(figure, value) for the headline table; the dashboard shows the same rows."""
    lat, sat = s.latency, s.satisfaction
    success_note = "rated answers" if s.success_rule == "feedback" else "all answers"
    rows = [
        ("Conversations", str(s.conversations)),
        ("Answers", str(s.answers)),
        ("Answers by channel", " · ".join(f"{name} {count}" for name, count in s.channels.items()) or "–"),
        ("Searches and reads without an answer", " · ".join(f"{name} {n}" for name, n in s.lookups.items()) or "–"),
        ("Users", str(s.users)),
        ("Feedback responses", str(s.feedback_responses)),
        ("Response rate (answers rated)", f"{pct(s.response_rate)} ({s.rated_answers} of {s.answers})"),
        (f"Success rate ({s.success_rule}, of {success_note})", f"{pct(s.success_rate)} ({s.successes} of {s.judged})"),
        ("Abstentions", f"{s.abstentions} ({pct(s.abstention_rate)})"),
        ("Average satisfaction (0.2–1.0)", num(sat.mean, 3)),
        *((f"Rated {name}", str(count)) for name, count in sat.counts.items()),
        ("Latency mean / median (s)", f"{num(lat.mean_s)} / {num(lat.median_s)}"),
        ("Latency p95 / max (s)", f"{num(lat.p95_s)} / {num(lat.max_s)}"),
        ("Latency σ (s)", num(lat.std_s)),
        (f"Answers under {lat.target_s:g} s", pct(lat.under_target)),
        ("Cache hit rate", f"{pct(s.cache_hit_rate)} ({s.cache_hits})"),
        *((f"Cost per query: {stage}", usd(cost)) for stage, cost in s.cost_per_query_usd.items()),
        ("Cost in total", usd(s.cost_total_usd)),
    ]  # fmt: skip
    return rows


WEEK_HEADERS = ["Week of", "Answers", "Conversations", "Rated", "Response", "Success", "Satisfaction",
                "Abstained", "Median s", "p95 s", "Under target", "Cache hits", "Cost/query"]  # fmt: skip


def week_row(w: Week) -> list[str]:
    s = w.summary
    return [
        w.start.isoformat(), str(s.answers), str(s.conversations), str(s.rated_answers), pct(s.response_rate),
        pct(s.success_rate), num(s.satisfaction.mean, 3), pct(s.abstention_rate), num(s.latency.median_s),
        num(s.latency.p95_s), pct(s.latency.under_target), pct(s.cache_hit_rate),
        usd(s.cost_per_query_usd.get("total")),
    ]  # fmt: skip


def report_markdown(report: PilotReport, chart_files: dict[str, str] | None = None) -> str:
    s = report.summary
    parts = [
        f"## Pilot: {period(report)}\n",
        markdown.table(["Figure", "Value"], summary_rows(s)),
        "\n### Per week\n",
        markdown.table(WEEK_HEADERS, [week_row(w) for w in report.weeks], [False] + [True] * 12),
        "\n### Failures by category\n",
        markdown.table(
            ["Category", "Answers"],
            [(CATEGORY_NAMES[c], n) for c, n in report.categories.items()],
            [False, True],
        ),
        "\n### Failures, one by one\n",
        markdown.table(
            ["Answer", "Question", "Abstained", "Rating", "Category", "Why"],
            [_failure_row(f) for f in report.failures],
        ),
        "\n### Content gaps\n",
        markdown.table(
            ["Topic", "Questions", "Examples"],
            [(g.name, g.count, " / ".join(g.examples)) for g in report.gaps],
            [False, True, False],
        ),
        "\n### Reported missing by readers\n",
        markdown.table(
            ["When", "Answer", "Question", "What they were looking for"],
            [
                (r.created_at.date().isoformat(), r.answer_id, r.question, r.comment or "–")
                for r in report.reported
            ],
        ),
    ]
    if chart_files:
        parts.append(
            "\n### Charts\n\n" + "".join(f"![{name}]({file})\n" for name, file in chart_files.items())
        )
    return "".join(parts)


def _failure_row(f: LabelledFailure) -> list[str]:
    x = f.exchange
    category = CATEGORY_NAMES[f.category] + (" (corrected)" if f.corrected else "")
    return [
        str(x.answer_id),
        x.answer.question,
        "yes" if x.answer.abstained else "no",
        num(x.rating, 1),
        category,
        f.reason,
    ]


def period(report: PilotReport) -> str:
    since = report.since.isoformat() if report.since else "the first answer"
    return f"{since} to {report.until.isoformat() if report.until else 'now'}"


def write_report(report: PilotReport, out: Path) -> list[Path]:
    """report.md, report.json, the charts and the exports in `out`; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    pngs = charts.write_charts(report, out)
    written = [*pngs.values(), *exports.write_exports(report.rows, out)]
    json_path = out / "report.json"
    json_path.write_text(
        json.dumps(report_json(report), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    md_path = out / "report.md"
    md_path.write_text(report_markdown(report, {n: p.name for n, p in pngs.items()}), encoding="utf-8")
    return [md_path, json_path, *written]


def comparison_markdown(c: Comparison) -> str:
    """The seed's "Performance Evolution" table, and the questions whose outcome changed."""
    b, a = c.before, c.after
    rows = [
        ("Questions", b.questions, a.questions),
        ("Success proxy", pct(b.success_rate), pct(a.success_rate)),
        ("Abstentions", pct(b.abstention_rate), pct(a.abstention_rate)),
        ("Latency mean (s)", num(b.latency_mean_s), num(a.latency_mean_s)),
        ("Latency median (s)", num(b.latency_median_s), num(a.latency_median_s)),
        ("Latency p95 (s)", num(b.latency_p95_s), num(a.latency_p95_s)),
    ]
    changed = [
        (p.question, _outcome(p.before_success, p.before.answer.abstained), _outcome(p.after_success, p.after.answer.abstained),
         "re-run" if p.rerun else "stored")
        for p in c.changed
    ]  # fmt: skip
    return (
        f"## Performance evolution: {c.before_label} → {c.after_label}\n"
        + markdown.table(["Figure", "Before", "After"], rows, [False, True, True])
        + f"\n{c.reruns} of {len(c.pairs)} questions re-run on the current library.\n"
        + f"\n### Changed outcome ({len(changed)})\n"
        + markdown.table(["Question", "Before", "After", "After from"], changed)
    )


def _outcome(succeeded: bool, abstained: bool) -> str:
    return ("success" if succeeded else "failure") + (", abstained" if abstained else ", answered")
