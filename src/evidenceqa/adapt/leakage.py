"""The guard between training and benchmarks: no benchmark question or gold passage trains the model.

A training query is refused when it is a benchmark question (after normalising case, spacing and
punctuation), is nearly one (most of its words shared with a question), contains a gold passage
or is part of one. Gold passages shorter than `MIN_GOLD_CHARS` (covidqa's one-word answers such
as "HCoV") are not used for containment: they occur throughout the library, so forbidding them
would forbid the domain itself, and a query holding one word of an answer is not the answer.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evidenceqa.text.tokens import terms

MIN_GOLD_CHARS = 25
NEAR_DUPLICATE = 0.7  # Jaccard of word sets at or above which a query counts as the question itself
_SPACE = re.compile(r"\s+")
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise(text: str) -> str:
    return _SPACE.sub(" ", _PUNCTUATION.sub(" ", text.lower())).strip()


@dataclass
class Holdout:
    """What the benchmarks hold: their questions, gold passages and gold documents."""

    questions: set[str] = field(default_factory=set)
    gold_passages: set[str] = field(default_factory=set)
    gold_doc_ids: set[str] = field(default_factory=set)
    _by_word: dict[str, list[frozenset[str]]] = field(default_factory=lambda: defaultdict(list))
    refused: Counter[str] = field(default_factory=Counter)

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> Holdout:
        holdout = cls()
        for path in paths:
            with path.open(encoding="utf-8") as stream:
                for line_no, line in enumerate(stream, start=1):
                    if line.strip():
                        holdout.add_row(_row(path, line_no, line))
        return holdout

    def add_row(self, row: dict) -> None:
        question = normalise(row["question"])
        self.questions.add(question)
        words = frozenset(terms(question))
        # A near duplicate lacks at most 30% of the question's words, so it holds at least one of
        # any int(0.3 n) + 1 of them: indexing under the longest (rarest) few finds every one.
        for word in sorted(words, key=lambda w: (-len(w), w))[: int((1 - NEAR_DUPLICATE) * len(words)) + 1]:
            self._by_word[word].append(words)
        for passage in row.get("gold_passages") or []:
            if len(passage.strip()) >= MIN_GOLD_CHARS:
                self.gold_passages.add(normalise(passage))
        self.gold_doc_ids.update(row.get("gold_doc_ids") or [])

    def reason(self, query: str) -> str | None:
        """Why `query` may not train the model, or None when it may."""
        text = normalise(query)
        if text in self.questions:
            return "is a benchmark question"
        if self._near(text):
            return "nearly a benchmark question"
        if any(gold in text or text in gold for gold in self.gold_passages):
            return "overlaps a gold passage"
        return None

    def allows(self, query: str) -> bool:
        why = self.reason(query)
        if why:
            self.refused[why] += 1
        return why is None

    def _near(self, text: str) -> bool:
        words = frozenset(terms(text))
        for word in words:
            for question in self._by_word.get(word, ()):
                if len(words & question) / len(words | question) >= NEAR_DUPLICATE:
                    return True
        return False


def _row(path: Path, line_no: int, line: str) -> dict:
    try:
        row = json.loads(line)
        str(row["question"])
        return row
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}:{line_no}: not a benchmark row ({exc})") from None
