"""`evidenceqa mcp`: the MCP server over stdio, for a desktop assistant that starts it; and
`evidenceqa token`: API tokens from the server's shell, for operators who script deployments.

The stdio server acts for the owner of the API token in EVIDENCEQA_API_TOKEN (not an argument: the
process list shows arguments to everyone), checked again at every call, so a revoked token or a
deactivated account stops it at once. Its answers are stored in that user's conversations, like
the web app's. Nothing but the protocol is written to stdout.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from typing import TYPE_CHECKING, Annotated

import typer

from evidenceqa.cli.app import app
from evidenceqa.cli.common import emit, fail, out, settings_of
from evidenceqa.cli.serve import find_user
from evidenceqa.settings import Settings
from evidenceqa.store import (
    AccountError,
    EntitlementError,
    access_of,
    api_tokens_of,
    create_api_token,
    open_store,
    revoke_api_token,
    token_owner,
)
from evidenceqa.store.db import Store

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

# The extra's check without importing the SDK, which would add a second to every command's start.
if importlib.util.find_spec("mcp") is None:
    raise ModuleNotFoundError("No module named 'mcp'", name="mcp")

TOKEN_VARIABLE = "EVIDENCEQA_API_TOKEN"
token_app = typer.Typer(help="API tokens (for scripts, MCP clients and OpenAI-compatible clients).",
                        no_args_is_help=True)  # fmt: skip
app.add_typer(token_app, name="token")


@app.command()
def mcp(ctx: typer.Context) -> None:
    """Serve the library to an MCP client over stdio (search_evidence, answer_question, get_passage,
    list_collections; documents as evidenceqa://document/{doc_id}), acting for the owner of the API
    token in $EVIDENCEQA_API_TOKEN."""
    settings = settings_of(ctx)
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        fail(f"set {TOKEN_VARIABLE} to an API token (evidenceqa token create --user EMAIL --name NAME)")
    with open_store(settings) as store:
        if token_owner(store, token) is None:
            fail(f"{TOKEN_VARIABLE} is not a valid API token of an active account")
        asyncio.run(_serve_stdio(settings, store, token))


async def _serve_stdio(settings: Settings, store: Store, token: str) -> None:
    from starlette.exceptions import HTTPException

    from evidenceqa.web.agent_access import AgentAccess
    from evidenceqa.web.entitlements import Reader
    from evidenceqa.web.guards import Guards
    from evidenceqa.web.library import Library
    from evidenceqa.web.mcp import build_server
    from evidenceqa.web.services import Services

    library = await Library.open(settings)
    try:
        access = AgentAccess(Services(settings, store, library), Guards.open(settings, store))

        def reader(ctx: Context) -> Reader:  # a few indexed reads: the token is checked at every call
            owner = token_owner(store, token)
            if owner is None:
                raise HTTPException(401, f"{TOKEN_VARIABLE} was revoked or its account deactivated")
            return Reader(owner[0], access_of(store, *owner))

        await build_server(lambda: access, reader).run_stdio_async()
    finally:
        library.close()


@token_app.command("create")
def create(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="The email of the account it acts for.")],
    name: Annotated[str, typer.Option("--name", help="What will use it (e.g. 'ward chatbot').")],
    collections: Annotated[
        str | None, typer.Option(help="Comma-separated: it reads only these (default: all the account may).")
    ] = None,
) -> None:
    """A new API token for an account, printed once (only its hash is kept)."""
    held = [c.strip() for c in collections.split(",")] if collections is not None else None
    with open_store(settings_of(ctx)) as store:
        try:
            record, raw = create_api_token(store, find_user(store, user), name, held)
        except (AccountError, EntitlementError) as exc:
            fail(str(exc))
    out.print(raw, highlight=False)
    typer.echo(f"token {record.id} ({record.name}) for {user}: shown only now; keep it secret", err=True)


@token_app.command("list")
def list_tokens(
    ctx: typer.Context, user: Annotated[str, typer.Option("--user", help="The account's email.")]
) -> None:
    """An account's tokens: id, name, when made and last used (never the tokens themselves)."""
    with open_store(settings_of(ctx)) as store:
        tokens = api_tokens_of(store, find_user(store, user))
    rows = [[t.id, t.name, ", ".join(t.collections) if t.collections is not None else "all it may read",
             f"{t.created_at:%Y-%m-%d %H:%M}", f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never"]
            for t in tokens]  # fmt: skip
    emit(["Id", "Name", "Collections", "Created", "Last used"], rows, as_markdown=False)


@token_app.command("revoke")
def revoke(
    ctx: typer.Context,
    token_id: Annotated[int, typer.Argument(help="The token's id (evidenceqa token list).")],
    user: Annotated[str, typer.Option("--user", help="The email of the account it belongs to.")],
) -> None:
    """Revoke one of an account's tokens: every client using it is refused from now on."""
    with open_store(settings_of(ctx)) as store:
        if not revoke_api_token(store, find_user(store, user), token_id):
            fail(f"{user} has no token {token_id}")
    out.print(f"token {token_id} revoked", highlight=False)
