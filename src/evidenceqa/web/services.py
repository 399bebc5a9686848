"""What every request handler shares, set up once by the app's lifespan."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from fastapi import Request

from evidenceqa.config import Settings
from evidenceqa.store.db import Store
from evidenceqa.web.library import Library


@dataclass
class Services:
    settings: Settings
    store: Store
    library: Library
    # Answers still being produced for a client that disconnected: held so they finish and are stored.
    tasks: set[asyncio.Task[object]] = field(default_factory=set)


def services_of(request: Request) -> Services:
    return request.app.state.services
