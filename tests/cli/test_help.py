"""Every command's --help shows its text as written: Rich reads `[word]` as a style tag and drops it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from evidenceqa.cli import app

BRACKETED = re.compile(r"\S*\\?\[[^\]\s]*\]\S*")


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, group
    for name, command in getattr(group, "commands", {}).items():  # a group (Typer's own click)
        yield from commands(command, (*path, name))


def test_square_brackets_in_help_texts_are_shown() -> None:
    # "citing each sentence [n]" and "BENCHMARK=COLLECTION[,COLLECTION]" read "sentence ;" and
    # "BENCHMARK=COLLECTION: …" in --help; written escaped (\[), they show as written.
    checked = 0
    for path, command in commands(typer.main.get_command(app)):
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        expected = [token.replace("\\[", "[") for text in texts for token in BRACKETED.findall(text)]
        if not expected:
            continue
        shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "400"}).output
        for token in expected:
            assert token in shown, f"`evidenceqa {' '.join(path)} --help` lost {token!r}"
        checked += 1
    assert checked >= 2  # ask's [n] and bench grid's COLLECTION[,COLLECTION] at least
