"""Text analysis for keyword search: tokenise, drop stop words, fold British and American
spellings onto one (evidenceqa.text.spelling), stem (English Snowball).

Every search backend indexes the analysed terms, not the raw text, so BM25 behaves the same on
LanceDB, Milvus Lite and a Milvus cluster whatever analyzers each engine offers. Tokens are runs
of letters and digits, the way every engine's standard tokenizer splits them, so the analysed text
survives any engine's own tokenizer unchanged ("COVID-19" → "covid 19").
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from evidenceqa.text.spelling import one_spelling

# The common English function words; clinical words such as "no", "not" and "without" stay,
# since they change the meaning of a question.
STOP_WORDS = frozenset(
    """a an and are as at be been but by for from had has have he her his i if in into is it its
    of on or our she such that the their then there these they this those to was we were what
    when where which who whom why will with would you your do does did can could should may might
    how about also""".split()
)
# Bumped whenever `terms` would return something else for some text: a catalogue then recounts its
# term statistics and every index re-syncs its keyword terms (evidenceqa.library.catalogue).
# 2: British and American spellings folded onto one. 3: "oedema" inside a word, "leuco-", and
# the British drug names.
ANALYSIS_VERSION = 3
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of `text`, stop words removed, not stemmed."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


def terms(text: str) -> list[str]:
    """The analysed terms of `text`: tokens in one spelling, stemmed."""
    return _stemmer().stemWords([one_spelling(t) for t in tokens(text)])


def term(token: str) -> str:
    """The analysed term of one lower-case token (`terms` without the tokenising)."""
    return str(_stemmer().stemWord(one_spelling(token)))


def analyze(text: str) -> str:
    """`terms(text)` joined by spaces: what backends index and what keyword queries send."""
    return " ".join(terms(text))
