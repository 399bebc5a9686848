"""The ASGI application of a worker process: `evidenceqa serve --workers N` starts each worker on
`evidenceqa.asgi:from_environment`, which builds the app on the settings of the environment and
evidenceqa.toml (the parent passes its own through the environment)."""

from __future__ import annotations

from fastapi import FastAPI

from evidenceqa.settings import load_settings
from evidenceqa.web.app import create_app


def from_environment() -> FastAPI:
    return create_app(load_settings())
