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
BODY_RULES_VERSION = 3

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
    line (`_lines`). A list item's marker is no part of its sentence; a heading run into the
    sentence after it is a piece of its own, and a list said again without its markers is none."""
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
                for offset, piece, run_in in _pieces(text):
                    end = start + offset + len(piece)
                    heading = run_in or (_is_title(piece) and bool(_LINE_END.match(body, end)))
                    found.append(BodySentence(piece, start + offset, end, p, heading))
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


# A heading run into the sentence after it, as pages flattened to text write them ("Common Symptoms
# The most common symptoms of a cataract are …", "Stage IIIA In stage IIIA, the tumor …"): a
# title-case run of words, then a word prose opens with or the heading's own words said again
# ("Tests for Cataract Cataract is detected …"), then prose. "A"/"An" after a two-word run is
# more often a name's letter ("Medicare Part A beneficiaries"), and a run that ends in an opener
# or a small word is a name going on ("Vitamin E The Selenium and Vitamin E Cancer Prevention …").
_OPENERS = frozenset(
    "The A An There This These Those It If In When Most Many Some Your You Each Although As Several Other Once "
    "After Before During".split()
)
_RUN_IN_MAX_WORDS = 12
# A sentence's opening word after the last item of a list, lower case before it: the item ended
# there. Not "A"/"An", which name a variant as often ("the hepatitis A virus").
_LIST_RUNS_ON = re.compile(rf"(?<=[a-z0-9)]) (?=(?:{'|'.join(sorted(_OPENERS - {'A', 'An'}))}) [a-z])")
_WORD = re.compile(r"\S+")
# A list said twice, the second time without its markers, as some NIH pages were flattened ("… are
# - cloudy vision - glare. cloudy vision glare."): from the stop before the repeat.
_REPEAT_START = re.compile(r"[.;:]\s+(?=[a-z])")


def _pieces(sentence: str) -> list[tuple[int, str, bool]]:
    """(offset, text, run-in heading) of what `sentence` holds: a heading run into it, then the
    sentence itself without a list's markerless repeat, cut where its list runs into the next."""
    head = _run_in_heading(sentence)
    pieces = [(0, sentence[:head], True)] if head else []
    after = _ITEM_MARKERS.sub("", sentence[head:].lstrip())
    offset = len(sentence) - len(after)
    rest = after[: _list_repeat(after)].rstrip()
    end = _list_end(rest)
    pieces.append((offset, rest[:end], False))
    if end < len(rest):
        pieces.append((offset + end + 1, rest[end + 1 :], False))
    return pieces


def _run_in_heading(sentence: str) -> int:
    """Where a heading run into the start of `sentence` ends; 0 if none does."""
    words = list(_WORD.finditer(sentence))
    texts = [w.group() for w in words]
    for k in range(2, min(len(words) - 2, _RUN_IN_MAX_WORDS) + 1):
        head, rest = texts[:k], texts[k:]
        if rest[0] in ("-", "–") and len(rest) > 2:  # the heading of a list: "Tests for Cataract - The …"
            rest = rest[1:]
        if not _is_title(" ".join(head)) or any(not w.strip("-–") for w in head):
            return 0  # a longer run is no title either (nor one with a list's dashes)
        if not _can_end_heading(head) or not rest[0][0].isupper():
            continue
        said_again = rest[0].lower() == head[0].lower() or any(
            [w.lower() for w in rest[:j]] == [w.lower() for w in head[-j:]] for j in range(1, k + 1)
        )
        opens = rest[0] in _OPENERS and (k > 2 or rest[0] not in ("A", "An"))
        if (opens or said_again) and any(w[0].islower() for w in rest[1 : k + 2]):
            return words[k - 1].end()
    return 0


def _can_end_heading(head: list[str]) -> bool:
    """Whether a heading could stop after `head`: not on a small word, an opener, punctuation or
    inside brackets ("Vitamin E The Selenium and …", "Depression (Beck …")."""
    last = head[-1]
    text = " ".join(head)
    return not (
        last[0].islower()
        or last in _OPENERS
        or last[-1] in ",;:.!?\"'”"
        or text.count("(") != text.count(")")
    )


def _list_repeat(sentence: str) -> int:
    """Where a markerless repeat of the list in `sentence` starts; its length if there is none."""
    for stop in _REPEAT_START.finditer(sentence):
        listed, repeat = sentence[: stop.start()], sentence[stop.end() :]
        # The list's introduction is not repeated; a sentence that is a list item has none.
        items = listed.split(" - ", 1)[-1]
        if " - " in listed and _words(repeat) in (_words(items), _words(listed)):
            return stop.start() + 1
    return len(sentence)


def _list_end(sentence: str) -> int:
    """Where the list in `sentence` ends when its last item runs into the next sentence without a
    stop ("… - Damage to other organs from not getting enough oxygen If a clot is large, …", as
    MedlinePlus pages were flattened); its length if it does not."""
    last_item = sentence.rfind(" - ")
    found = _LIST_RUNS_ON.search(sentence, last_item + 3) if last_item >= 0 else None
    return found.start() if found else len(sentence)


def _words(text: str) -> list[str]:
    return [w for w in text.lower().replace(".", " ").split() if w not in ("-", "–")]


def sentence_key(sentence: str) -> int:
    """A sentence's identity in every document that carries it: its words, case and spacing aside,
    as a signed 64-bit number (an SQLite integer key)."""
    words = " ".join(sentence.lower().split()).encode()
    return int.from_bytes(hashlib.blake2b(words, digest_size=8).digest(), "big", signed=True)
