"""`evidenceqa serve` and `evidenceqa admin`: the first administrator's password in a file only its
owner reads (never in the output), an operator's password reset and (de)activation from the shell, and
forwarded headers believed from trusted proxies only (checked on a real uvicorn server)."""

from __future__ import annotations

import asyncio
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from evidenceqa.cli import app
from evidenceqa.cli.serve import first_admin, proxy_options, tcp_listener, worker_environment
from evidenceqa.settings import Settings
from evidenceqa.store import authenticate, create_user, list_users, open_store, session_user, start_session

PASSWORD = "correct horse battery"


def test_the_first_start_creates_one_administrator_with_a_private_password_file(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, admin_email="Lead@Example.org")
    created = first_admin(settings)
    assert created is not None
    email, path = created
    assert email == "Lead@Example.org" and path.parent == tmp_path / "secrets"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    password = path.read_text(encoding="utf-8").strip()
    assert len(password) >= 16
    assert first_admin(settings) is None  # accounts exist: no second admin, no new password
    with open_store(settings) as store:
        [admin] = list_users(store)
        assert admin.is_admin and admin.email == "lead@example.org"
        found = authenticate(store, email, password)
        assert found is not None and found.id == admin.id


def _admin_command(home: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--home", str(home), "admin", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_an_operator_resets_a_password_and_every_session_of_it_ends(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with open_store(settings) as store:
        user = create_user(store, "Ann@Example.org", "Ann", PASSWORD, is_admin=True)
        cookie, _ = start_session(store, user)
    printed = _admin_command(tmp_path, "reset-password", "ANN@example.org")
    path = tmp_path / "secrets" / "password-ann@example.org"
    assert str(path) in printed.replace("\n", "")
    new = path.read_text(encoding="utf-8").strip()
    assert new not in printed and stat.S_IMODE(path.stat().st_mode) == 0o600
    with open_store(settings) as store:
        assert authenticate(store, "ann@example.org", PASSWORD) is None
        assert authenticate(store, "ann@example.org", new) is not None
        assert session_user(store, cookie) is None


def test_an_operator_deactivates_and_reactivates_an_account(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with open_store(settings) as store:
        user = create_user(store, "bob@example.org", "Bob", PASSWORD)
        cookie, _ = start_session(store, user)
    assert "deactivated" in _admin_command(tmp_path, "deactivate", "bob@example.org")
    assert "bob@example.org" in _admin_command(tmp_path, "users")
    with open_store(settings) as store:
        assert (
            authenticate(store, "bob@example.org", PASSWORD) is None and session_user(store, cookie) is None
        )
    _admin_command(tmp_path, "activate", "bob@example.org")
    with open_store(settings) as store:
        assert authenticate(store, "bob@example.org", PASSWORD) is not None


def test_an_unknown_account_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["--home", str(tmp_path), "admin", "reset-password", "nobody@example.org"]
    )
    assert result.exit_code == 2 and "no account with the email 'nobody@example.org'" in result.output


def test_several_workers_with_counters_in_each_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVIDENCEQA_GUARD_COUNTERS", "memory")
    result = CliRunner().invoke(app, ["--home", str(tmp_path), "serve", "--workers", "2"])
    assert result.exit_code == 2
    assert result.output.startswith("error: guard_counters 'memory' keeps each worker's counts apart")
    assert not (tmp_path / "secrets").exists()  # refused before anything was made


def test_each_worker_reads_what_the_command_line_chose(tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path / "home", backend="milvus", web_workers=3, public_url="https://e.example"
    )
    assert worker_environment(settings) == {
        "EVIDENCEQA_HOME": str((tmp_path / "home").resolve()), "EVIDENCEQA_EMBEDDER": "minilm-onnx",
        "EVIDENCEQA_BACKEND": "milvus", "EVIDENCEQA_WEB_WORKERS": "3", "EVIDENCEQA_PUBLIC_URL": "https://e.example",
    }  # fmt: skip


def _nodelay_of_a_connection(listener: socket.socket) -> int:
    """TCP_NODELAY of a connection asyncio accepts on `listener`, as a uvicorn worker's event loop does."""

    async def accept_one() -> int:
        loop = asyncio.get_running_loop()
        seen: asyncio.Future[int] = loop.create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                accepted = transport.get_extra_info("socket")
                seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await loop.create_server(Probe, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            server.close()

    return asyncio.run(accept_one())


def test_the_socket_workers_share_gives_each_connection_tcp_nodelay() -> None:
    # Without it a keep-alive response waits ~40 ms on the client's delayed ACK (benchmarks/load.py).
    listener = tcp_listener(
        uvicorn.Config(_client_address, host="127.0.0.1", port=0, workers=2).bind_socket()
    )
    assert listener.proto == socket.IPPROTO_TCP and listener.get_inheritable()
    assert _nodelay_of_a_connection(listener) != 0


async def _client_address(scope: dict, receive: object, send: object) -> None:
    """An ASGI app answering with the address uvicorn says the client has."""
    if scope["type"] != "http":
        return
    body = scope["client"][0].encode()
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]}
    )  # type: ignore[operator]
    await send({"type": "http.response.body", "body": body})  # type: ignore[operator]


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[str]:
    """uvicorn with serve's forwarded-header options for the given settings, on a free loopback port."""
    settings: Settings = request.param
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(_client_address, host="127.0.0.1", port=port, log_level="warning",
                            **proxy_options(settings))  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(10)


SPOOFED = {"X-Forwarded-For": "203.0.113.7"}


@pytest.mark.parametrize("served", [Settings()], indirect=True)
def test_a_forwarded_for_header_is_not_believed_by_default(served: str) -> None:
    assert httpx.get(served, headers=SPOOFED).text == "127.0.0.1"


@pytest.mark.parametrize("served", [Settings(trusted_proxies=["127.0.0.1"])], indirect=True)
def test_a_trusted_proxy_s_forwarded_for_header_is_believed(served: str) -> None:
    assert httpx.get(served, headers=SPOOFED).text == "203.0.113.7"
