"""`evidenceqa serve`: the web app and its API, with a first administrator on first start."""

from __future__ import annotations

import secrets
from typing import Annotated

import typer

from evidenceqa.cli.app import app
from evidenceqa.cli.common import fail, out, settings_of
from evidenceqa.config import Settings
from evidenceqa.store import AccountError, create_user, list_users, open_store


def first_admin(settings: Settings) -> tuple[str, str] | None:
    """With no accounts yet, an administrator with a random password: (email, password), else None.
    The password is shown once and kept nowhere but its hash."""
    with open_store(settings) as store:
        if list_users(store):
            return None
        password = secrets.token_urlsafe(12)
        create_user(store, settings.admin_email, "Administrator", password, is_admin=True)
        return settings.admin_email, password


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
) -> None:
    """Serve the chat and the API. Behind a TLS reverse proxy on this machine (X-Forwarded-Proto: https),
    session cookies are marked Secure."""
    import uvicorn

    from evidenceqa.web.app import create_app

    settings = settings_of(ctx)
    try:
        admin = first_admin(settings)
    except AccountError as exc:
        fail(f"cannot create the first administrator ({settings.admin_email}): {exc}")
    url = f"http://{'localhost' if host in ('127.0.0.1', '0.0.0.0') else host}:{port}/"
    out.print(f"evidenceqa: {url}", highlight=False)
    if admin:
        out.print(
            f"first administrator created: {admin[0]} · password {admin[1]} (shown only now)", highlight=False
        )
    else:
        out.print(
            f"log in with your account (the first administrator is {settings.admin_email})", highlight=False
        )
    uvicorn.run(create_app(settings), host=host, port=port)
