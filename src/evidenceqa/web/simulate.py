"""A simulated pilot: a question file replayed as several clinicians through the real HTTP API, with
scripted feedback, so the report has real rows (for tests and demos).

Everything goes through the routes a browser uses: an administrator creates the users
(`POST /api/admin/users`), each logs in (`POST /login`, the CSRF token from the chat page), asks
(`POST /api/ask`, a new conversation every `per_conversation` questions) and rates
(`POST /api/answers/{id}/feedback`). Question i is asked by user i mod N; every `repeat_every`-th
question is asked again at once by the next user (the answer cache serves it). Against a running
`evidenceqa serve` this uses httpx over the network; `in_process` runs the app itself, with the
store's clock moved so the pilot spreads over weeks.

Scripted feedback (`Script`): every `skip_every`-th answer is left unrated, so the response rate is
below 100%; otherwise Excellent when the first cited document is a gold one, Acceptable when a gold
document is cited further down, Acceptable for "I don't know" to a question with no gold document
(a gap the library should not answer), Very poor for the rest.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx

from evidenceqa.jsonl import read_rows
from evidenceqa.store import create_user
from evidenceqa.store.options import StoreOptions
from evidenceqa.web.options import AppOptions

CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


class HttpResponse(Protocol):
    @property
    def status_code(self) -> int: ...
    @property
    def text(self) -> str: ...
    def json(self) -> Any: ...


class HttpClient(Protocol):
    """What the replay uses of a client: an httpx.Client, or Starlette's TestClient, which is an
    httpx2.Client, not an httpx one, where httpx2 is installed."""

    def get(self, url: str) -> HttpResponse: ...
    def post(
        self,
        url: str,
        *,
        data: dict[str, str] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> HttpResponse: ...


FORM_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def log_in(client: HttpClient, email: str, password: str, **fields: str) -> HttpResponse:
    """Log in as a browser does: open the login page (its form token and cookie), then send the form.
    The response is the form's: 303 to the chat when the login worked."""
    page = client.get("/login")
    found = FORM_TOKEN.search(page.text)
    token = found.group(1) if found else ""
    return client.post("/login", data={"email": email, "password": password, "csrf_token": token, **fields})


ClientFactory = Callable[[], HttpClient]


@dataclass(frozen=True)
class PilotQuestion:
    question: str
    query_id: str | None = None
    gold_doc_ids: tuple[str, ...] = ()  # none: a question the library should not answer


def read_questions(path: Path, limit: int | None = None) -> list[PilotQuestion]:
    """JSONL rows with `question` and optionally `query_id` and `gold_doc_ids` (a benchmark file)."""
    return list(islice(read_rows(path, _pilot_question, "a question row"), limit or None))


def _pilot_question(row: dict[str, Any]) -> PilotQuestion:
    return PilotQuestion(str(row["question"]), row.get("query_id"), tuple(row.get("gold_doc_ids") or ()))


def mix(
    questions: list[PilotQuestion], holds: Callable[[str], bool], answerable: int, gaps: int
) -> list[PilotQuestion]:
    """A pilot's mix from a benchmark: the first `answerable` questions whose gold documents the
    library `holds`, and the first `gaps` whose gold documents it lacks (their gold dropped: in this
    library nothing answers them), the gaps spread evenly among the others."""
    inside = [q for q in questions if q.gold_doc_ids and all(map(holds, q.gold_doc_ids))]
    outside = [q for q in questions if q.gold_doc_ids and not any(map(holds, q.gold_doc_ids))]
    inside, outside = inside[:answerable], [replace(q, gold_doc_ids=()) for q in outside[:gaps]]
    # Each list spread evenly over [0, 1); merged by position (stable: answerable first on ties).
    placed = [(i / len(inside), q) for i, q in enumerate(inside)]
    placed += [((j + 0.5) / len(outside), q) for j, q in enumerate(outside)]
    return [q for _, q in sorted(placed, key=lambda pair: pair[0])]


@dataclass(frozen=True)
class Script:
    """The simulated clinicians' feedback rules (see the module notes)."""

    skip_every: int = 4  # 0: rate every answer

    def rating(self, turn: int, question: PilotQuestion, answer: dict[str, Any]) -> str | None:
        if self.skip_every and turn % self.skip_every == self.skip_every - 1:
            return None
        cited = [c["doc_id"] for c in answer["citations"]]
        gold = set(question.gold_doc_ids)
        if cited and cited[0] in gold:
            return "excellent"
        if gold & set(cited):
            return "acceptable"
        if answer["abstained"] and not gold:
            return "acceptable"
        return "very_poor"


@dataclass
class SimUser:
    email: str
    password: str
    client: HttpClient
    csrf: str = ""
    conversation_id: int | None = None
    asked_here: int = 0  # questions in the current conversation

    def login(self) -> None:
        response = log_in(self.client, self.email, self.password)
        if response.status_code != 303:
            raise RuntimeError(f"{self.email} could not log in: HTTP {response.status_code}")
        found = CSRF_META.search(self.client.get("/").text)
        if found is None:
            raise RuntimeError("the chat page carries no CSRF token")
        self.csrf = found.group(1)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """A JSON POST; logs in again once if the session has expired (the clock may jump weeks)."""
        response = self._post(path, body)
        if response.status_code == 401:
            self.login()
            response = self._post(path, body)
        if response.status_code >= 400:
            raise RuntimeError(f"POST {path}: HTTP {response.status_code}: {response.text[:200]}")
        return response.json()

    def _post(self, path: str, body: dict[str, Any]) -> HttpResponse:
        return self.client.post(path, json=body, headers={"X-CSRF-Token": self.csrf})


@dataclass(frozen=True)
class Turn:
    user: str
    question: str
    answer_id: int
    abstained: bool
    cited: list[str]
    cache_hit: bool
    rating: str | None


@dataclass
class Simulation:
    turns: list[Turn] = field(default_factory=list)

    @property
    def rated(self) -> int:
        return sum(t.rating is not None for t in self.turns)


def make_users(admin: SimUser, count: int, tag: str, factory: ClientFactory) -> list[SimUser]:
    """`count` clinicians created by the administrator through the API, logged in."""
    users = []
    for n in range(1, count + 1):
        email = f"clinician{n}.{tag}@example.org"
        password = secrets.token_urlsafe(16)
        admin.post(
            "/api/admin/users", {"email": email, "name": f"Clinician {n} ({tag})", "password": password}
        )
        user = SimUser(email, password, factory())
        user.login()
        users.append(user)
    return users


def schedule(
    questions: list[PilotQuestion], users: int, repeat_every: int
) -> list[tuple[int, PilotQuestion]]:
    """(user index, question) in the order asked: question i by user i mod N, and every
    `repeat_every`-th one again at once by the next user."""
    order = []
    for i, question in enumerate(questions):
        order.append((i % users, question))
        if repeat_every and i % repeat_every == 0 and users > 1:
            order.append(((i + 1) % users, question))
    return order


def replay(
    admin: SimUser,
    factory: ClientFactory,
    questions: list[PilotQuestion],
    users: int = 3,
    tag: str = "sim",
    per_conversation: int = 3,
    repeat_every: int = 5,
    script: Script | None = None,
    before_turn: Callable[[int, int], None] | None = None,
) -> Simulation:
    """Replay `questions` as `users` clinicians; `before_turn(k, total)` runs before each question."""
    script = script or Script()
    admin.login()
    people = make_users(admin, users, tag, factory)
    order = schedule(questions, users, repeat_every)
    simulation = Simulation()
    for k, (who, question) in enumerate(order):
        if before_turn is not None:
            before_turn(k, len(order))
        simulation.turns.append(_ask(people[who], question, k, script, per_conversation))
    return simulation


def _ask(user: SimUser, question: PilotQuestion, turn: int, script: Script, per_conversation: int) -> Turn:
    if user.asked_here >= per_conversation:
        user.conversation_id, user.asked_here = None, 0
    answer = user.post("/api/ask", {"question": question.question, "conversation_id": user.conversation_id})
    user.conversation_id, user.asked_here = answer["conversation_id"], user.asked_here + 1
    rating = script.rating(turn, question, answer)
    if rating is not None:
        user.post(f"/api/answers/{answer['answer_id']}/feedback", {"rating": rating})
    cited = [c["doc_id"] for c in answer["citations"]]
    return Turn(user.email, question.question, answer["answer_id"], answer["abstained"], cited,
                answer["cache_hit"], rating)  # fmt: skip


@dataclass
class SimClock:
    """The store's time during an in-process pilot: set before each question."""

    at: datetime

    def __call__(self) -> datetime:
        return self.at


def spread(clock: SimClock, start: datetime, days: float) -> Callable[[int, int], None]:
    """A `before_turn` that spaces the questions evenly over `days` from `start`."""

    def move(k: int, total: int) -> None:
        clock.at = start + timedelta(days=days * k / max(total, 1))

    return move


@contextmanager
def in_process(
    settings: AppOptions, tag: str, start: datetime | None = None
) -> Iterator[tuple[SimUser, ClientFactory, SimClock]]:
    """The app run in this process (its real routes, no network), an administrator for the replay,
    a client factory, and the store's clock (from `start`, else now)."""
    from fastapi.testclient import TestClient

    from evidenceqa.web.app import create_app

    app = create_app(settings)
    clock = SimClock(start or datetime.now(UTC))

    def factory() -> HttpClient:
        return TestClient(app, follow_redirects=False)

    with TestClient(app, follow_redirects=False) as client:
        store = app.state.services.store
        store.clock = clock
        email, password = f"pilot-admin.{tag}@example.org", secrets.token_urlsafe(16)
        create_user(store, email, f"Pilot admin ({tag})", password, is_admin=True)
        yield SimUser(email, password, client), factory, clock


S = TypeVar("S", bound=StoreOptions)
SIMULATED_DATABASE = "simulated-pilot.sqlite3"


def simulated_settings(settings: S) -> S:
    """The settings with the simulated pilot's own SQLite database in the data home: scripted users,
    backdated answers and ratings never mix with a real pilot's."""
    path = (settings.home / SIMULATED_DATABASE).resolve()
    return settings.model_copy(update={"database_url": f"sqlite:///{path}"})


def delete_simulated(settings: StoreOptions) -> None:
    """Start the simulated pilot again: its database file goes, nothing else."""
    for suffix in ("", "-wal", "-shm"):
        (settings.home / f"{SIMULATED_DATABASE}{suffix}").unlink(missing_ok=True)


def remote(url: str) -> ClientFactory:
    """Clients of a running `evidenceqa serve` at `url`."""
    return lambda: httpx.Client(base_url=url, follow_redirects=False, timeout=300)
