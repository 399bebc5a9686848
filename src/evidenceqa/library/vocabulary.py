"""Medical abbreviations mined from the library itself, and query expansion with them.

Authors define their abbreviations in the text: "surgical site infection (SSI)" or, less often,
"SSI (surgical site infection)". `mine_abbreviations` finds these definitions with the
Schwartz–Hearst algorithm (A. Schwartz, M. Hearst, PSB 2003): the characters of the short form
appear in order in the words just before the parenthesis, the first at the start of a word, and
the shortest such long form wins. Stricter than the original, the initial of every content word
of the long form must be one of those characters (stop words such as "of", "and" may be skipped):
"chlorhexidine gluconate (CHG)" passes, "among occasional partners (OR)" does not. Short forms
must look like abbreviations: two letters or more, a capital, not a capitalised word ("Table").

A `Vocabulary` keeps one long form per abbreviation: the one defined in most documents, if in at
least `DEFAULT_MIN_COUNT` = 2 of them (one author's private abbreviation, such as "EBV" for
elbasvir, is not the library's) and strictly more often than any other. It expands a question
both ways: an abbreviation adds its long form, a long form adds its abbreviation, so the question
matches documents that use either. The user's words are never changed, only appended to.

Clinicians write shorthand their literature seldom defines ("TXA + DDAVP in on-pump CABG", "sux",
"ppx abx"), and no library mines a definition it never wrote. A list shipped with the package
(`clinical_shorthand.tsv`) expands the shorthand the library's own vocabulary lacks, on the same
keyword side; the library's definition wins where it has one. Whether a question already holds the
long form is read on analysed terms, so "haemoglobin" is "hemoglobin" for "Hb".
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from evidenceqa.jsonl import json_fingerprint
from evidenceqa.text.english import common_words
from evidenceqa.text.tokens import STOP_WORDS, analyze

MAX_LONG_FORM_WORDS = 8
DEFAULT_MIN_COUNT = 2
_FORMAT = 1  # version of the to_json layout
SHORTHAND_FILE = Path(__file__).with_name("clinical_shorthand.tsv")

# A short-form candidate: one token of letters, digits and joiners, 2–10 characters.
_SHORT_FORM = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-/&+.']{1,9}")
_PARENTHESIS = re.compile(r"\(([^()]{1,200})\)")
# Where a long form cannot reach back across: sentence and clause punctuation, other brackets.
_CLAUSE_END = re.compile(r"[.;:!?\[\]{}()]\s|[;:!?\[\]{}()]|,\s")


@dataclass(frozen=True)
class Expansion:
    text: str  # the question, then the added terms
    added: list[tuple[str, str]] = field(default_factory=list)  # (abbreviation, long form)


# Mining ------------------------------------------------------------------------------------------


def mine_abbreviations(texts: Iterable[str]) -> dict[str, Counter[str]]:
    """Abbreviation → Counter of the long forms defined for it, counting each text at most once.

    Pass one text per document so that counts are "documents defining it": an author who
    repeats a definition in the abstract and the body should not count twice.
    """
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for short, long in set(_definitions(text)):
            found[short][long] += 1
    return dict(found)


def _definitions(text: str) -> Iterable[tuple[str, str]]:
    for match in _PARENTHESIS.finditer(text):
        inside = re.split(r"[,;]", match.group(1))[0].strip()
        before = _clause_before(text, match.start())
        pair = _long_then_short(before, inside) or _short_then_long(before, inside)
        if pair:
            yield _singular(*pair)


def _clause_before(text: str, end: int) -> str:
    """The text from the last clause boundary up to `end` (the opening parenthesis)."""
    head = text[max(0, end - 300) : end]
    boundaries = list(_CLAUSE_END.finditer(head))
    return head[boundaries[-1].end() :] if boundaries else head


def _long_then_short(before: str, inside: str) -> tuple[str, str] | None:
    """'surgical site infection (SSI)': the parenthesis holds the abbreviation."""
    if not _is_short_form(inside):
        return None
    letters = sum(c.isalnum() for c in inside)
    window = min(letters + 5, letters * 2, MAX_LONG_FORM_WORDS)
    long = _best_long_form(inside, " ".join(before.split()[-window:]))
    return (inside, long) if long else None


def _short_then_long(before: str, inside: str) -> tuple[str, str] | None:
    """'SSI (surgical site infection)': the word before the parenthesis is the abbreviation."""
    words = before.split()
    if not words or not 2 <= len(inside.split()) <= MAX_LONG_FORM_WORDS:
        return None
    short = words[-1].strip("\"'‘’“”")
    if not _is_short_form(short):
        return None
    long = _best_long_form(short, inside)
    return (short, long) if long == inside else None  # the whole parenthesis, nothing else


def _is_short_form(token: str) -> bool:
    if not _SHORT_FORM.fullmatch(token) or token.endswith("."):
        return False
    letters = [c for c in token if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    # Two letters at least (not "1a", "S1"); upper case somewhere (not "i.e", "p", "mg"); and not a
    # capitalised word ("Invitrogen", "Table").
    return len(letters) >= 2 and upper >= 1 and (upper >= 2 or len(token) <= 4)


def _best_long_form(short: str, candidate: str) -> str | None:
    """The shortest tail of `candidate` that spells out `short` (Schwartz–Hearst, stricter).

    The tail starts at a word start holding the first character; each later character of the
    short form is found in order, and the initial of every content word must be one of them.
    """
    chars = [c.lower() for c in short if c.isalnum()]
    text = re.sub(r"['’]s$", "", candidate.strip())  # "World Health Organization's (WHO)"
    lower = text.lower()
    for start in range(len(text) - 1, -1, -1):  # right to left: shortest first
        if lower[start] != chars[0] or (start > 0 and lower[start - 1].isalnum()):
            continue
        long = text[start:]
        if len(long.split()) > MAX_LONG_FORM_WORDS:
            return None  # only grows from here
        if long.split()[0].lower() in STOP_WORDS or len(long) <= len(short):
            continue  # "of depression (OR)"; a longer tail may still start well
        if _spells(chars[1:], lower[start:], _initials(long)):
            return long
    return None


def _initials(long: str) -> frozenset[int]:
    """Offsets of the first letter or digit of every content word after the first."""
    found = set()
    for word in list(re.finditer(r"\S+", long))[1:]:
        initial = re.search(r"[^\W_]", word.group())
        if initial and word.group().lower() not in STOP_WORDS:
            found.add(word.start() + initial.start())
    return frozenset(found)


def _spells(chars: list[str], text: str, required: frozenset[int]) -> bool:
    """Whether `chars` occur in order in text[1:], using every offset in `required`."""

    @cache
    def match(i: int, pos: int) -> bool:
        if pos == len(text):
            return i == len(chars)
        if i == len(chars):
            return not any(r >= pos for r in required)
        hit = text[pos] == chars[i] and match(i + 1, pos + 1)
        return hit or (pos not in required and match(i, pos + 1))

    return match(0, 1)


def _singular(short: str, long: str) -> tuple[str, str]:
    """'QALYs' / 'quality-adjusted life years' → 'QALY' / 'quality-adjusted life year'."""
    if short.endswith("s") and sum(c.isupper() for c in short) >= 2 and short[-2].isupper():
        return short[:-1], _singular_tail(long)
    return short, long


def _singular_tail(phrase: str) -> str:
    """The phrase with its last word made singular, by the regular English rules only."""
    if phrase.endswith(("ss", "us", "is", "species", "series")):  # not plurals
        return phrase
    if phrase.endswith(("uses", "ches", "shes", "xes")):  # "viruses", "patches"
        return phrase[:-2]
    if phrase.endswith("ies") and len(phrase) > 4:  # "therapies"
        return phrase[:-3] + "y"
    return phrase[:-1] if phrase.endswith("s") else phrase


# Vocabulary --------------------------------------------------------------------------------------


def _group_key(long: str) -> str:
    """Long forms that differ only in case, hyphens, spacing or a plural are one long form."""
    return _singular_tail(" ".join(re.sub(r"[-‐]", " ", long.lower()).split()))


def ranked_long_forms(forms: Counter[str]) -> list[tuple[str, int]]:
    """Long forms with variants merged, most often defined first, each in its most frequent
    spelling (on a tie the one with fewer capitals: "hepatitis C virus")."""
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for form, count in forms.items():
        groups[_group_key(form)][form] += count
    ranked = []
    for key in sorted(groups, key=lambda k: (-groups[k].total(), k)):  # ties: alphabetical key
        spelling = min(groups[key], key=lambda f: (-groups[key][f], sum(map(str.isupper, f)), f))
        ranked.append((spelling, groups[key].total()))
    return ranked


@dataclass(frozen=True)
class Vocabulary:
    """Abbreviation → long form, as defined in the library, for expanding questions. Treat it as
    read-only: the patterns built from `terms` are cached on first use."""

    terms: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # texts that defined it so
    min_count: int = DEFAULT_MIN_COUNT
    # Shorthand → long form from outside the library (`clinical_shorthand`), for what it does not define.
    shorthand: dict[str, str] = field(default_factory=dict)

    def expand(self, question: str) -> Expansion:
        """The question with the long forms of its abbreviations and the abbreviations of its long
        forms appended; the question itself is kept verbatim."""
        forward = [
            (abbr, long) for abbr, long in self._abbreviations_in(question) if not _has(question, long)
        ]
        reverse = self._long_forms_in(question)  # disjoint from forward: its abbreviations are absent
        shorthand = self._shorthand_in(question)
        extra = (
            [long for _, long in forward] + [abbr for abbr, _ in reverse] + [long for _, long in shorthand]
        )
        text = " ".join([question, *extra]) if extra else question
        return Expansion(text=text, added=forward + reverse + shorthand)

    def _shorthand_in(self, question: str) -> list[tuple[str, str]]:
        matches = self._shorthand_pattern.finditer(question)
        found = dict.fromkeys(self._shorthand_keys[_shorthand_key(m.group())] for m in matches)
        if not found:
            return []
        present = set(analyze(question).split())
        return [
            (short, self.shorthand[short])
            for short in found
            if short not in self.terms and not set(analyze(self.shorthand[short]).split()) <= present
        ]

    @cached_property
    def shorthand_fingerprint(self) -> str:
        """A digest of the shorthand it expands with: an answer found with another list is not this
        one's (the mined terms change only with the index version)."""
        return json_fingerprint(self.shorthand)

    @cached_property
    def _shorthand_keys(self) -> dict[str, str]:
        return {_shorthand_key(short): short for short in self.shorthand}

    @cached_property
    def _shorthand_pattern(self) -> re.Pattern[str]:
        """One pattern; a shorthand whose lower case is an English word ("MAP", "roc") keeps its case,
        but one listed in lower case may open a sentence ("Lap chole for…")."""
        english = common_words()  # empty without the embedder's weights: then every case matters
        folded = [short for short in self.shorthand if english and short.lower() not in english]
        exact = set(self.shorthand) - set(folded)
        return _abbreviation_pattern(exact | {s.capitalize() for s in exact if s.islower()}, folded=folded)

    def _abbreviations_in(self, question: str) -> list[tuple[str, str]]:
        # Case-sensitive and whole tokens only: "or" is never "OR", "MRSAs" is not "MRSA".
        found = dict.fromkeys(m.group() for m in self._abbr_pattern.finditer(question))
        return [(abbr, self.terms[abbr]) for abbr in found]

    def _long_forms_in(self, question: str) -> list[tuple[str, str]]:
        keys = (_group_key(m.group()) for m in self._long_pattern.finditer(question))
        abbrs = dict.fromkeys(self._by_long[key] for key in keys if key in self._by_long)
        return [(abbr, self.terms[abbr]) for abbr in abbrs if not _has_abbr(question, abbr)]

    @cached_property
    def _by_long(self) -> dict[str, str]:
        """Long form (grouped) → abbreviation; the more often defined one wins a shared long form."""
        ranked = sorted(self.terms, key=lambda a: (self.counts.get(a, 0), a), reverse=True)
        return {_group_key(self.terms[a]): a for a in reversed(ranked)}

    @cached_property
    def _abbr_pattern(self) -> re.Pattern[str]:
        return _abbreviation_pattern(self.terms)

    @cached_property
    def _long_pattern(self) -> re.Pattern[str]:
        return _long_form_pattern(self.terms.values())

    def to_json(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) for a file or the catalogue's state table."""
        terms = {
            abbr: {"long_form": long, "count": self.counts.get(abbr, 0)} for abbr, long in self.terms.items()
        }
        return {"format": _FORMAT, "min_count": self.min_count, "terms": terms}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Vocabulary:
        if data.get("format") != _FORMAT:
            raise ValueError(f"unknown vocabulary format {data.get('format')!r}")
        terms = {abbr: entry["long_form"] for abbr, entry in data["terms"].items()}
        counts = {abbr: int(entry["count"]) for abbr, entry in data["terms"].items()}
        return cls(terms=terms, counts=counts, min_count=int(data["min_count"]))


def build_vocabulary(texts: Iterable[str], min_count: int = DEFAULT_MIN_COUNT) -> Vocabulary:
    """Mine `texts` (one per document) into a vocabulary.

    An abbreviation is kept when its best long form was defined in at least `min_count` texts and
    strictly more often than any other long form: one defined equally often two ways ("AD":
    Alzheimer's disease, atopic dermatitis) is ambiguous here and is not expanded.
    """
    return vocabulary_from_counts(mine_abbreviations(texts), min_count)


def vocabulary_from_counts(
    mined: dict[str, Counter[str]],
    min_count: int = DEFAULT_MIN_COUNT,
    shorthand: dict[str, str] | None = None,
) -> Vocabulary:
    """A vocabulary from mined counts (abbreviation → long form → texts defining it so), with the
    shipped clinical shorthand unless `shorthand` says otherwise."""
    terms, counts = {}, {}
    for abbr, forms in sorted(mined.items()):
        ranked = ranked_long_forms(forms)
        (long, count), runner_up = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0)
        if count >= min_count and count > runner_up:
            terms[abbr], counts[abbr] = long, count
    shorthand = clinical_shorthand() if shorthand is None else shorthand
    return Vocabulary(terms=terms, counts=counts, min_count=min_count, shorthand=shorthand)


class ShorthandError(ValueError):
    """A shorthand file that cannot be used; the message names the file, the line and why."""


@cache
def clinical_shorthand() -> dict[str, str]:
    """The shorthand list shipped with the package (`clinical_shorthand.tsv`): shorthand → long form."""
    return read_shorthand(SHORTHAND_FILE)


def library_shorthand(own: Path | None) -> dict[str, str]:
    """The shipped list with a library's own file over it (`<home>/shorthand.tsv`, the same
    format): its entries add shorthand or give a listed one (in any case) another meaning. Read
    when a retriever is made: a running server keeps what it read."""
    if own is None or not own.is_file():
        return clinical_shorthand()
    extra = read_shorthand(own)
    replaced = {_shorthand_key(short) for short in extra}
    shipped = {
        short: long for short, long in clinical_shorthand().items() if _shorthand_key(short) not in replaced
    }
    return shipped | extra


def read_shorthand(path: Path) -> dict[str, str]:
    """A shorthand file: "#" comment lines, else a shorthand, a tab, its long form; " / " between
    alternative wordings. ShorthandError names the file and line of a malformed or repeated entry."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ShorthandError(f"{path}: cannot be read ({exc.__class__.__name__})") from exc
    entries: dict[str, str] = {}
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        short, tab, long = line.partition("\t")
        short, long = short.strip(), long.strip()
        if not (tab and short and long) or "\t" in long:
            raise ShorthandError(f"{path}:{number}: expected a shorthand, a tab and its long form")
        if _shorthand_key(short) in seen:  # matched without case, so one meaning per spelling
            raise ShorthandError(f"{path}:{number}: {short!r} is listed twice")
        seen.add(_shorthand_key(short))
        entries[short] = long
    return entries


def _shorthand_key(short: str) -> str:
    return " ".join(short.lower().split())


def _abbreviation_pattern(abbrs: Iterable[str], folded: Iterable[str] = ()) -> re.Pattern[str]:
    """Abbreviations as whole tokens, case-sensitive (`folded` ones in any case). A hyphen before a
    capital or digit continues a name ("SARS-CoV-2" is not "SARS-CoV", "IL-6" is not "IL"); before a
    small letter it joins a new word ("MRSA-positive", "ICU-acquired" still hold "MRSA" and "ICU")."""
    body = _alternation(abbrs, split=r"\s+", joiner=r"\s+")
    either = _alternation(folded, split=r"\s+", joiner=r"\s+")
    return re.compile(rf"(?<![^\W_])(?<![0-9A-Z]-)(?:{body}|(?i:{either}))(?![^\W_]|-[0-9A-Z])")


def _long_form_pattern(longs: Iterable[str]) -> re.Pattern[str]:
    """Long forms as whole words in any case, a space or hyphen between words ("methicillin
    resistant" is "methicillin-resistant"), a plural "s"/"es" allowed."""
    body = _alternation(longs, split=r"[\s\-‐]+", joiner=r"[\s\-‐]+")
    return re.compile(rf"(?<![^\W_]){body}(?:e?s)?(?![^\W_])", re.IGNORECASE)


def _alternation(phrases: Iterable[str], split: str, joiner: str) -> str:
    """One regex group for all phrases, longest first so that the longest one wins."""
    ordered = sorted(set(phrases), key=lambda p: (-len(p), p))
    if not ordered:
        return "(?!)"  # matches nothing
    return "(?:" + "|".join(joiner.join(map(re.escape, re.split(split, p))) for p in ordered) + ")"


def _has(question: str, long: str) -> bool:
    return _long_form_pattern([long]).search(question) is not None


def _has_abbr(question: str, abbr: str) -> bool:
    return _abbreviation_pattern([abbr]).search(question) is not None
