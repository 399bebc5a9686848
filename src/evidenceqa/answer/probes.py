"""Questions a library asks of itself, for calibrating abstention without a benchmark.

Each probe is written from one sentence of one content chunk, in the library's own words, so any
library can calibrate after `ingest` alone. Titles and headings are never used as questions: a
benchmark's questions are often exactly those (PubMedQA's are the titles, MedQuAD's the headings),
and their wording would teach the model one style. A sentence's specific words (in some chunks of
the library, not in most: the words a question is asked in) make the question, in four styles
that clinicians use and that share less and less of the sentence's wording:
- keyword: a few of the sentence's specific words ("chlorhexidine mucous membranes irritation");
- question: more of them in a question ("What is known about …?");
- related: two or three of them and a word of the same document that the sentence lacks, the way
  a paraphrase brings words of the topic the answer does not use;
- scenario: a long question around a patient, with the document's topic and the sentence's words.
The sentence itself is the passage whose presence in the evidence makes the probe answered.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest

from evidenceqa.answer.extractive import answerable_sentences
from evidenceqa.index.base import CONTENT_LEVELS
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.text.tokens import terms, tokens

STYLES = ("keyword", "question", "related", "scenario")
# A sentence long enough to hold a finding, not so long that it is a paragraph run together.
MIN_WORDS, MAX_WORDS = 8, 60
# Specific: in at least two chunks (the question is askable elsewhere, so a held-out probe is not
# trivially a miss) and in at most this share of them (not "patients", "study").
MAX_SHARE = 0.05
OPENERS = ("What is known about {}?", "What does the evidence say about {}?", "Is there evidence on {}?")
SCENARIOS = (
    "Patient with {topic} - {words}; {related}, what does the literature recommend?",
    "We see {topic} in our unit: {words} and {related} - is there evidence to guide us?",
)


@dataclass(frozen=True)
class Probe:
    question: str
    doc_id: str
    chunk_id: str
    passage: str  # the sentence it was written from, verbatim from the chunk
    style: str


def probes(catalogue: Catalogue, n: int, seed: int = 13) -> list[Probe]:
    """Up to `n` probes, one per document, documents drawn at random in turn from each collection
    (a small collection is not drowned by a large one), styles in rotation."""
    rng = random.Random(seed)
    n_chunks = catalogue.term_frequencies(())[0]
    made: list[Probe] = []
    for doc_id in _documents_in_turn(catalogue, rng):
        if len(made) >= n:
            break
        probe = _probe(catalogue, doc_id, STYLES[len(made) % len(STYLES)], n_chunks, rng)
        if probe is not None:
            made.append(probe)
    return made


def _documents_in_turn(catalogue: Catalogue, rng: random.Random) -> Iterator[str]:
    by_collection: dict[str | None, list[str]] = {}
    for record in catalogue.documents():
        by_collection.setdefault(record.collection, []).append(record.doc_id)
    shuffled = []
    for name in sorted(by_collection, key=lambda name: name or ""):  # the catalogue allows a NULL collection
        ids = sorted(by_collection[name])
        rng.shuffle(ids)
        shuffled.append(ids)
    for turn in zip_longest(*shuffled):
        yield from (doc_id for doc_id in turn if doc_id is not None)


def _probe(catalogue: Catalogue, doc_id: str, style: str, n_chunks: int, rng: random.Random) -> Probe | None:
    """A probe from the first chunk (in a random order) with a sentence of three specific words."""
    chunks = [c for c in catalogue.chunks(doc_id) if c.hierarchy_level in CONTENT_LEVELS]
    rarity = _specific_words(catalogue, " ".join(c.body for c in chunks), n_chunks)
    for chunk in rng.sample(chunks, len(chunks)):
        sentences = [
            s.text for s in answerable_sentences(chunk.body) if MIN_WORDS <= len(s.text.split()) <= MAX_WORDS
        ]
        # The sentence with the most specific words says the most that a question could ask.
        sentence = max(sentences, key=lambda s: len(_words_of(s, rarity)), default="")
        words = _words_of(sentence, rarity)
        if len(words) < 3:
            continue
        in_chunk = set(tokens(chunk.body))
        others = sorted({w for c in chunks if c is not chunk for w in _words_of(c.body, rarity)} - in_chunk)
        topic = _rarest(_words_of(chunks[0].title or chunks[0].body, rarity), rarity, 2)
        question = _write(style, _Words(words, rarity), others, topic, rng)
        return Probe(question, doc_id, chunk.chunk_id, sentence, style)
    return None


@dataclass(frozen=True)
class _Words:
    """A sentence's specific words in its order, with each one's chunk count (lower: rarer)."""

    order: list[str]
    rarity: dict[str, int]

    def rarest(self, n: int) -> list[str]:
        return _rarest(self.order, self.rarity, n)


def _write(style: str, words: _Words, others: list[str], topic: list[str], rng: random.Random) -> str:
    """The question in `style` from the sentence's specific `words`, words of its document that the
    sentence's chunk lacks (`others`) and the document's topic words."""
    related = rng.choice(others) if others else words.order[-1]
    if style == "keyword":
        return " ".join(words.rarest(rng.randint(3, 4)))
    if style == "question":
        return rng.choice(OPENERS).format(" ".join(words.rarest(rng.randint(4, 6))))
    if style == "related":
        return " ".join([*words.rarest(rng.randint(2, 3)), related])
    return rng.choice(SCENARIOS).format(
        topic=" ".join(topic) or words.order[0], words=" ".join(words.rarest(4)), related=related
    )


def _rarest(words: list[str], rarity: dict[str, int], n: int) -> list[str]:
    """The `n` rarest of `words`, in the order `words` has them."""
    chosen = set(sorted(words, key=lambda w: rarity[w])[:n])
    return [w for w in words if w in chosen]


def _specific_words(catalogue: Catalogue, text: str, n_chunks: int) -> dict[str, int]:
    """The words of `text` whose analysed term is in 2 … MAX_SHARE·n of the library's chunks → that count."""
    stems = {w: stem for w in set(tokens(text)) if w.isalpha() and len(w) >= 3 for stem in terms(w)[:1]}
    _, df = catalogue.term_frequencies(stems.values())
    top = max(2, int(MAX_SHARE * n_chunks))
    return {w: df[s] for w, s in stems.items() if 2 <= df.get(s, 0) <= top}


def _words_of(text: str, rarity: dict[str, int]) -> list[str]:
    """The specific words of `text`, once each, in text order."""
    return list(dict.fromkeys(w for w in tokens(text) if w in rarity))
