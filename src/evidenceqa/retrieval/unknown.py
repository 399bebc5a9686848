"""Names in a question that the library never mentions.

"sugammadex dose for deep rocuronium block?" cannot be answered from a library in which no passage
says "sugammadex", however well its passages on neuromuscular block match the other words: an
answer would be drawn from evidence about something else. A question word is such a name when

- it is not a common English word (`text.english`): "tomorrow" or "agony" missing from a journal
  library says nothing about what the library holds;
- no chunk of the library holds its analysed term (spelling folded, stemmed);
- it is not one slip of the keyboard away from a word the library holds ("laparotmy");
- it is not a longer or shorter form of one: it shares no library word's first PREFIX letters
  ("eclamptic" beside "eclampsia", "acetabulum" beside "acetabular"; a word of PREFIX letters, all
  but its last: "detort" beside "detorsion"), and neither begins nor ends with a library word of
  MIN_LETTERS or more ("reachable", "intertrochanteric", "unprovoked").

Shorter words (abbreviations and shorthand: "TXA", "ppx", "sux"), the abbreviations the vocabulary
expanded whatever their length ("rFVIIa", "TURBT": the library may say them in full), words with
digits, and runs of letters longer than any name (MAX_LETTERS: pasted text without spaces, whose ~50
spellings per letter would cost seconds of every search) are left to the adequacy model. Everything
is read from the library's own term statistics, so it holds for any library after `ingest` alone;
the abstention rule that uses it is in `answer.abstain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from evidenceqa.library.catalogue import Catalogue
from evidenceqa.text.english import common_words
from evidenceqa.text.spelling import one_spelling
from evidenceqa.text.tokens import term, tokens

MIN_LETTERS = 5  # shorter words are abbreviations or shorthand more often than names
MAX_LETTERS = 30  # longer than any drug, device or eponym ("hydroxychloroquine" has 18)
PREFIX = 6  # letters a word shares with a library word to be a form of it
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def unknown_names(question: str, catalogue: Catalogue, abbreviations: Iterable[str] = ()) -> list[str]:
    """The words of `question` that name something the library never mentions, in question order;
    `abbreviations` (the ones the vocabulary expanded) are not names."""
    english = common_words()
    if not english:  # without the word list every rare English word would look like a name
        return []
    expanded = {word for abbreviation in abbreviations for word in tokens(abbreviation)}
    candidates = {
        word: term(word)
        for word in tokens(question)
        if word.isalpha()
        and MIN_LETTERS <= len(word) <= MAX_LETTERS
        and word not in english
        and word not in expanded
    }
    if not candidates:
        return []
    _, known = catalogue.term_frequencies(candidates.values())
    return [
        word
        for word, analysed in candidates.items()
        if analysed not in known and not _a_form_of_a_known_word(word, catalogue)
    ]


def _a_form_of_a_known_word(word: str, catalogue: Catalogue) -> bool:
    spelled = one_spelling(word)
    # A word of PREFIX letters shares all but its last: its own first PREFIX would have to be a
    # whole library word's beginning, and its other checks below have nothing to compare.
    if len(spelled) >= PREFIX and catalogue.has_term_prefix(spelled[: min(PREFIX, len(spelled) - 1)]):
        return True
    parts = {term(word[i:]) for i in range(2, len(word) - MIN_LETTERS + 1)}
    parts |= {term(word[:i]) for i in range(MIN_LETTERS, len(word) - 1)}
    slips = {term(slip) for slip in _one_edit(word)}
    return bool(catalogue.term_frequencies(parts | slips)[1])


def _one_edit(word: str) -> Iterator[str]:
    """Every string one deletion, transposition, substitution or insertion away from `word`."""
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            yield head + tail[1:]
            yield from (head + letter + tail[1:] for letter in _LETTERS)
        if len(tail) > 1:
            yield head + tail[1] + tail[0] + tail[2:]
        yield from (head + letter + tail for letter in _LETTERS)
