"""Time limits in a clinician's question ("since 2021", "the 2016 WHO guideline"), read before the search.

Pure functions, no I/O.

`parse_temporal` finds the time limit in a question ("since 2021", "in the last 5 years", "the
2016 WHO guideline", "latest") and returns the year bounds for `Filters` and the question without
that phrase, so the words "since 2021" are not searched for. Conventions (each tested):

- A year needs a cue: a preposition ("in", "since", "before", …), a range, or a publication noun
  after it ("the 2016 WHO guideline" → year = 2016: a year used as an adjective before a guideline,
  review, trial … names the publication). Bare numbers are never years: "2015 patients",
  "n = 2012", "Table 2010", "2019-nCoV", "dose of 2000 mg". Years outside 1900 … today.year + 1
  are not years.
- "after 2015" / "post-2015" / "newer than 2015" are strict (≥ 2016), "before 2010" / "pre-2010"
  / "prior to 2010" likewise (≤ 2009); "since", "until", "through", "up to", "or later", "or
  earlier", "onwards" include the year. "in", "during" and a bare "from 2018" ("a paper from
  2018") mean that year only; "from 2018 onwards" and "from 2012 to 2016" are ranges.
- "in the last N years" = the current calendar year and the N − 1 before it: at 2026-11-29,
  "last 5 years" → year ≥ 2022. Open-ended bounds stay open (no year_max), so an article dated
  next year (online first) is kept. "last decade" = 10 years.
- "last year" (no article) is the previous calendar year (year = today.year − 1); "the past
  year" / "the last year" reach back twelve months (year ≥ today.year − 1); "this year" is
  today.year.
- "recent", "latest", "current", "newest", "up-to-date", "in recent years", "the past few years"
  set `recency` (newer documents boosted, nothing filtered) — only before an evidence noun
  ("current guidelines", "recent trials"), so "current smokers" and "recent myocardial
  infarction" stay clinical. When the question also names years, the years win.
- Several phrases combine as an intersection ("since 2015 and before 2020" → 2015 … 2019); a
  phrase that would leave no year at all is left in the question instead.
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from typing import Literal

from evidenceqa.index.base import Filters

# How a described phrase says that its years were overruled by the reader's own year filter.
NOT_APPLIED = "not applied"
_NUMBERS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER = r"(?:\d{1,2}|" + "|".join(_NUMBERS) + ")"
# Words after a number that make it a count or a dose, not a year.
_COUNT_NOUNS = (
    r"%|mg|mcg|µg|ug|ng|g|kg|ml|l|dl|iu|u|units?|mmol|meq|mmhg|cm|mm|kcal|gy|cgy|msv|h|hrs?|min|"
    r"patients?|participants?|subjects?|cases?|people|persons?|individuals?|women|men|children|"
    r"infants|neonates|adults|respondents|volunteers|controls|surgeons|nurses|procedures|"
    r"operations|surgeries|admissions|births|deliveries|samples|specimens|isolates|doses|cells|"
    r"beds|eyes|hips|knees|visits|episodes|deaths|records|charts|questionnaires|hospitals|mice|"
    r"rats|animals"
)
# A year: not part of a longer number, a name ("2019-nCoV"), a ratio or a decimal, and not
# followed by a count, a unit or another number ("from 2000 to 3000 mg").
_YEAR = (
    r"(?<![\w.,$£€#/])(?:19|20)\d\d(?![\w/]|[.,]\d|-[A-Za-z])"
    rf"(?!\s*(?:{_COUNT_NOUNS})\b)(?!\s*%)(?!\s*(?:to|-|–|—|and|or)\s*\d)"
)
_DECADE = r"(?:the\s+)?(?:early\s+|mid-?\s*|late\s+)?(?:19|20)\d0'?s\b"
_WHEN = rf"(?:{_YEAR}|{_DECADE})"
_PUBLISHED = r"(?:(?:published|released|issued|updated|dated|written)\s+)?"
_PUB_NOUNS = (
    r"guidelines?|guidance|recommendations?|consensus|statements?|updates?|editions?|versions?|"
    r"revisions?|criteria|classifications?|definitions?|standards?|bundles?|reviews?|"
    r"meta-analys[ie]s|trials?|stud(?:y|ies)|papers?|articles?|reports?|position\s+papers?|"
    r"protocols?|audits?|surveys?"
)
_EVIDENCE_NOUNS = (
    _PUB_NOUNS + r"|evidence|literature|research|data|publications?|practice|findings|advice|"
    r"management|approach(?:es)?|thinking|knowledge|developments?|advances?|understanding|"
    r"opinions?|strateg(?:y|ies)|options|insights?|sources?|thoughts?"
)
# Words that may stand between a recency word and its noun: names of bodies ("WHO", "Cochrane")
# and evidence adjectives. Short capitals ("MI") are clinical and do not qualify.
_BETWEEN = (
    r"(?:[A-Z]{3,}[\w/-]*|[A-Z][a-z]+|(?i:randomi[sz]ed|controlled|clinical|systematic|published|"
    r"international|national|evidence-based|peer-reviewed|scientific|medical|surgical|"
    r"professional|practice))"
)


@dataclass(frozen=True)
class Temporal:
    """What `parse_temporal` found: the year bounds or the recency wish, and the rest of the question."""

    text: str  # the question without its temporal phrases
    year_min: int | None = None
    year_max: int | None = None
    recency: bool = False  # "latest" & co. with no years: boost newer documents, filter nothing
    phrase: str | None = None  # the phrases found, as written, joined by ", "
    scope: Literal["publication", "event"] = "publication"  # what the years are about (see `scoped`)
    overruled: bool = False  # its years contradicted the user's year filter, which applied instead

    def describe(self) -> str:
        """A short human line for results: "year ≥ 2021 (from 'since 2021')"."""
        lo, hi = self.year_min, self.year_max
        if self.overruled:
            return f"'{self.phrase}' {NOT_APPLIED}: it leaves no year within the year filter"
        if self.scope == "event":
            limit = f"documents from {lo} on" if lo is not None else "no year filter"
            return f"{limit} ('{self.phrase}' dates what is asked about, not the evidence)"
        if lo is not None and lo == hi:
            what = f"year = {lo}"
        elif lo is not None and hi is not None:
            what = f"{lo} ≤ year ≤ {hi}"
        elif lo is not None or hi is not None:
            what = f"year ≥ {lo}" if lo is not None else f"year ≤ {hi}"
        elif self.recency:
            what = "newer documents first"
        else:
            return "no time limit"
        return f"{what} (from '{self.phrase}')"

    def filters(self, base: Filters | None = None) -> Filters:
        """`base` (default filters if None) narrowed to these years; bounds already in `base`
        (say, from the command line) are kept where they are narrower."""
        base = base if base is not None else Filters()
        lo = max((y for y in (base.year_min, self.year_min) if y is not None), default=None)
        hi = min((y for y in (base.year_max, self.year_max) if y is not None), default=None)
        return replace(base, year_min=lo, year_max=hi)


Bounds = tuple[int | None, int | None, bool]  # year_min, year_max, recency
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], Bounds | None]]


def _span(text: str) -> tuple[int, int]:
    """The years an expression covers: "2016" → 2016 … 2016, "the 1990s" → 1990 … 1999."""
    year = int(re.findall(r"\d{4}", text)[0])
    return (year, year + 9) if text.rstrip().endswith("s") else (year, year)


def _number(text: str) -> int:
    word = text.lower()
    return _NUMBERS[word] if word in _NUMBERS else int(word)


def _rule(pattern: str, action: Callable[[re.Match[str], date], Bounds | None]) -> Rule:
    return re.compile(pattern, re.IGNORECASE), action


def _from(m: re.Match[str], today: date) -> Bounds:
    return _span(m["when"])[0], None, False


def _after(m: re.Match[str], today: date) -> Bounds:
    return _span(m["when"])[1] + 1, None, False


def _before(m: re.Match[str], today: date) -> Bounds:
    return None, _span(m["when"])[0] - 1, False


def _until(m: re.Match[str], today: date) -> Bounds:
    return None, _span(m["when"])[1], False


def _during(m: re.Match[str], today: date) -> Bounds:
    lo, hi = _span(m["when"])
    return lo, hi, False


def _between(m: re.Match[str], today: date) -> Bounds | None:
    first, last = _span(m["when"])[0], m["end"]
    end = int(last) if len(last) == 4 else first // 100 * 100 + int(last)  # "2012-16"
    return (min(first, end), max(first, end), False) if end != first else None


def _last_years(m: re.Match[str], today: date) -> Bounds | None:
    count = _number(m["n"]) if m["n"] else 1  # "the last decade": one
    years = 10 * count if m["unit"].lower().startswith("decade") else count
    return (today.year - years + 1, None, False) if years > 0 else None


def _recent(m: re.Match[str], today: date) -> Bounds:
    return None, None, True


def _relative_year(m: re.Match[str], today: date) -> Bounds:
    phrase = " ".join(m.group().lower().split())
    if phrase.endswith(("this year", "current year")):
        return today.year, today.year, False
    if re.search(r"\bthe\s+(?:last|past|previous)|past\s+year", phrase):
        return today.year - 1, None, False  # the past twelve months reach into last year
    return today.year - 1, today.year - 1, False  # "last year": the previous calendar year


_TO = r"\s*(?:and|to|until|till|through|thru|-|–|—)\s*"
_END = r"(?P<end>(?:19|20)\d\d|\d\d)(?![\w/]|[.,]\d)" + rf"(?!\s*(?:{_COUNT_NOUNS})\b)"
_RANGE_START = r"(?<![\w.,$£€#/])(?P<when>(?:19|20)\d\d)"
_LAST = r"(?:(?:in|over|during|within|from|for)\s+)?(?:the\s+)?(?:last|past|previous|preceding|recent)\s+"
_AFTER = r"(?:after|post-?|later\s+than|newer\s+than|more\s+recent\s+than)\s*"
_SINCE = (
    r"(?:since|starting(?:\s+(?:in|from))?|beginning(?:\s+in)?|as\s+of|not\s+before|no\s+earlier\s+than)\s+"
)
_BEFORE = r"(?:before|prior\s+to|pre-?|earlier\s+than|older\s+than)\s*"
_UNTIL = r"(?:until|till|up\s+(?:to|until)|through|thru|no\s+later\s+than|not\s+after)\s+"
_IN = r"(?:(?:in|during|within|from)\s+(?:the\s+year\s+)?)"  # "a paper from 2018" is dated 2018
_OR_LATER = r"\s*,?\s*(?:(?:or|and)\s+(?:later|after|newer|more\s+recent)|onwards?|and\s+beyond|\+)"
_OR_EARLIER = r"\s*,?\s*(?:or|and)\s+(?:earlier|before|older)"
_RANGE = rf"{_RANGE_START}\s*(?:-|–|—|to|through|until)\s*{_END}"
_FEW_YEARS = r"(?:few|several|couple\s+of)\s+years\b"
_RECENT_YEARS = (
    r"(?:(?:in|over|during)\s+)?recent\s+(?:years|times|decades)\b|\b(?:lately|nowadays|these\s+days)\b"
)
_RELATIVE_YEAR = (
    r"(?:(?:in|during|over|for)\s+)?(?:the\s+)?(?:last|past|previous|this|current)\s+year(?:'s|’s)?\b"
)
_LATEST_ON = r"(?:the\s+)?(?:latest|newest|most\s+recent)(?=\s+(?:on|about|regarding|in)\s)"
_RECENTLY = r"recently\s+(?:published|updated|released|issued|reported)"
# A year as an adjective before a publication noun ("the 2016 WHO guideline"): only the year goes.
_YEAR_ADJECTIVE = rf"(?P<when>{_YEAR})(?=(?:\s+[\w/-]+){{0,2}}?\s+(?:{_PUB_NOUNS})\b)"

# In priority order: ranges before single years, "last 5 years" before "last year", "from 2019
# onwards" before "from 2019", years before recency words. No rule takes text an earlier one took.
_RULES: list[Rule] = [
    _rule(rf"{_PUBLISHED}(?:between|from)\s+(?:the\s+years?\s+)?{_RANGE_START}{_TO}{_END}", _between),
    _rule(rf"{_PUBLISHED}(?:(?:in|during|over|for)\s+)?(?:the\s+years?\s+)?{_RANGE}", _between),
    _rule(rf"{_LAST}(?P<n>{_NUMBER})\s+(?P<unit>years?|decades?)\b", _last_years),
    _rule(rf"{_LAST}(?P<n>)(?P<unit>decade)\b", _last_years),
    _rule(rf"{_LAST}{_FEW_YEARS}|{_RECENT_YEARS}", _recent),
    _rule(_RELATIVE_YEAR, _relative_year),
    _rule(rf"{_PUBLISHED}{_AFTER}(?P<when>{_WHEN})", _after),
    _rule(rf"{_PUBLISHED}(?:{_SINCE}|{_IN})?(?P<when>{_WHEN}){_OR_LATER}", _from),
    _rule(rf"{_PUBLISHED}{_SINCE}(?P<when>{_WHEN})", _from),
    _rule(rf"{_PUBLISHED}{_BEFORE}(?P<when>{_WHEN})", _before),
    _rule(rf"{_PUBLISHED}(?:{_UNTIL}|{_IN})?(?P<when>{_WHEN}){_OR_EARLIER}", _until),
    _rule(rf"{_PUBLISHED}{_UNTIL}(?P<when>{_WHEN})", _until),
    _rule(rf"{_PUBLISHED}{_IN}(?P<when>{_WHEN})", _during),
    _rule(rf"(?P<when>{_DECADE})", _during),
    _rule(_YEAR_ADJECTIVE, _during),
    _rule(rf"{_LATEST_ON}|{_RECENTLY}", _recent),
]
# A recency word needs its evidence noun ("current guidelines", not "current smokers"). Compiled
# without IGNORECASE so that `_BETWEEN` can tell names ("WHO") from clinical capitals ("MI").
_RECENT_WORD = (
    r"(?i:\b(?:most\s+(?:recent|up[- ]to[- ]date|current)|up[- ]to[- ]date|recent|latest|newest|current|"
    r"new|updated|contemporary))"
)
_RULES.append(
    (re.compile(rf"{_RECENT_WORD}(?=(?:\s+{_BETWEEN}){{0,2}}\s+(?i:{_EVIDENCE_NOUNS})\b)"), _recent)
)
_RULES.append(_rule(r"\bcurrently(?=\s+(?:recommended|advised|accepted|used|approved)\b)", _recent))


def parse_temporal(question: str, today: date) -> Temporal:
    """The time limit a question sets, and the question without it (see the module notes)."""
    lo: int | None = None
    hi: int | None = None
    recency, kept = False, []
    for start, end, (low, high, recent) in _matches(question, today):
        new_lo = max((y for y in (lo, low) if y is not None), default=None)
        new_hi = min((y for y in (hi, high) if y is not None), default=None)
        if new_lo is not None and new_hi is not None and new_lo > new_hi:
            continue  # contradicts an earlier phrase: leave it in the question
        lo, hi, recency = new_lo, new_hi, recency or recent
        kept.append((start, end))
    if not kept:
        return Temporal(text=question)
    phrase = ", ".join(" ".join(question[s:e].split()) for s, e in kept)
    recency = recency and lo is None and hi is None  # explicit years win over "latest"
    return Temporal(_remove(question, kept), lo, hi, recency, phrase)


# Words that make a time phrase limit the evidence itself ("studies since 2015", "guidelines
# published before 2010"); without them, a year dates what is asked about ("In 2010, how many
# cases…?").
_PUBLICATION_INTENT = re.compile(
    rf"\b(?:published|publications?|evidence|literature|research|{_PUB_NOUNS})\b", re.I
)
_RELATIVE = re.compile(r"\b(?:last|past|recent|this|next|decades?)\b", re.I)


def scoped(parsed: Temporal, question: str) -> Temporal:
    """`parsed` read for search: about publications, or about events.

    A phrase about publications filters on publication year and leaves the searched text. A year
    about events keeps its words in the text (they help matching) and only tells that the evidence
    cannot predate it: "in 2010" or "since 2010" → documents from 2010 on. A relative span about
    events ("grown in the last two decades") sets no filter at all.
    """
    if parsed.phrase is None or parsed.recency or _PUBLICATION_INTENT.search(question):
        return parsed
    year_min = None if _RELATIVE.search(parsed.phrase) else parsed.year_min
    return Temporal(text=question, year_min=year_min, phrase=parsed.phrase, scope="event")


def _matches(question: str, today: date) -> list[tuple[int, int, Bounds]]:
    """Every rule's matches that no earlier rule took, in the order of the question."""
    taken: list[tuple[int, int, Bounds]] = []
    spans: list[tuple[int, int]] = []  # the same, sorted: overlap checks stay fast on a pasted page
    for pattern, action in _RULES:
        for m in pattern.finditer(question):
            if _overlaps(spans, m.start(), m.end()) or not _plausible_years(m, today):
                continue
            bounds = action(m, today)
            if bounds is not None:
                taken.append((m.start(), m.end(), bounds))
                insort(spans, (m.start(), m.end()))
    return sorted(taken)


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether start … end overlaps one of `spans` (sorted, disjoint)."""
    i = bisect_left(spans, (start,))
    return (i > 0 and spans[i - 1][1] > start) or (i < len(spans) and spans[i][0] < end)


def _plausible_years(m: re.Match[str], today: date) -> bool:
    """A "year" after next year is a number ("in 2090" is no publication year)."""
    return all(int(y) <= today.year + 1 for y in re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", m.group()))


def _remove(text: str, spans: list[tuple[int, int]]) -> str:
    """The text without `spans`; "and"/"or"/commas left alone between two of them go too."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and re.fullmatch(r"[\s,;]*(?:(?:and|or|but)\s*)?", text[merged[-1][1] : start], re.I):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    pieces, pos = [], 0
    for start, end in merged:
        pieces.append(text[pos:start])
        pos = end
    out = _tidy(" ".join([*pieces, text[pos:]]))
    if merged[0][0] == 0 and text[:1].isupper() and out[:1].islower():
        out = out[0].upper() + out[1:]  # the removed phrase opened the sentence
    return out


def _tidy(text: str) -> str:
    """White space and punctuation after a cut: no " ?", ", ,", "( )" or leading comma."""
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text)
    text = re.sub(r"\s+([?.!,;:)\]])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"[,;:]+\s*(?=[?.!]|$)", "", text)
    return text.strip().lstrip(",;: ").strip()
