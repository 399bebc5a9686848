"""Which library documents answer a candidate question, and how sure that is.

Three kinds of gold source, each with a confidence the reviewer sees:
- source (1.0): the document the pair came from, when the library holds it. A restatement — an
  Editors' Summary, or an abstract answering a question-title — repeats what the article's body
  says, so its gold passage is the body's sentence that best matches the answer (outside the summary
  or abstract, where the body has text): the benchmark must find the evidence, not the summary that
  quotes it. Any other pattern's own section is its answer: the passage is the answer's first
  complete statement there (MedQuAD: "DVT is a blood clot that forms in a vein deep in the body.").
- cited (0.9): a library document whose DOI the answer names.
- answers (0–1): another document the question's search finds. Its best chunk must be about the
  question — hold at least `min_coverage` of the question's terms (in its title, section or text) —
  and agree with the answer: the confidence, the mean of that coverage and the answer overlap, must
  reach `min_confidence`. The answer overlap is the share of terms (analysed: stemmed, stop words
  out) the chunk and the answer have in common, over the smaller of the two term sets, so a short
  chunk inside a long answer counts as much as a short answer inside a long chunk. The coverage
  gate keeps out boilerplate that two pages of one site share word for word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evidenceqa.curation.candidates import Source
from evidenceqa.curation.extract import Pair
from evidenceqa.documents import Chunk, Document
from evidenceqa.retrieval.retriever import Retriever
from evidenceqa.text.sentences import ends_sentence, split_sentences
from evidenceqa.text.tokens import terms

# Patterns whose answer restates the article's own body (see the module's docstring).
RESTATEMENTS = frozenset({"summary", "question-title"})
CITED_CONFIDENCE = 0.9
MIN_TERMS = 8  # fewer distinct terms than this (a heading, a one-line chunk) says too little to compare
MIN_PASSAGE_WORDS = 6
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+")


@dataclass(frozen=True)
class MappingRules:
    k: int = 20  # how deep the question's search looks for other answering documents
    min_coverage: float = 0.5
    min_confidence: float = 0.6
    max_answering: int = 3


def overlap(answer_terms: set[str], text: str) -> float:
    """Shared terms over the smaller term set; 0 when either side is too small to judge."""
    found = set(terms(text))
    smaller = min(len(answer_terms), len(found))
    return len(answer_terms & found) / smaller if smaller >= MIN_TERMS else 0.0


def coverage(question_terms: set[str], chunk: Chunk) -> float:
    """The share of the question's terms in the chunk's embedded text (title and section path too)."""
    return len(question_terms & set(terms(chunk.text))) / len(question_terms) if question_terms else 0.0


def sentences_of(text: str) -> list[str]:
    """Sentences within paragraphs: a passage never spans two paragraphs, which another chunking
    could put in different chunks."""
    return [
        s for para in text.split("\n\n") for s in split_sentences(para) if len(s.split()) >= MIN_PASSAGE_WORDS
    ]


def statements(text: str) -> list[str]:
    """Its complete sentences that state something: no question, no lead-in ending in ":"."""
    return [s for s in sentences_of(text) if ends_sentence(s) and not s.endswith("?")]


def best_sentence(chunk: Chunk, wanted: set[str]) -> str | None:
    """The chunk's sentence that best matches `wanted` — many shared terms, few others (shared² over
    its term count) — as exact text of the chunk's body: passage-level relevance is containment."""
    best, best_score = None, 0.0
    for sentence in sentences_of(chunk.body):
        if sentence.endswith("?"):  # a heading-like question restates, it does not answer
            continue
        own = set(terms(sentence))
        score = len(wanted & own) ** 2 / len(own) if own else 0.0
        if score > best_score and sentence in chunk.body:
            best, best_score = sentence, score
    return best


def source_only(pair: Pair, doc: Document) -> Source:
    """The pair's own document as its one gold source, unchecked against any library (no mapping)."""
    opening = next(iter(statements(pair.answer)), None)
    return Source(doc.doc_id, "source", 1.0, doc.title, opening, pair.location.describe(), in_library=None)


class Mapper:
    def __init__(self, retriever: Retriever, rules: MappingRules | None = None) -> None:
        self.retriever = retriever
        self.catalogue = retriever.catalogue
        self.rules = rules or MappingRules()

    def sources(self, pair: Pair, doc: Document) -> list[Source]:
        """The pair's gold sources, best first: its own document, cited ones, then answering ones."""
        wanted = set(terms(pair.answer)) | set(terms(pair.question))
        answer_terms = set(terms(pair.answer))
        own = self._own(pair, doc, wanted)
        cited = self._cited(pair, doc, wanted)
        taken = {doc.doc_id, *(s.doc_id for s in cited)}
        return [own, *cited, *self._answering(pair, taken, answer_terms, wanted)]

    def _content_chunks(self, doc_id: str) -> list[Chunk]:
        return [c for c in self.catalogue.chunks(doc_id) if c.hierarchy_level != "document"]

    def _own(self, pair: Pair, doc: Document, wanted: set[str]) -> Source:
        chunks = self._content_chunks(doc.doc_id)
        if not chunks:
            return Source(doc.doc_id, "source", 1.0, doc.title, None, None, in_library=False)
        if pair.pattern in RESTATEMENTS:
            # The whole summary or abstract the pair sits in restates the body: look outside it.
            block = pair.location.section_path[:1]
            outside = [c for c in chunks if c.section_path[: len(block)] != block]
            chunk, passage = _best_passage(outside or chunks, wanted)
        else:
            column = pair.location.section_path
            inside = [c for c in chunks if c.section_path[: len(column)] == column]
            chunk, passage = _opening(inside, pair.answer) or _best_passage(inside or chunks, wanted)
        return Source(doc.doc_id, "source", 1.0, doc.title, passage, _section(chunk), in_library=True)

    def _cited(self, pair: Pair, doc: Document, wanted: set[str]) -> list[Source]:
        cited = []
        for doi in dict.fromkeys(m.group(0).rstrip(".,;)").lower() for m in _DOI.finditer(pair.answer)):
            doc_id = "doi:" + doi
            record = self.catalogue.document(doc_id) if doc_id != doc.doc_id else None
            if record is None:
                continue
            chunk, passage = _best_passage(self._content_chunks(doc_id), wanted)
            cited.append(Source(doc_id, "cited", CITED_CONFIDENCE, record.title, passage, _section(chunk)))
        return cited

    def _answering(
        self, pair: Pair, taken: set[str], answer_terms: set[str], wanted: set[str]
    ) -> list[Source]:
        response = self.retriever.search(pair.question, k=self.rules.k, mode="hybrid")
        question_terms = set(terms(pair.question))
        best: dict[str, tuple[float, Chunk]] = {}
        for result in response.results:
            chunk = result.chunk
            about = coverage(question_terms, chunk)
            if chunk.doc_id in taken or about < self.rules.min_coverage:
                continue
            confidence = (about + overlap(answer_terms, chunk.body)) / 2
            if (
                confidence >= self.rules.min_confidence
                and confidence > best.get(chunk.doc_id, (0.0, chunk))[0]
            ):
                best[chunk.doc_id] = (confidence, chunk)
        ranked = sorted(best.values(), key=lambda item: -item[0])[: self.rules.max_answering]
        return [
            Source(
                chunk.doc_id,
                "answers",
                round(confidence, 2),
                chunk.title,
                best_sentence(chunk, wanted),
                _section(chunk),
            )
            for confidence, chunk in ranked
        ]


def _opening(chunks: list[Chunk], answer: str) -> tuple[Chunk, str] | None:
    """The answer's first full sentence, in the chunk that holds it: where the answer is the section
    itself, its opening states the answer (MedQuAD: "DVT is a blood clot that forms in a vein …")."""
    for sentence in statements(answer)[:3]:
        for chunk in chunks:
            if sentence in chunk.body:
                return chunk, sentence
    return None


def _best_passage(chunks: Iterable[Chunk], wanted: set[str]) -> tuple[Chunk | None, str | None]:
    """The chunk sharing the most terms with `wanted`, and its best sentence."""
    scored = [(len(wanted & set(terms(c.body))), c) for c in chunks]
    if not scored:
        return None, None
    _, chunk = max(scored, key=lambda item: item[0])
    return chunk, best_sentence(chunk, wanted)


def _section(chunk: Chunk | None) -> str | None:
    return " > ".join(chunk.section_path) if chunk is not None else None
