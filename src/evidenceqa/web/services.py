"""What every request handler shares, set up once by the app's lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fastapi import Request

from evidenceqa.store.db import Store
from evidenceqa.web.library import Library
from evidenceqa.web.options import AppOptions


@dataclass
class Services:
    settings: AppOptions
    store: Store
    library: Library
    # Answers still being produced for a client that disconnected: held so they finish and are stored.
    tasks: set[asyncio.Task[object]] = field(default_factory=set)


def services_of(request: Request) -> Services:
    return request.app.state.services


T = TypeVar("T")
OnDelta = Callable[[str], None]


class AnswerStream(Generic[T]):
    """An answer being produced, and the pieces of text its generator writes, in order.

    The answer runs as its own task, held by the app, so a client that goes away mid-answer does not
    lose it: it is still produced and stored, and shows in the conversation when they come back."""

    def __init__(self, services: Services, produce: Callable[[OnDelta], Coroutine[Any, Any, T]]) -> None:
        loop = asyncio.get_running_loop()
        self._pieces: asyncio.Queue[str | None] = asyncio.Queue()

        def on_delta(text: str) -> None:  # called on the engine's thread
            loop.call_soon_threadsafe(self._pieces.put_nowait, text)

        self.task = asyncio.create_task(produce(on_delta))
        services.tasks.add(self.task)
        self.task.add_done_callback(services.tasks.discard)
        # Pieces are queued on the loop before the task can finish, so the end marker comes last.
        self.task.add_done_callback(lambda _: self._pieces.put_nowait(None))

    async def pieces(self) -> AsyncIterator[str]:
        while (text := await self._pieces.get()) is not None:
            yield text
