"""Quantities in medical prose: a number with its unit and its comparator ("≥ 120 kg", "2 mg/kg",
"less than 5%", "7 days or more").

A dose, a threshold or a duration is only right with all three parts: "2 mg" is not "2 g", and
"< 5%" is not "> 5%". The claim check compares an answer's quantities with its cited passages
(`unmatched`), and the sentence splitter must never cut one apart (tests/text/test_quantities.py
checks every quantity of the sample library lies whole in one sentence).

Only units that medical writing abbreviates or spells out are read (mass, volume, time, percent,
pressure, temperature, concentration and their ratios such as "mg/kg/h"); a count noun
("3 patients") is not a unit, so its number stands alone. A unit written once for a range or a list
("2–3 g", "1, 2 or 4 mg/kg") belongs to each of its numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Canonical unit ← its spellings; the longest spelling is tried first.
_UNITS: dict[str, tuple[str, ...]] = {
    "µg": ("micrograms", "microgram", "mcg", "µg", "μg", "ug"),
    "ng": ("nanograms", "nanogram", "ng"),
    "mg": ("milligrams", "milligram", "mg"),
    "g": ("grams", "gram", "g"),
    "kg": ("kilograms", "kilogram", "kg"),
    "mL": ("millilitres", "milliliters", "millilitre", "milliliter", "ml", "mL"),
    "dL": ("decilitres", "deciliters", "dl", "dL"),
    "L": ("litres", "liters", "litre", "liter", "L"),
    "mmol": ("millimoles", "millimole", "mmol"),
    "mEq": ("mEq", "meq"),
    "IU": ("international units", "IU", "units", "unit"),
    "s": ("seconds", "second", "secs", "sec"),  # not a bare "s": "the 1990s"
    "min": ("minutes", "minute", "mins", "min"),
    "h": ("hours", "hour", "hrs", "hr", "h"),
    "d": ("days", "day", "d"),
    "wk": ("weeks", "week", "wks", "wk"),
    "mo": ("months", "month", "mo"),
    "y": ("years", "year", "yrs", "yr", "y"),
    "%": ("per cent", "percent", "%"),
    "mmHg": ("mm Hg", "mmHg"),
    "cmH2O": ("cm H2O", "cmH2O"),
    "°C": ("°C", "degrees Celsius", "degrees C"),
    "mm": ("millimetres", "millimeters", "mm"),
    "cm": ("centimetres", "centimeters", "cm"),
    "bpm": ("beats per minute", "bpm"),
}
_CANONICAL = {spelling.lower(): unit for unit, spellings in _UNITS.items() for spelling in spellings}
_UNIT = "|".join(re.escape(s) for s in sorted(_CANONICAL, key=len, reverse=True))
# One unit, or a ratio of them ("mg/kg/h", "mg per kg").
_UNIT_RUN = rf"(?:{_UNIT})(?:(?:\s*/\s*|\s+per\s+)(?:{_UNIT}))*"

_BELOW = ("≤", "≦", "<=", "=<", "<", "less than", "fewer than", "lower than", "below", "up to", "at most",
          "no more than", "not more than", "not exceeding", "maximum of", "a maximum of")  # fmt: skip
_ABOVE = ("≥", "≧", ">=", "=>", ">", "more than", "greater than", "higher than", "above", "at least",
          "no less than", "not less than", "exceeding", "in excess of", "minimum of", "a minimum of")  # fmt: skip
_AFTER_BELOW = ("or less", "or fewer", "or lower", "or below", "or younger", "or under",
                "and below", "and under")  # fmt: skip
_AFTER_ABOVE = ("or more", "or greater", "or higher", "or above", "or older", "or over",
                "and above", "and over")  # fmt: skip
_DIRECTION = {**{w: "<" for w in _BELOW + _AFTER_BELOW}, **{w: ">" for w in _ABOVE + _AFTER_ABOVE}}


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_SYMBOLS = [w for w in _BELOW + _ABOVE if not w[0].isalpha()]
_WORDS = [w for w in _BELOW + _ABOVE if w[0].isalpha()]
_QUANTITY = re.compile(
    rf"(?:(?P<before>{_alternatives(_SYMBOLS)}|(?<!\w)(?:{_alternatives(_WORDS)}))\s*)?"
    # Not the number of a name: "COVID-19", "IL-6".
    r"(?<![\w.,])(?<![A-Za-z]-)(?P<number>\d+(?:[.,]\d+)*)"
    rf"(?:\s?-?\s?(?P<unit>{_UNIT_RUN})(?![\w°]))?"
    rf"(?:\s+(?P<after>{_alternatives(_AFTER_BELOW + _AFTER_ABOVE)})\b)?"
    r"(?![\w])",
    re.IGNORECASE,
)
# What joins the numbers of a range or a list that share one unit: "2–3 g", "1, 2 or 4 mg".
_SHARES_UNIT = re.compile(r"\s*(?:-|–|—|to|,|and|or|, and|, or)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number as written (`text`, comparator and unit included; text[start:end] of its source),
    with its canonical value, unit (None for a bare number) and direction ("<", ">" or None)."""

    text: str
    value: str
    unit: str | None
    direction: str | None
    start: int
    end: int

    def __str__(self) -> str:
        return self.text


def quantities(text: str) -> list[Quantity]:
    """Every number of `text` with its unit and comparator, in order."""
    found = []
    for match in _QUANTITY.finditer(text):
        unit = _unit(match["unit"]) if match["unit"] else None
        direction = match["before"] or match["after"]
        found.append(Quantity(match[0].strip(), number_value(match["number"]), unit,
                              _DIRECTION[direction.lower()] if direction else None, match.start(), match.end()))  # fmt: skip
    # A unit written after the last number of a range or list belongs to each number before it (not
    # to a threshold: "p < 0.05 and 4.2%").
    for i in range(len(found) - 2, -1, -1):
        this, following = found[i], found[i + 1]
        if (
            this.unit is None
            and this.direction is None
            and following.unit
            and _SHARES_UNIT.fullmatch(text[this.end : following.start])
        ):
            found[i] = Quantity(this.text, this.value, following.unit, this.direction, this.start, this.end)
    return found


def number_value(text: str) -> str:
    """A number's canonical spelling: no thousands separators, no trailing decimal zeros ("1,200" is
    "1200", "9,5" and "9.50" are "9.5")."""
    plain = re.sub(r",(?=\d{3}\b)", "", text).replace(",", ".")
    return plain.rstrip("0").rstrip(".") if "." in plain else plain


@dataclass(frozen=True)
class Unmatched:
    """A quantity of a claim its passages do not state: `stated` is the passage's own form of the
    same number when the passages give it only with another unit or the opposite comparator."""

    claim: Quantity
    stated: Quantity | None


def unmatched(claim: str, passages: Sequence[str]) -> list[Unmatched]:
    """The quantities of `claim` that `passages` do not state, once each. A claim's number must be
    in a passage; with a unit, the passage must not give that number only with other units; with a
    comparator, it must not give it only the other way round. A passage's bare number is taken to
    agree (a table's unit sits in its header, a list's in its last item)."""
    stated = [q for passage in passages for q in quantities(passage)]
    out: list[Unmatched] = []
    seen: set[str] = set()
    for q in quantities(claim):
        if q.text in seen:
            continue
        seen.add(q.text)
        same = [s for s in stated if s.value == q.value]
        if not same:
            out.append(Unmatched(q, None))
            continue
        if q.unit is not None and all(s.unit not in (None, q.unit) for s in same):
            out.append(Unmatched(q, same[0]))
            continue
        agreeing = [s for s in same if q.unit is None or s.unit in (None, q.unit)]
        if q.direction is not None and all(s.direction not in (None, q.direction) for s in agreeing):
            out.append(Unmatched(q, agreeing[0]))
    return out


def _unit(written: str) -> str:
    if written.lower() in _CANONICAL:  # "per cent", "beats per minute": one unit, not a ratio
        return _CANONICAL[written.lower()]
    parts = re.split(r"\s*/\s*|\s+per\s+", written.strip(), flags=re.IGNORECASE)
    return "/".join(_CANONICAL.get(p.lower(), _CANONICAL.get(p.lower().replace(" ", ""), p)) for p in parts)
