"""`evidenceqa serve`: the web app and its API, with a first administrator on first start; and
`evidenceqa admin`, what an operator does from the server's shell (a locked-out administrator).

A password made here is written to a file only its owner can read, in the data home, and only that
file's path is printed: serve's output lands in journald or a container log, which others read.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from evidenceqa.cli.app import app
from evidenceqa.cli.common import emit, fail, out, settings_of
from evidenceqa.library.vocabulary import library_shorthand
from evidenceqa.settings import Settings
from evidenceqa.store import (
    AccountError,
    EntitlementError,
    Store,
    User,
    create_user,
    grant,
    list_users,
    open_store,
    open_to_all,
    restrict,
    restricted_collections,
    set_active,
    set_password,
    withdraw,
)

admin_app = typer.Typer(help="Accounts, from the server's shell: reset a password, (de)activate a user, "
                             "restrict collections to the accounts granted them.",
                        no_args_is_help=True)  # fmt: skip
app.add_typer(admin_app, name="admin")


def write_secret(settings: Settings, name: str, secret: str) -> Path:
    """`secret` in <home>/secrets/<name>, readable by this account only (0600, in a 0700 folder)."""
    folder = settings.home / "secrets"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    path = folder / name
    path.unlink(missing_ok=True)  # a new file gets the mode below whatever the old one had
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    return path


def first_admin(settings: Settings) -> tuple[str, Path] | None:
    """With no accounts yet, an administrator with a random password: (email, the file holding the
    password), else None. The password is kept nowhere else but as its hash."""
    with open_store(settings) as store:
        if list_users(store):
            return None
        password = secrets.token_urlsafe(12)
        create_user(store, settings.admin_email, "Administrator", password, is_admin=True)
        return settings.admin_email, write_secret(settings, "first-admin-password", password)


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    workers: Annotated[
        int | None, typer.Option(min=1, max=64, help="Worker processes (default: web_workers, 1).")
    ] = None,
) -> None:
    """Serve the chat and the API. Behind a TLS reverse proxy, list it in trusted_proxies: only then are
    its X-Forwarded-For and X-Forwarded-Proto believed (and session cookies marked Secure over https).
    With several workers, rate limits and failed logins are counted in the database (or Redis)."""
    import uvicorn

    from evidenceqa.web.app import create_app

    settings = settings_of(ctx)
    if workers is not None:
        settings = _checked(settings, web_workers=workers)
    library_shorthand(settings.shorthand_path)  # a malformed file: one line now, not a failed startup
    try:
        admin = first_admin(settings)
    except AccountError as exc:
        fail(f"cannot create the first administrator ({settings.admin_email}): {exc}")
    url = f"http://{'localhost' if host in ('127.0.0.1', '0.0.0.0') else host}:{port}/"
    if settings.public_url is None:  # invite links point where this server listens
        settings = settings.model_copy(update={"public_url": url})
    out.print(f"evidenceqa: {url}", highlight=False)
    if admin:
        out.print(
            f"first administrator created: {admin[0]} · password in {admin[1]} (readable by this account "
            "only; delete it once you have logged in)",
            highlight=False,
            soft_wrap=True,  # one line: the path must not be broken
        )
    else:
        out.print(
            f"log in with your account (the first administrator is {settings.admin_email})", highlight=False
        )
    if settings.web_workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, **proxy_options(settings))
        return
    # Each worker is a fresh process that makes its app from the environment: give it what this
    # command decided beyond the environment and evidenceqa.toml. This is uvicorn.run's own path for
    # several workers, with the listening socket mended (tcp_listener).
    from uvicorn.supervisors import Multiprocess

    os.environ.update(worker_environment(settings))
    config = uvicorn.Config("evidenceqa.asgi:from_environment", factory=True, workers=settings.web_workers,
                            host=host, port=port, **proxy_options(settings))  # fmt: skip
    Multiprocess(config, sockets=[tcp_listener(config.bind_socket())]).run()


def tcp_listener(sock: socket.socket) -> socket.socket:
    """`sock` marked as TCP. uvicorn binds the socket it hands its workers with protocol 0
    (Kludex/uvicorn#3149); accepted connections inherit it, and asyncio sets TCP_NODELAY only on
    sockets that say TCP, so every keep-alive response waited ~40 ms on the client's delayed ACK."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    marked = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
    marked.set_inheritable(True)
    return marked


def _checked(settings: Settings, **update: Any) -> Settings:
    """`settings` with `update`, validated again (a copy alone would skip the validators)."""
    try:
        return Settings.model_validate({**settings.model_dump(), **update})
    except ValidationError as exc:
        fail(exc.errors()[0]["msg"].removeprefix("Value error, "))


def worker_environment(settings: Settings) -> dict[str, str]:
    """The settings the command line can change (the data home, embedder, backend, workers) and the
    public URL `serve` fills in, as the EVIDENCEQA_* variables a worker process reads."""
    chosen = {"home": str(settings.home.resolve()), "embedder": settings.embedder, "backend": settings.backend,
              "web_workers": str(settings.web_workers), "public_url": settings.public_url}  # fmt: skip
    return {f"EVIDENCEQA_{name.upper()}": value for name, value in chosen.items() if value is not None}


def proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's forwarded-header options: by default it believes X-Forwarded-For from 127.0.0.1, so a
    client on this machine (or behind a proxy that does not set the header) could choose the address
    its failed logins count against. Here only the trusted_proxies are believed."""
    trusted = settings.trusted_proxies
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": trusted or None}


def find_user(store: Store, email: str) -> User:
    """The account with this email, else a one-line error."""
    wanted = email.strip().lower()
    for user in list_users(store):
        if user.email == wanted:
            return user
    fail(f"no account with the email {email!r}")


@admin_app.command("reset-password")
def reset_password(
    ctx: typer.Context, email: Annotated[str, typer.Argument(help="The account's email.")]
) -> None:
    """A new random password for EMAIL, written to a file only this account can read; every session
    of that user ends. For an administrator locked out of the web app."""
    settings = settings_of(ctx)
    password = secrets.token_urlsafe(12)
    with open_store(settings) as store:
        user = find_user(store, email)
        set_password(store, user, password)
    name = "password-" + re.sub(r"[^a-z0-9.@_-]", "_", user.email)
    out.print(f"new password for {user.email} in {write_secret(settings, name, password)}", highlight=False)


@admin_app.command("deactivate")
def deactivate(
    ctx: typer.Context, email: Annotated[str, typer.Argument(help="The account's email.")]
) -> None:
    """Refuse EMAIL's logins and API tokens from now on (its sessions end); its conversations stay."""
    _set_active(settings_of(ctx), email, False)


@admin_app.command("activate")
def activate(ctx: typer.Context, email: Annotated[str, typer.Argument(help="The account's email.")]) -> None:
    """Let a deactivated EMAIL log in again."""
    _set_active(settings_of(ctx), email, True)


def _set_active(settings: Settings, email: str, active: bool) -> None:
    with open_store(settings) as store:
        user = find_user(store, email)
        set_active(store, user, active)
    out.print(f"{user.email}: {'active' if active else 'deactivated'}", highlight=False)


@admin_app.command("users")
def users(ctx: typer.Context) -> None:
    """Every account: email, name, role, whether it is active."""
    with open_store(settings_of(ctx)) as store:
        rows = [[u.email, u.name, "admin" if u.is_admin else "clinician", "yes" if u.active else "no"]
                for u in list_users(store)]  # fmt: skip
    emit(["Email", "Name", "Role", "Active"], rows, as_markdown=False)


Collection = Annotated[str, typer.Argument(help="The collection's name (as ingested).")]
Email = Annotated[str, typer.Option("--user", help="The account's email.")]


@admin_app.command("collections")
def collections(ctx: typer.Context) -> None:
    """The restricted collections and the accounts granted each; every other collection is open."""
    with open_store(settings_of(ctx)) as store:
        rows = [
            [name, ", ".join(emails) or "nobody yet"]
            for name, emails in restricted_collections(store).items()
        ]
    emit(["Restricted collection", "Granted to"], rows, as_markdown=False)


@admin_app.command("restrict")
def restrict_collection(ctx: typer.Context, collection: Collection) -> None:
    """Only the accounts granted COLLECTION may read it from now on (search, answers, MCP, /v1)."""
    with open_store(settings_of(ctx)) as store:
        changed = _entitlement(lambda: restrict(store, collection))
    out.print(f"{collection}: restricted" + ("" if changed else " (it already was)"), highlight=False)


@admin_app.command("open")
def open_collection(ctx: typer.Context, collection: Collection) -> None:
    """Every account may read COLLECTION again; its grants go."""
    with open_store(settings_of(ctx)) as store:
        if not open_to_all(store, collection):
            fail(f"{collection!r} is not a restricted collection")
    out.print(f"{collection}: open to every account", highlight=False)


@admin_app.command("grant")
def grant_collection(ctx: typer.Context, collection: Collection, email: Email) -> None:
    """Let an account read a restricted COLLECTION."""
    with open_store(settings_of(ctx)) as store:
        _entitlement(lambda: grant(store, find_user(store, email), collection))
    out.print(f"{email} may read {collection}", highlight=False)


@admin_app.command("withdraw")
def withdraw_collection(ctx: typer.Context, collection: Collection, email: Email) -> None:
    """An account may no longer read a restricted COLLECTION (its tokens included)."""
    with open_store(settings_of(ctx)) as store:
        if not withdraw(store, find_user(store, email), collection):
            fail(f"{email} had no grant of {collection!r}")
    out.print(f"{email} may no longer read {collection}", highlight=False)


T = TypeVar("T")


def _entitlement(change: Callable[[], T]) -> T:
    try:
        return change()
    except EntitlementError as exc:
        fail(str(exc))
