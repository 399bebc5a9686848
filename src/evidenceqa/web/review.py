"""The benchmark review pages: clinicians accept, edit or reject candidate question–answer pairs.

Any logged-in clinician may review (the decision records who and when); posts carry the session's
CSRF token like every form. Candidates are put up for review with `evidenceqa benchmark review`.

- `GET /review`: the benchmarks under review, with progress.
- `GET /review/{benchmark}`: its candidates, each with the decision in force.
- `GET|POST /review/{benchmark}/{candidate_id}`: one pair, its source passage and gold sources; the
  form accepts it as proposed, saves the reviewer's edits, or rejects it, then moves to the next
  pair without a decision.
- `GET /review/{benchmark}/export.jsonl`: the validated set in the shared benchmark format (what
  `evidenceqa benchmark export` writes).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from evidenceqa.curation import review_store
from evidenceqa.curation.candidates import Decision, split_ids
from evidenceqa.curation.metadata import PRECISIONS, QUESTION_TYPES
from evidenceqa.curation.review import progress, to_jsonl, validated_rows
from evidenceqa.web.auth import Identity, PageUser
from evidenceqa.web.pages import render
from evidenceqa.web.services import services_of

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Form(max_length=100_000)]
Short = Annotated[str, Form(max_length=2_000)]


@router.get("/review", response_class=HTMLResponse)
async def review_index(request: Request, identity: PageUser) -> Response:
    store = services_of(request).store

    def load() -> list[tuple[str, Any]]:
        return [
            (name, progress(*review_store.decisions_in_force(store, name)))
            for name, _ in review_store.benchmarks(store)
        ]

    return render(request, "review_index.html", identity, benchmarks=await run_in_threadpool(load))


@router.get("/review/{benchmark}", response_class=HTMLResponse)
async def review_list(request: Request, benchmark: str, identity: PageUser) -> Response:
    store = services_of(request).store
    items = await run_in_threadpool(review_store.review_items, store, benchmark)
    decided = {i.candidate.candidate_id: i.decision for i in items if i.decision is not None}
    done = progress([i.candidate for i in items], decided)
    pending = next((i.candidate.candidate_id for i in items if i.decision is None), None)
    return render(request, "review_list.html", identity, benchmark=benchmark, items=items, done=done,
                  pending=pending)  # fmt: skip


@router.get("/review/{benchmark}/export.jsonl")
async def review_export(request: Request, benchmark: str, identity: PageUser) -> Response:
    store = services_of(request).store
    listed, decided = await run_in_threadpool(review_store.decisions_in_force, store, benchmark)
    return Response(
        to_jsonl(validated_rows(listed, decided)),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{benchmark}-validated.jsonl"'},
    )


@router.get("/review/{benchmark}/{candidate_id}", response_class=HTMLResponse)
async def review_page(request: Request, benchmark: str, candidate_id: str, identity: PageUser) -> Response:
    return await _page(request, identity, benchmark, candidate_id)


async def _page(request: Request, identity: Identity, benchmark: str, candidate_id: str,
                status_code: int = 200, **context: Any) -> Response:  # fmt: skip
    store = services_of(request).store
    item = await run_in_threadpool(review_store.review_item, store, benchmark, candidate_id)
    return render(request, "review_pair.html", identity, status_code, benchmark=benchmark, item=item,
                  question_types=QUESTION_TYPES, precisions=PRECISIONS, **context)  # fmt: skip


@router.post("/review/{benchmark}/{candidate_id}", response_class=HTMLResponse)
async def review_decide(
    request: Request,
    benchmark: str,
    candidate_id: str,
    identity: PageUser,
    action: Annotated[str, Form()],
    question: Text = "",
    answer: Text = "",
    gold: Annotated[list[str] | None, Form(max_length=500)] = None,
    extra_gold: Short = "",
    question_type: Short = "",
    expected_precision: Short = "",
    topic: Short = "",
    comment: Text = "",
) -> Response:
    store = services_of(request).store
    edited = action == "edit"
    decision = Decision(
        candidate_id=candidate_id,
        decision=action,  # checked with the rest when it is stored
        reviewer=identity.user.email,
        reviewed_at=store.now(),
        question=question.strip() if edited else None,
        answer=answer.strip() if edited else None,
        gold_doc_ids=list(dict.fromkeys([*(gold or []), *split_ids(extra_gold)])) if edited else None,
        question_type=question_type if edited else None,
        expected_precision=expected_precision if edited else None,
        topic=(topic.strip() or None) if edited else None,
        comment=comment.strip(),
    )
    try:
        await run_in_threadpool(review_store.record_decision, store, benchmark, decision, identity.user)
    except ValueError as exc:
        return await _page(request, identity, benchmark, candidate_id, status.HTTP_400_BAD_REQUEST,
                           error=str(exc))  # fmt: skip
    following = await run_in_threadpool(review_store.next_pending, store, benchmark, candidate_id)
    to = f"/review/{benchmark}/{following}" if following else f"/review/{benchmark}"
    return RedirectResponse(to, status.HTTP_303_SEE_OTHER)
