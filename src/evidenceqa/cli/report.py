"""`evidenceqa report`: the pilot's figures, failure categories and content gaps; before/after
comparisons; exports for the clinical experts; a simulated pilot (definitions: docs/analytics.md)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from evidenceqa.analytics import compare as compare_mod
from evidenceqa.analytics import exports
from evidenceqa.analytics.report import comparison_markdown, engine_report, report_markdown, write_report
from evidenceqa.analytics.rows import Exchange, load_exchanges, period_bounds
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.cli.app import app
from evidenceqa.cli.common import err, fail, out, settings_of
from evidenceqa.cli.search import open_engine
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.settings import Settings
from evidenceqa.store import open_store
from evidenceqa.web import simulate

report_app = typer.Typer(help="Pilot analytics: figures, failures, content gaps, comparisons, exports.",
                         no_args_is_help=True)  # fmt: skip
app.add_typer(report_app, name="report")


@report_app.callback()
def _database(
    ctx: typer.Context,
    simulated: Annotated[bool, typer.Option(help="Read (or, for simulate, write) the simulated pilot's "
                                            "own database instead of the real one.")] = False,
) -> None:  # fmt: skip
    """Pilot analytics: figures, failures, content gaps, comparisons, exports."""
    if simulated:
        ctx.obj = simulate.simulated_settings(settings_of(ctx))


Since = Annotated[datetime | None, typer.Option(formats=["%Y-%m-%d"], help="First day (UTC), included.")]
Until = Annotated[datetime | None, typer.Option(formats=["%Y-%m-%d"], help="Last day (UTC), included.")]
OutDir = Annotated[Path, typer.Option("--out", help="Folder for the files written.")]


def _day(value: datetime | date | None) -> date | None:
    # typer parses a date option into a datetime.
    return value.date() if isinstance(value, datetime) else value


@report_app.command("pilot")
def pilot(
    ctx: typer.Context,
    since: Since = None,
    until: Until = None,
    out_dir: OutDir = Path("reports/pilot"),
    relabel: Annotated[
        bool, typer.Option(help="Categorise every failure again (corrections are kept).")
    ] = False,
) -> None:
    """Every figure, per week too, each failure's category with its evidence, and the content gaps:
    report.md and report.json, PNG charts, and the CSV/JSON exports in --out; the Markdown is printed."""
    settings = settings_of(ctx)
    with open_store(settings) as store, open_engine(settings) as engine:
        report = engine_report(store, engine, settings, _day(since), _day(until), relabel)
    paths = write_report(report, out_dir)
    print(report_markdown(report), end="")
    err.print(f"written: {', '.join(str(p) for p in paths)}", highlight=False)


@report_app.command("compare")
def compare(
    ctx: typer.Context,
    before: Annotated[str, typer.Option(help="DATE..DATE (end excluded), DATE, or index:N.")],
    after: Annotated[
        str, typer.Option(help="DATE..DATE, DATE, index:N, or current: re-run on the library now.")
    ] = "current",
    out_dir: OutDir = Path("reports/pilot"),
) -> None:
    """The "before" questions before and after: success proxy, abstentions, latency, and the questions
    whose outcome changed. Questions the "after" side lacks are re-run on the current library."""
    try:
        sides = compare_mod.parse_selection(before), compare_mod.parse_selection(after)
    except ValueError as exc:
        fail(str(exc))
    if sides[0].current:
        fail("--before is a period or an index version: the questions come from it")
    settings = settings_of(ctx)
    with open_store(settings) as store, open_engine(settings) as engine:
        rows = load_exchanges(store)
        answerer = engine.answerer(cache=MemoryCache(1))

        def rerun(question: str) -> Exchange:
            return compare_mod.rerun_exchange(answerer.ask(question, use_cache=False))

        before_rows = [x for x in rows if sides[0].holds(x)]
        after_rows = [] if sides[1].current else [x for x in rows if sides[1].holds(x)]
        if not before_rows:
            fail(f"no stored answers in {sides[0].label}")
        result = compare_mod.compare(*sides, compare_mod.pair_up(before_rows, after_rows, rerun))
    text = comparison_markdown(result)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "compare.md").write_text(text, encoding="utf-8")
    figures = {"before": asdict(result.before), "after": asdict(result.after), "reruns": result.reruns,
               "changed": [{"question": p.question, "before_success": p.before_success,
                            "after_success": p.after_success, "before_abstained": p.before.answer.abstained,
                            "after_abstained": p.after.answer.abstained, "rerun": p.rerun} for p in result.changed]}  # fmt: skip
    (out_dir / "compare.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(text, end="")


@report_app.command("export")
def export(
    ctx: typer.Context, since: Since = None, until: Until = None, out_dir: OutDir = Path("reports/pilot")
) -> None:
    """conversations.csv/.json (one row per answer, with its ratings) and feedback.csv/.json."""
    with open_store(settings_of(ctx)) as store:
        rows = load_exchanges(store, *period_bounds(_day(since), _day(until)))
    for path in exports.write_exports(rows, out_dir):
        out.print(str(path), highlight=False)


@report_app.command("simulate")
def simulate_pilot(
    ctx: typer.Context,
    questions: Annotated[Path, typer.Option(help="JSONL: question, optional query_id and gold_doc_ids.")],
    users: Annotated[int, typer.Option(min=1, help="Simulated clinicians.")] = 3,
    limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
    answerable: Annotated[int | None, typer.Option(help="Mix: N questions whose gold documents the library holds…")] = None,
    gaps: Annotated[int, typer.Option(help="…and N whose gold documents it lacks (gap questions).")] = 0,
    url: Annotated[str | None, typer.Option(help="A running `evidenceqa serve`; default: the app in this process.")] = None,
    admin_email: Annotated[str | None, typer.Option(help="With --url: an administrator's email.")] = None,
    admin_password: Annotated[str | None, typer.Option(envvar="EVIDENCEQA_PILOT_ADMIN_PASSWORD",
                                                       help="With --url: the administrator's password.")] = None,
    start: Annotated[datetime | None, typer.Option(formats=["%Y-%m-%d"], help="In process: the pilot's first day.")] = None,
    days: Annotated[float, typer.Option(min=0, help="In process: days the questions spread over.")] = 21,
    skip_every: Annotated[int, typer.Option(min=0, help="Leave every Nth answer unrated (0: rate all).")] = 4,
    repeat_every: Annotated[int, typer.Option(min=0, help="Ask every Nth question twice (0: never).")] = 5,
    per_conversation: Annotated[int, typer.Option(min=1, help="Questions per conversation.")] = 3,
    tag: Annotated[str, typer.Option(help="Names the simulated accounts (clinicianN.TAG@example.org).")] = "sim",
    fresh: Annotated[bool, typer.Option(help="In process: start the simulated database again from empty.")] = False,
) -> None:  # fmt: skip
    """Replay a question file as several users through the real API, with scripted feedback. In
    process, the pilot goes into its own database (`<home>/simulated-pilot.sqlite3`), never the real
    one: read it with `evidenceqa report --simulated pilot`."""
    settings = simulate.simulated_settings(settings_of(ctx))
    try:
        asked = simulate.read_questions(questions, limit)
    except (OSError, ValueError) as exc:
        fail(str(exc))
    if answerable is not None:
        asked = _mixed(settings, asked, answerable, gaps)
    replay = partial(simulate.replay, users=users, tag=tag, per_conversation=per_conversation,
                     repeat_every=repeat_every, script=simulate.Script(skip_every))  # fmt: skip
    if url is not None:
        if not (admin_email and admin_password):
            fail("--url needs --admin-email and --admin-password (or $EVIDENCEQA_PILOT_ADMIN_PASSWORD)")
        factory = simulate.remote(url)
        admin = simulate.SimUser(admin_email, admin_password, factory())
        result = replay(admin, factory, asked)
    else:
        if fresh:
            simulate.delete_simulated(settings)
        first = start.replace(tzinfo=UTC) if start else datetime.now(UTC)
        with simulate.in_process(settings, tag, first) as (admin, factory, clock):
            move = simulate.spread(clock, first, days)
            result = replay(admin, factory, asked, before_turn=move)
    turns = result.turns
    out.print(
        f"simulated pilot: {len(turns)} answers to {len(asked)} questions by {users} users · "
        f"{result.rated} rated · {sum(t.abstained for t in turns)} abstained · "
        f"{sum(t.cache_hit for t in turns)} from the cache",
        highlight=False,
    )
    if url is None:
        err.print(f"written to {settings.database_url}; read with `evidenceqa report --simulated pilot`",
                  highlight=False)  # fmt: skip


def _mixed(settings: Settings, questions: list[simulate.PilotQuestion], answerable: int, gaps: int
           ) -> list[simulate.PilotQuestion]:  # fmt: skip
    catalogue = Catalogue(settings.catalogue_path)
    try:
        return simulate.mix(
            questions, lambda doc_id: catalogue.load_document(doc_id) is not None, answerable, gaps
        )
    finally:
        catalogue.close()
