"""The web app's options, and `AppOptions`: everything one app process runs on.

Apart from the app's modules (FastAPI, the store), so the core's Settings composes them without the
web extra.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from evidenceqa.analytics.options import AnalyticsOptions
from evidenceqa.answer.engine import EngineOptions
from evidenceqa.store.options import CounterKind, StoreOptions


class WebOptions(BaseModel):
    # The first admin's email, created with a printed random password when there are no users yet;
    # Secure session cookies (None: when the request came over https).
    admin_email: str = "admin@localhost"
    session_secure_cookies: bool | None = None
    # The address clinicians open (e.g. https://evidence.example.org): invite links are built on it,
    # never on a request's Host header, which whoever sends the request writes. None: the address
    # `serve` listens on (http://localhost:8000 for an app made without it).
    public_url: str | None = None
    # Reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: addresses or networks
    # (EVIDENCEQA_TRUSTED_PROXIES='["127.0.0.1"]' for a proxy on this machine). Empty: none is, so a
    # client cannot pick the address that login lockouts are counted against.
    trusted_proxies: list[str] = Field(default_factory=list)
    # Answers the web app writes at once. Searches run one at a time on the thread that owns the
    # catalogue (milliseconds each); writing an answer — seconds of waiting on a hosted LLM — runs
    # on its own pool, so one clinician's answer does not queue behind another's.
    web_answer_threads: int = Field(8, ge=1, le=256)
    # Worker processes of `evidenceqa serve` (its --workers): each holds the library and the models.
    web_workers: int = Field(1, ge=1, le=64)

    # Reliability (docs/reliability.md): bounds on abuse.
    ask_rate_per_minute: int = Field(30, ge=0)  # answers per user per minute (API and chat); 0: no limit
    search_rate_per_minute: int = Field(120, ge=0)  # searches per user per minute (API); 0: no limit
    # Failed logins before a lockout of login_lockout_s, doubled by each further one: counted per account
    # (from any address) and, separately, per address (over any accounts: a password spray).
    login_max_failures: int = Field(5, ge=1)
    login_max_failures_per_address: int = Field(20, ge=1)
    login_lockout_s: float = Field(30, gt=0)
    # Where those counts live (evidenceqa.store.counters): "memory" (this process), "database" (the app's
    # database, shared by every worker and server using it) or "redis" (redis_url). "auto": redis when
    # redis_url is set, else database when web_workers > 1, else memory.
    guard_counters: Literal["auto", "memory", "database", "redis"] = "auto"
    log_questions: bool = False  # questions are personal data: into the server log only when set


class AppOptions(WebOptions, AnalyticsOptions, StoreOptions, EngineOptions):
    """One app process: its library (EngineOptions), its database, its pilot report and its own options."""

    @model_validator(mode="after")
    def _counters_are_shared(self) -> AppOptions:
        if self.guard_counters == "redis" and not self.redis_url:
            raise ValueError("guard_counters 'redis' needs redis_url")
        if self.guard_counters == "memory" and self.web_workers > 1:
            raise ValueError(
                "guard_counters 'memory' keeps each worker's counts apart: with web_workers > 1 use "
                "'database' or 'redis' (or 'auto')"
            )
        return self

    @property
    def counter_kind(self) -> CounterKind:
        """`guard_counters`, with "auto" resolved: Redis when redis_url is set (the answer cache's), else
        the database when web_workers > 1, else this process."""
        if self.guard_counters != "auto":
            return self.guard_counters
        return "redis" if self.redis_url else "database" if self.web_workers > 1 else "memory"
