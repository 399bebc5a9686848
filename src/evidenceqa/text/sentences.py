"""Sentence boundaries in medical prose.

A rule-based splitter: a boundary is sentence-final punctuation, then space, then something that can
start a sentence or a list item. Abbreviations common in clinical writing ("e.g.", "et al.", "Fig.", "vs.", "approx.")
and decimals ("0.5 mg") are not boundaries.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    """al e.g eg i.e ie etc fig figs vs approx ca cf dr drs prof mr mrs ms no nos vol pp ref refs
    eq eqs resp st jr sr inc ltd co dept univ
    sp spp var subsp gen jan feb mar apr jun jul aug sep sept oct nov dec suppl ed eds""".split()
)
# A boundary: sentence-final punctuation before a capital, digit, opening quote/bracket or a list
# bullet ("- item", as patient pages write runs of short items). A colon introducing a list is not
# one: the list belongs with its introduction. A superscript reference flattened onto the full stop
# ("… of the population.1 However, …", as NIH pages read as text) ends the sentence it follows; a
# digit before the stop is a decimal ("2.5 Mg").
REFERENCE_ON_STOP = r"(?<=[A-Za-z)%][.!?])\d{1,3}(?:[,–-]\d{1,3})*"
_CANDIDATE = re.compile(rf"(?:[.!?][\"'”’)\]]*|{REFERENCE_ON_STOP})\s+(?=[\"'“‘(\[]?[A-Z0-9]|[-•]\s)")
_TERMINAL = re.compile(r"[.!?…][\"'”’)\]]*$")
# A row of a Markdown table (how loaders.tables writes a table), and the row that only aligns it.
_TABLE_ROW = re.compile(r"^\|.*\|$")
_ALIGNMENT_ROW = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+$")


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, each stripped; joining them with spaces restores the words. Each
    row of a Markdown table is a sentence of its own (the row of dashes that aligns it is none)."""
    if text.startswith("|") or "\n|" in text:
        sentences: list[str] = []
        for line in text.split("\n"):
            row = line.strip()
            if not _TABLE_ROW.match(row):
                sentences.extend(_prose_sentences(line))
            elif not _ALIGNMENT_ROW.match(row):
                sentences.append(row)
        return sentences
    return _prose_sentences(text)


def _prose_sentences(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _CANDIDATE.finditer(text):
        stop = match.start() if text[match.start()] in ".!?" else match.start() - 1
        if _is_abbreviation(text, stop):
            continue
        piece = text[start : match.end()].strip()
        if piece:
            sentences.append(piece)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def ends_sentence(text: str) -> bool:
    """Whether `text` stops at the end of a sentence (not in the middle of one)."""
    return bool(_TERMINAL.search(text.rstrip()))


def _is_abbreviation(text: str, dot: int) -> bool:
    if text[dot] != ".":
        return False
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", text[:dot])
    if not word:
        return False
    token = word.group(1).lower()
    # A single capital ("J. Smith") is an initial, not a sentence end.
    return token in _ABBREVIATIONS or (len(token) == 1 and text[dot - 1].isupper())
