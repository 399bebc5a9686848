"""Sentence boundaries in medical prose.

A rule-based splitter: a boundary is sentence-final punctuation, then space, then something that can
start a sentence or a list item. Abbreviations common in clinical writing ("e.g.", "et al.", "Fig.", "vs.", "approx.")
and decimals ("0.5 mg") are not boundaries. A chunk body is cut paragraph by paragraph, its list
items and heading lines apart (`body_sentences`), each sentence located exactly in the body; what
the library counts of them (`sentence_key`) and what an answer quotes are the same pieces.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# The version of the rules `body_sentences` cuts by: the catalogue recounts its sentence statistics
# when it changes.
BODY_RULES_VERSION = 1

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
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


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


@dataclass(frozen=True)
class BodySentence:
    """A sentence of a chunk body, where it stands: body[start:end] == text."""

    text: str
    start: int
    end: int
    paragraph: int  # index of its paragraph (blank-line separated) within the body
    heading: bool = False  # a title-case line without closing punctuation, a line break after it


def body_sentences(body: str) -> list[BodySentence]:
    """The sentences of a chunk body, paragraph by paragraph. Paragraphs are split first because
    chunk bodies join them with blank lines, and a heading or metadata line without a full stop
    would otherwise run into the next sentence; within one, so are its list items and a heading
    line (`_lines`). A list item's marker is no part of its sentence."""
    found: list[BodySentence] = []
    cursor = 0
    for p, paragraph in enumerate(_PARAGRAPH_BREAK.split(body)):
        for line in _lines(paragraph):
            for sentence in split_sentences(line):
                text = _ITEM_MARKERS.sub("", sentence)  # "- Surgery.", or an item after a full stop
                if not text:
                    continue
                start = body.index(text, cursor)
                cursor = start + len(text)
                heading = _is_title(text) and bool(_LINE_END.match(body, cursor))
                found.append(BodySentence(text, start, cursor, p, heading))
    return found


# Line breaks inside a paragraph are kept by sources that hold lists and headings in one block of
# text (the NIH pages: "Key Points\n - Ovarian tumours are …", "Stage I Testicular Cancer\n
# Treatment of stage I …"); a loader that joins wrapped lines leaves none.
_ITEM_MARKERS = re.compile(r"^(?:[-*•][ \t]+)+")
_ITEM_AFTER_BREAK = re.compile(r"[ \t]*[-*•][ \t]")
_LINE_END = re.compile(r"[ \t]*\n")
_TITLE_MAX_WORDS = 20  # "Stage III Adult Soft Tissue Sarcoma That Has Spread to Lymph Nodes"
_MIN_TITLE_WORD = 4  # letters of a word that a title capitalises ("of", "the", "and" it may not)


def _lines(paragraph: str) -> list[str]:
    """The paragraph cut at each line break that ends what stands before it: one before a list
    item, and one after a line that is a title (a heading run into the text below it)."""
    pieces: list[str] = []
    start = 0
    line_start = 0
    for line_break in re.finditer(r"\n", paragraph):
        line = paragraph[line_start : line_break.start()]
        line_start = line_break.end()
        if _ITEM_AFTER_BREAK.match(paragraph, line_break.end()) or _is_title(line):
            pieces.append(paragraph[start : line_break.start()])
            start = line_break.end()
    pieces.append(paragraph[start:])
    return [piece for piece in pieces if piece.strip()]


def _is_title(line: str) -> bool:
    """A line in title case without closing punctuation: "Hodgkin Lymphoma During Pregnancy"."""
    words = line.split()
    long_words = [w for w in words if len(w) >= _MIN_TITLE_WORD and w[0].isalpha()]
    return (
        0 < len(words) <= _TITLE_MAX_WORDS
        and line.rstrip()[-1] not in ".!?:;,"
        and bool(long_words)
        and all(w[0].isupper() for w in long_words)
    )


def sentence_key(sentence: str) -> int:
    """A sentence's identity in every document that carries it: its words, case and spacing aside,
    as a signed 64-bit number (an SQLite integer key)."""
    words = " ".join(sentence.lower().split()).encode()
    return int.from_bytes(hashlib.blake2b(words, digest_size=8).digest(), "big", signed=True)
