"""What a test does when something it needs is not on this machine: skip, saying what and how to get it;
under CI (`CI=true`) fail instead, since CI installs everything the tests need."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(message: str, under_ci: str = "CI must have it") -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; {under_ci}")
    pytest.skip(message)
