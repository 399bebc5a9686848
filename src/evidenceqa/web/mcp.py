"""The library as an MCP server (Model Context Protocol, the official `mcp` SDK), for LLM agents and
assistants that must ground what they write in the library and attribute it.

Four tools (search_evidence, answer_question, get_passage, list_collections) and one resource
template (evidenceqa://document/{doc_id}). The same server runs over stdio (`evidenceqa mcp`, for a
desktop assistant) and over streamable HTTP at /mcp in the web app, where every request carries an
API token (`Authorization: Bearer …`). Over HTTP it is stateless, so any worker of
`serve --workers N` answers any request. Tools return structured results (their JSON schemas are
the models of web/agent_access.py) and a tool's failure is a tool error with the reason, as MCP says.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from mcp_types.jsonrpc import INVALID_PARAMS
from pydantic import Field, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from evidenceqa import DISCLAIMER, __version__
from evidenceqa.store import token_owner
from evidenceqa.web.agent_access import (
    AgentAccess,
    EvidenceFilters,
    LibraryOut,
    PassageInContext,
    SearchEvidenceOut,
)
from evidenceqa.web.entitlements import Reader, reader_of
from evidenceqa.web.schemas import EVIDENCE_TYPE_NOTE, PREFER_EVIDENCE_NOTE, AnswerOut

T = TypeVar("T")
AccessOf = Callable[[], AgentAccess]  # the library and guards of the process serving the call
ReaderOf = Callable[[Context], Reader]  # who is calling (the API token's owner) and what they may read
READER_SCOPE_KEY = "evidenceqa.reader"  # where the HTTP endpoint leaves the caller for the tools
PATH = "/mcp"

INSTRUCTIONS = f"""\
Evidence from a curated library of medical literature (guidelines, journal articles, patient
information). Use search_evidence to find passages and cite them with their `cite` string and
chunk_id; use answer_question for a checked, cited answer (it abstains when the library does not
hold the answer: say so rather than answering from elsewhere); get_passage reads around a passage;
list_collections says what the library holds. {DISCLAIMER}"""

Question = Annotated[str, Field(min_length=1, description="The question, in the user's own words.")]
Earlier = Annotated[
    list[str] | None,
    Field(
        max_length=20,
        description='When the question is a follow-up ("and in children?", "how is it treated?"): '
        "the conversation's earlier questions, oldest first; it is resolved against them and the "
        "answer's searched_for says what was searched.",
    ),
]
YearMin = Annotated[int | None, Field(ge=1000, le=3000, description="Earliest publication year.")]
YearMax = Annotated[int | None, Field(ge=1000, le=3000, description="Latest publication year.")]
Collection = Annotated[
    str | None, Field(max_length=200, description="Only this collection (list_collections).")
]
DocType = Annotated[
    str | None, Field(max_length=200, description="Only this document type, e.g. journal-article.")
]
EvidenceType = Annotated[str | None, Field(max_length=40, description=EVIDENCE_TYPE_NOTE)]
PreferEvidence = Annotated[bool, Field(description=PREFER_EVIDENCE_NOTE)]
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class KnownArguments:
    """A tool call with an argument the tool does not take is refused (invalid params), naming it:
    the SDK would drop it silently, and an agent would never learn that its filter was ignored."""

    def __init__(self) -> None:
        self.taken: dict[str, list[str]] = {}  # tool → its arguments

    def add(self, server: MCPServer, fn: Callable[..., Any], annotations: ToolAnnotations) -> None:
        server.add_tool(fn, annotations=annotations)
        self.taken[fn.__name__] = [name for name in inspect.signature(fn).parameters if name != "ctx"]

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params or {}
        name = params.get("name")
        if ctx.method == "tools/call" and name in self.taken:
            unknown = sorted(set(params.get("arguments") or {}) - set(self.taken[name]))
            if unknown:
                raise MCPError(
                    INVALID_PARAMS,
                    f"{name} takes no argument {', '.join(map(repr, unknown))}; "
                    f"it takes {', '.join(self.taken[name]) or 'none'}",
                )
        return await call_next(ctx)


def build_server(access_of: AccessOf, reader_of: ReaderOf) -> MCPServer:
    known = KnownArguments()
    server: MCPServer = MCPServer(
        "evidenceqa", title="evidenceqa", instructions=INSTRUCTIONS, version=__version__,
        log_level="WARNING", middleware=[known],
    )  # fmt: skip

    async def search_evidence(
        question: Question,
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=50, description="How many passages.")] = 10,
        year_min: YearMin = None,
        year_max: YearMax = None,
        collection: Collection = None,
        doc_type: DocType = None,
        evidence_type: EvidenceType = None,
        prefer_evidence: PreferEvidence = False,
    ) -> SearchEvidenceOut:
        """Ranked passages of the library for a question (hybrid keyword and semantic search), each
        with its document's title, authors, year, journal, DOI or address, licence and a ready
        reference (`cite`). Quote the passage text and cite it; never cite what no passage says."""
        filters = _filters(year_min, year_max, collection, doc_type, evidence_type, prefer_evidence)
        return await _tool(lambda: access_of().search(reader_of(ctx), question, k, filters))

    async def answer_question(
        question: Question,
        ctx: Context,
        year_min: YearMin = None,
        year_max: YearMax = None,
        collection: Collection = None,
        doc_type: DocType = None,
        evidence_type: EvidenceType = None,
        prefer_evidence: PreferEvidence = False,
        earlier_questions: Earlier = None,
    ) -> AnswerOut:
        """A checked answer drawn only from the library, the finding first, with numbered citations
        ([1], [2]…) to the exact supporting passages, or an abstention (`abstained`: true) when the
        library does not hold the answer. The answer is kept in the caller's conversations."""
        filters = _filters(year_min, year_max, collection, doc_type, evidence_type, prefer_evidence)
        earlier = earlier_questions or []
        return await _tool(
            lambda: access_of().answer(reader_of(ctx), question, filters, "mcp", earlier=earlier)
        )

    async def get_passage(
        ctx: Context,
        chunk_id: Annotated[str, Field(min_length=1, max_length=300, description="A passage's chunk_id.")],
        context: Annotated[int, Field(ge=0, le=5, description="Passages to add on each side.")] = 1,
    ) -> PassageInContext:
        """One passage with its neighbours in the document (before and after, in reading order) and
        its document's attribution: for reading around a passage that search_evidence found."""
        return await _tool(lambda: access_of().passage(reader_of(ctx), chunk_id, context))

    async def list_collections(ctx: Context) -> LibraryOut:
        """What the library holds: per collection, its documents, passages, years and last update."""
        return await _tool(lambda: access_of().holdings(reader_of(ctx)))

    for tool in (search_evidence, get_passage, list_collections):
        known.add(server, tool, _READ_ONLY)
    # An answer is stored in the caller's conversations: not read-only, and each call a new record.
    known.add(server, answer_question, ToolAnnotations(read_only_hint=False, idempotent_hint=False,
                                                       open_world_hint=False))  # fmt: skip

    @server.resource(
        "evidenceqa://document/{+doc_id}", name="document", mime_type="text/markdown",
        description="A whole document of the library as Markdown: its title, reference and sections.",
    )  # fmt: skip
    async def document(doc_id: str, ctx: Context) -> str:
        try:
            _, text = await access_of().document(reader_of(ctx), doc_id)
        except HTTPException as exc:
            raise ResourceError(exc.detail) from exc
        return text

    return server


def _filters(year_min: int | None, year_max: int | None, collection: str | None, doc_type: str | None,
             evidence_type: str | None, prefer_evidence: bool) -> EvidenceFilters:  # fmt: skip
    """The tool's filters, or a tool error with the reason one is refused (an unknown evidence type)."""
    try:
        return EvidenceFilters(
            year_min=year_min, year_max=year_max, collection=collection, doc_type=doc_type,
            evidence_type=evidence_type, prefer_evidence=prefer_evidence,
        )  # fmt: skip
    except ValidationError as exc:
        raise ToolError(
            "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        ) from None


async def _tool(call: Callable[[], Awaitable[T]]) -> T:
    """The call's result, or a tool error with its one-line reason (too long, rate-limited, not found)."""
    try:
        return await call()
    except HTTPException as exc:
        raise ToolError(exc.detail) from exc


def http_reader(ctx: Context) -> Reader:
    """The API token's owner and what they may read, as the HTTP endpoint found them."""
    request = ctx.request_context.request
    reader = request.scope.get(READER_SCOPE_KEY) if request is not None else None
    if not isinstance(reader, Reader):  # the endpoint refuses a request without one before any tool runs
        raise ToolError("an API token is required")
    return reader


class BearerEndpoint:
    """/mcp: the MCP app behind an API token (no cookies: an agent is not a browser), 401 without."""

    def __init__(self, app: Starlette, reader_of_token: Callable[[str], Awaitable[Reader | None]]) -> None:
        self.app = app
        self.reader_of_token = reader_of_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or [])
        scheme, _, raw = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        reader = (
            await self.reader_of_token(raw.strip()) if scheme.lower() == "bearer" and raw.strip() else None
        )
        if reader is None:
            refusal = JSONResponse(
                {"error": "send an API token: Authorization: Bearer <token> (made on the tokens page "
                          "or with `evidenceqa token create`)"},
                status_code=401, headers={"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
            await refusal(scope, receive, send)
            return
        await self.app({**scope, READER_SCOPE_KEY: reader}, receive, send)


def http_app(server: MCPServer, access_of: AccessOf) -> tuple[ASGIApp, Any]:
    """The ASGI endpoint for /mcp and the session manager whose `run()` the app's lifespan enters."""
    # DNS-rebinding protection guards servers that trust whoever can reach them; this one needs an
    # API token, which no other site's page can send, and it is served under the operator's own names.
    app = server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )  # fmt: skip

    async def reader_of_token(token: str) -> Reader | None:
        store = access_of().services.store
        owner = await run_in_threadpool(token_owner, store, token)
        return await reader_of(store, *owner) if owner is not None else None

    return BearerEndpoint(app, reader_of_token), server.session_manager
