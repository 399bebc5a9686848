"""The admin's pilot dashboard: the figures of `evidenceqa report pilot`, built by the same function
(`analytics.report.engine_report`), so the page, its JSON and the CLI report always agree.

- `GET /admin/pilot` (page) and `GET /api/admin/pilot` (JSON): the report for `since` … `until`
  (days, both included). Failures not yet categorised are categorised and stored on the way.
- `GET /admin/pilot/charts/{name}.png`: a chart, from the stored labels (no new categorising), served
  from this site because the content security policy allows images from it alone.
- `POST /admin/failures/{answer_id}`: an administrator's category for a failure; kept from then on.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Form, HTTPException, Query, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from evidenceqa.analytics import charts
from evidenceqa.analytics.failures import CATEGORY_NAMES
from evidenceqa.analytics.report import (
    WEEK_HEADERS,
    PilotReport,
    build_report,
    engine_report,
    report_json,
    summary_rows,
    week_row,
)
from evidenceqa.store import InvalidCategory, correct_label
from evidenceqa.web.auth import ApiAdmin, PageAdmin
from evidenceqa.web.pages import render
from evidenceqa.web.schemas import RowId
from evidenceqa.web.services import Services, services_of

router = APIRouter()
Day = Annotated[date | None, Query(description="A day (UTC), YYYY-MM-DD; the period includes it.")]


async def full_report(services: Services, since: date | None, until: date | None) -> PilotReport:
    """Categorising searches the library, whose engine lives on its own thread: the work runs there."""
    engine = services.library.engine
    return await services.library.run(
        lambda: engine_report(services.store, engine, services.settings, since, until)
    )


def stored_report(services: Services, since: date | None, until: date | None) -> PilotReport:
    """The figures and the stored labels only: no search, no embedding (for the charts)."""
    s = services.settings
    return build_report(services.store, since, until, s.success_rule, s.latency_target_s)


def _period(since: date | None, until: date | None) -> str:
    given = {"since": since, "until": until}
    return urlencode({k: v.isoformat() for k, v in given.items() if v is not None})


@router.get("/api/admin/pilot", tags=["admin"])
async def pilot_json(
    request: Request, identity: ApiAdmin, since: Day = None, until: Day = None
) -> dict[str, Any]:
    """Every figure of the pilot report (as `evidenceqa report pilot` writes report.json)."""
    return report_json(await full_report(services_of(request), since, until))


@router.get("/admin/pilot", response_class=HTMLResponse, include_in_schema=False)
async def pilot_page(request: Request, identity: PageAdmin, since: Day = None, until: Day = None) -> Response:
    report = await full_report(services_of(request), since, until)
    return render(
        request, "pilot.html", identity, report=report, summary=summary_rows(report.summary),
        week_headers=WEEK_HEADERS, weeks=[week_row(w) for w in report.weeks], category_names=CATEGORY_NAMES,
        charts=list(charts.CHARTS), period=_period(since, until), since=since, until=until,
    )  # fmt: skip


@router.get("/admin/pilot/charts/{name}.png", include_in_schema=False)
async def pilot_chart(
    request: Request, name: str, identity: PageAdmin, since: Day = None, until: Day = None
) -> Response:
    if name not in charts.CHARTS:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such chart")
    report = await run_in_threadpool(stored_report, services_of(request), since, until)
    png = await run_in_threadpool(charts.png, report, name)
    return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})


@router.post("/admin/failures/{answer_id}", include_in_schema=False)
async def correct_failure(
    request: Request,
    answer_id: RowId,
    identity: PageAdmin,
    category: Annotated[str, Form(max_length=40)],
    back: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """The admin's category for the failure (CSRF-checked by `PageAdmin`); back to the dashboard."""
    try:
        await run_in_threadpool(correct_label, services_of(request).store, answer_id, category, identity.user)
    except InvalidCategory as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from exc
    # `back` is only the period's query string, never a URL: the redirect stays on this page.
    query = _period(*_days(back))
    return RedirectResponse(
        f"/admin/pilot{'?' + query if query else ''}#failure-{answer_id}", status.HTTP_303_SEE_OTHER
    )


def _days(query: str) -> tuple[date | None, date | None]:
    """since and until from a `since=…&until=…` string; anything else is dropped."""
    fields = parse_qs(query)
    found: list[date | None] = []
    for name in ("since", "until"):
        try:
            found.append(date.fromisoformat(fields[name][0]))
        except (KeyError, ValueError):
            found.append(None)
    return found[0], found[1]
