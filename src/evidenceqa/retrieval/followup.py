"""Follow-up questions resolved against the conversation before they are searched.

"And in children?" or "How is it treated?" means nothing to a search engine on its own. A
follow-up that leans on the previous turn is rewritten into a question that stands alone, from the
previous turn's (already resolved) question:

- a pronoun ("it", "they", "this") is replaced by the previous question's topic: its run of
  content words with the rarest terms in the library ("How is it treated?" after "What is
  acromegaly?" → "How is acromegaly treated?"); a demonstrative before a noun ("this drug") is
  left with it, and the topic added;
- "what about X" / "and X" / "how about X": X replaces the phrase of the previous question it is
  most like, by the embedder ("What about hypothyroidism?" after "What are the symptoms of
  hyperthyroidism?" → "What are the symptoms of hypothyroidism?"): a topic X never takes the
  previous aspect with it, an aspect X ("and the treatment?") never replaces the topic; a lead
  before a whole question ("and how is it treated?") is dropped; a population ("in children",
  "kids", "neonates") replaces the previous one or is added, and a setting ("on mucous
  membranes", "after hip replacement") is added;
- a bare aspect ("what are the symptoms", "who is at risk?") has no term rare enough to stand
  alone in this library, so the topic is added to it.

A question with a term of its own that the library holds rarely, and none of those markers, is a
new question and is searched as it was asked. Rarity comes from the catalogue's term statistics, so
the rules hold for any library after `ingest` alone. An LLM, where one is configured, rewrites
instead (`answer.llm`), with these rules as its fallback.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evidenceqa.embeddings.base import Embedder
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.text.tokens import STOP_WORDS, terms

How = Literal["standalone", "pronoun", "substitution", "population", "setting", "aspect", "llm"]

_PRONOUNS = frozenset("it its they them their theirs this that these those one".split())
_DEMONSTRATIVES = frozenset("this these those".split())
# Which pronoun stands for the topic when there are several ("how do they diagnose it": it).
_SWAPPED = ("it", "its", "this", "these", "those", "they", "them", "their", "theirs", "one")
# Leads that hand the rest of the question to the previous one.
_LEAD = re.compile(
    r"^\s*(?:and\s+)?(?:what|how)\s+about\b|^\s*what\s+if\b|^\s*(?:and|also|but|so|or|then|plus)\b"
    r"|^\s*(?:the\s+)?same\s+(?:question|thing)?\s*(?:for|in|with)\b",
    re.IGNORECASE,
)
_PREPOSITIONS = frozenset("in for during among with without after before on at".split())
_PREPOSITION = re.compile(r"^\s*(?:in|for|during|among|with|without|after|before|on|at)\b", re.IGNORECASE)
_POPULATIONS = frozenset(
    """adult adults child children childhood kid kids infant infants infancy neonate neonates newborn
    newborns baby babies toddler toddlers teen teens teenager teenagers adolescent adolescents
    pediatric paediatric elderly older women woman men man pregnancy pregnant""".split()
)
# Words that ask about an aspect of a topic rather than name one.
_ASPECTS = frozenset(
    """symptom symptoms sign signs cause causes caused treatment treatments treat treated therapy
    diagnosis diagnose diagnosed test tests tested risk risks complication complications outlook
    prognosis prevent prevention inherited inheritance genetic common frequent often many much long
    side effects effect dose doses stage stages type types kind kinds safe safety work works
    recommended recommend get gets happen happens affect affects make different difference
    outcome outcomes rate rates option options evidence strong good best better worse need needs
    use used reduce reduces increase increases inhibit inhibits protect improve help bleed report
    reported linked""".split()
)
_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?", re.UNICODE)
# Words that open a question, and requests that carry no topic ("tell me about …").
_OPENERS = frozenset(
    "what how why when where who which whom whose is are was were does do did can could should".split()
)
_QUESTION_WORDS = _OPENERS | frozenset("tell me please explain describe know i my".split())
# Words that open a whole question: after a lead ("and where did it start?") the rest stands as one.
_INTERROGATIVES = _OPENERS | frozenset("will would may might has have".split())
SPECIFIC_IDF = 0.5  # share of the library's highest idf above which a term names a topic by itself
MAX_SPAN = 4  # the longest phrase of the previous question X may replace
MAX_PHRASES = 64  # phrases of the previous question embedded for "what about X", at most
NEAR_SIMILARITY = 0.05
TOPIC_SHARE = 0.15  # a neighbour of the topic's rarest word at least this share as rare joins it


@dataclass(frozen=True)
class Resolution:
    """What to search for: the question as asked, or resolved against the previous turn."""

    question: str
    asked: str
    how: How = "standalone"

    @property
    def changed(self) -> bool:
        return self.question != self.asked


Rarity = Callable[[Sequence[str]], Mapping[str, float]]


def catalogue_rarity(catalogue: Catalogue) -> Rarity:
    """Each analysed term's idf over the library's highest (a term the library lacks: 1.0)."""

    def rarity(words: Sequence[str]) -> dict[str, float]:
        chunks, df = catalogue.term_frequencies(words)
        top = math.log(1 + (chunks + 0.5) / 0.5) if chunks else 1.0
        return {w: math.log(1 + (chunks - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5)) / top for w in words}

    return rarity


@dataclass
class FollowUps:
    """The offline resolver: rules over the words, the embedder for which phrase X replaces."""

    embedder: Embedder
    rarity: Rarity

    def resolve(self, question: str, previous: Sequence[str]) -> Resolution:
        """`question` resolved against `previous`, the conversation's earlier questions (as they were
        searched), oldest first; only the last one is leaned on."""
        asked = question.strip()
        if not previous or not asked:
            return Resolution(asked, asked)
        before = previous[-1].strip().rstrip("?.! ")
        words = [w.lower() for w in _WORD.findall(asked)]
        if _LEAD.search(asked):
            rest = _LEAD.sub("", asked, count=1).strip(" ,?.!")
            opening = _WORD.match(rest)
            if opening and opening.group(0).lower().split("'")[0] in _INTERROGATIVES:
                # "And where did the virus originate?": the lead joins a whole question to the last.
                alone = self.resolve(f"{rest}?", previous)
                return (
                    Resolution(alone.question, asked, alone.how)
                    if alone.changed
                    else Resolution(asked, asked)
                )
            return self._lead(asked, rest, before)
        if any(w in _PRONOUNS for w in words):
            return Resolution(self._pronoun(asked, before), asked, "pronoun")
        fragment = not words or words[0] not in _QUESTION_WORDS  # no question word: an ellipsis
        if fragment and (_PREPOSITION.match(asked) or set(words) & _POPULATIONS):
            return self._lead(asked, asked.strip(" ?.!"), before)
        if self._stands_alone(words):
            return Resolution(asked, asked)
        return Resolution(f"{asked.rstrip(' ?.!')} ({_topic(before, self.rarity)})?", asked, "aspect")

    def _stands_alone(self, words: list[str]) -> bool:
        own = [w for w in words if w not in STOP_WORDS and w not in _ASPECTS and w not in _POPULATIONS]
        stems = terms(" ".join(own))
        return any(r >= SPECIFIC_IDF for r in self.rarity(stems).values())

    def _lead(self, asked: str, rest: str, before: str) -> Resolution:
        rest = re.sub(r"^(?:the|a|an)\s+", "", rest, flags=re.IGNORECASE)
        rest_words = {w.lower() for w in _WORD.findall(rest)}
        if not rest:
            return Resolution(f"{before}?", asked, "aspect")
        if rest_words & _POPULATIONS:
            if rest_words <= _POPULATIONS | STOP_WORDS | _PREPOSITIONS:  # "in children", "kids"
                return Resolution(_with_population(before, rest), asked, "population")
            topic = _topic(before, self.rarity)  # "the schedule for kids": about the same topic
            return Resolution(f"{rest} ({topic})?", asked, "population")
        if any(w in _PRONOUNS for w in rest_words):
            return Resolution(self._pronoun(rest, before), asked, "pronoun")
        if _PREPOSITION.match(rest):  # "what about on mucous membranes?": a setting added
            return Resolution(f"{before} {rest}?", asked, "setting")
        return Resolution(self._substituted(before, rest), asked, "substitution")

    def _pronoun(self, text: str, before: str) -> str:
        topic = _topic(before, self.rarity)
        possessive = f"{topic}'s" if not topic.endswith("s") else f"{topic}'"

        words = list(_WORD.finditer(text))
        # A demonstrative before a word that names something is its determiner ("those deaths",
        # "this drug"), not the topic: before an aspect ("this treated", "these symptoms") or at the
        # end it stands for it.
        stands_for = [
            m
            for m, after in zip(words, [*words[1:], None], strict=True)
            if m.group(0).lower() not in _DEMONSTRATIVES
            or after is None
            or after.group(0).lower() in _ASPECTS | STOP_WORDS | _INTERROGATIVES | _PREPOSITIONS
        ]
        found = {m.group(0).lower(): m for m in reversed(stands_for)}  # the first of each
        pronoun = next((found[p] for p in _SWAPPED if p in found), None)
        if pronoun is None:  # "that evidence", "those deaths": the topic is added, nothing swapped
            return f"{text.rstrip(' ?.!')} ({topic})?"
        swapped = possessive if pronoun.group(0).lower() in ("its", "their", "theirs") else topic
        return f"{text[: pronoun.start()]}{swapped}{text[pronoun.end() :]}"

    def _substituted(self, before: str, phrase: str) -> str:
        """`before` with its phrase most like `phrase` replaced by it. A topic never takes the
        question's frame with it: a phrase of aspect words only, or the previous topic with one, is
        not replaced ("How is migraine treated?" → "How is X treated?", not "How is X?"). An aspect
        ("and the treatment?") replaces a phrase outside the topic, or is asked of the topic where
        the question has no other ("What is X?" → "treatment (X)?")."""
        topic = _topic(before, self.rarity)
        start = before.find(topic)
        end = start + len(topic)
        spans = _spans(before)
        if {w.lower() for w in _WORD.findall(phrase)} <= _ASPECTS | STOP_WORDS:
            spans = [span for span in spans if span[1] <= start or span[0] >= end]
            if not spans:
                return f"{phrase} ({topic})?"
        else:
            spans = [span for span in spans if not _frame(span, start, end)] or spans
        if not spans:
            return f"{before} {phrase}?"
        vectors = self.embedder.embed([phrase, *(text for _, _, text in spans)])
        similarity = np.asarray(vectors[1:]) @ np.asarray(vectors[0])
        # The longest of the phrases about as like it as the best ("diverticular disease", not "disease").
        near = [i for i, value in enumerate(similarity) if value >= similarity.max() - NEAR_SIMILARITY]
        start, end, _ = max((spans[i] for i in near), key=lambda span: span[1] - span[0])
        return f"{before[:start]}{phrase}{before[end:]}?"


def _frame(span: tuple[int, int, str], start: int, end: int) -> bool:
    """Whether `span` holds the question's frame: aspect words only, or the topic (at `start`:`end`)
    with an aspect word."""
    aspects = [w.lower() in _ASPECTS for w in _WORD.findall(span[2])]
    return all(aspects) or (any(aspects) and span[0] < end and span[1] > start)


def _runs(text: str) -> list[list[re.Match[str]]]:
    """Runs of consecutive content words (not stop or question words) in `text`."""
    runs: list[list[re.Match[str]]] = [[]]
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if word in STOP_WORDS or word in _QUESTION_WORDS:
            runs.append([])
        else:
            runs[-1].append(match)
    return [run for run in runs if run]


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Every phrase of up to MAX_SPAN consecutive content words: (start, end, text). A long
    question gets shorter phrases, and at most MAX_PHRASES, so embedding them stays one small batch."""
    for longest in range(MAX_SPAN, 0, -1):
        found = []
        for run in _runs(text):
            for i in range(len(run)):
                for j in range(i, min(i + longest, len(run))):
                    start, end = run[i].start(), run[j].end()
                    end += text[end : end + 1] in ("'", "’")  # "Graves'" whole
                    found.append((start, end, text[start:end]))
        if len(found) <= MAX_PHRASES:
            break
    return found[:MAX_PHRASES]


def _topic(text: str, rarity: Rarity) -> str:
    """The previous question's topic: its rarest content word, with the words beside it that are
    not common in the library ("tranexamic acid", not "tranexamic acid used"); aspect and
    population words are never part of it."""
    runs = [[m for m in run if m.group(0).lower() not in _ASPECTS | _POPULATIONS] for run in _runs(text)]
    stems = {m.group(0): terms(m.group(0)) for run in runs for m in run}
    rare = rarity(sorted({stem for found in stems.values() for stem in found}))  # one lookup for all
    best, best_score = text, -1.0
    for words in runs:
        if not words:
            continue
        scores = [max((rare[stem] for stem in stems[m.group(0)]), default=0.0) for m in words]
        top = max(range(len(words)), key=scores.__getitem__)
        if scores[top] <= best_score:
            continue
        start = end = top
        while (
            start > 0
            and words[start - 1].end() + 1 >= words[start].start()
            and scores[start - 1] >= scores[top] * TOPIC_SHARE
        ):
            start -= 1
        while (
            end + 1 < len(words)
            and words[end].end() + 1 >= words[end + 1].start()
            and scores[end + 1] >= scores[top] * TOPIC_SHARE
        ):
            end += 1
        best, best_score = text[words[start].start() : words[end].end()], scores[top]
    return best


def _with_population(before: str, phrase: str) -> str:
    """`before` for the population named in `phrase`: its own population (with its preposition)
    dropped, `phrase` added as a prepositional phrase."""
    words = "|".join(sorted(_POPULATIONS, key=len, reverse=True))
    kept = re.sub(rf"(?:\s+(?:in|for|among|with))?\s+(?:{words})\b", "", f" {before}", flags=re.IGNORECASE)
    kept = " ".join(kept.split())
    if not _PREPOSITION.match(phrase):
        phrase = f"in {phrase}"
    head, colon, tail = kept.partition(":")  # "NHL in adults: what are the stages?" keeps its shape
    return f"{head} {phrase}:{tail}?" if colon else f"{kept} {phrase}?"
