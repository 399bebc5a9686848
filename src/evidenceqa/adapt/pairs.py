"""Training pairs the library itself provides: a short text that asks for a passage, and the passage.

Three kinds, none taken from a benchmark:
- heading:  a document's title, with the section heading when it says something ("Symptoms",
            not "Results") → a paragraph of that section;
- abstract: a sentence of the abstract (or of a structured abstract's opening) → the body
            paragraph of the same document that shares the most terms with it;
- question: a MedQuAD page's answer section → the consumer question MedQuAD asks for that
            section type ("What are the symptoms of X ?"), built from the page title.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from evidenceqa.documents import Document, Section
from evidenceqa.text.sentences import split_sentences
from evidenceqa.text.tokens import terms

PAIR_KINDS = ("heading", "abstract", "question")

# Headings that name a part of a paper, not a topic: a query made of them says nothing.
GENERIC_HEADINGS = frozenset(
    """abstract introduction background methods method materials results result discussion
    conclusion conclusions objective objectives purpose aims aim setting design summary findings
    interpretation context limitations acknowledgements references funding""".split()
)
# Sections that open a document with its own summary of it.
_OPENING_HEADINGS = frozenset(
    {"abstract", "background", "introduction", "objective", "objectives", "purpose"}
)
# MedQuAD's question for each answer-section type (the templates of the MedQuAD collection).
MEDQUAD_QUESTIONS = {
    "information": "What is (are) {} ?",
    "symptoms": "What are the symptoms of {} ?",
    "treatment": "What are the treatments for {} ?",
    "inheritance": "Is {} inherited ?",
    "frequency": "How many people are affected by {} ?",
    "genetic changes": "What are the genetic changes related to {} ?",
    "causes": "What causes {} ?",
    "exams and tests": "How to diagnose {} ?",
    "research": "what research (or clinical trials) is being done for {} ?",
    "outlook": "What is the outlook for {} ?",
    "susceptibility": "Who is at risk for {} ?",
    "considerations": "What to do for {} ?",
    "prevention": "How to prevent {} ?",
    "stages": "What are the stages of {} ?",
    "complications": "What are the complications of {} ?",
}
MIN_PASSAGE_WORDS = 20
MIN_SENTENCE_WORDS = 8
MIN_SHARED_TERMS = 3  # an abstract sentence and a body paragraph sharing fewer are not a pair
PER_DOCUMENT = {"heading": 4, "abstract": 6, "question": 20}


@dataclass(frozen=True)
class Pair:
    kind: str
    query: str
    positive: str
    doc_id: str


def mine_pairs(
    documents: Iterable[Document], skip_questions_for: frozenset[str] = frozenset()
) -> Iterator[Pair]:
    """Every pair the documents give; MedQuAD question pairs are not made for `skip_questions_for`."""
    for doc in documents:
        yield from heading_pairs(doc)
        yield from abstract_pairs(doc)
        if doc.doc_id not in skip_questions_for:
            yield from question_pairs(doc)


def heading_pairs(doc: Document) -> Iterator[Pair]:
    if not doc.title or doc.collection == "medquad":  # MedQuAD headings are question types: see below
        return
    made = 0
    for path, section in _sections(doc):
        topic = [h for h in path if h.strip().lower() not in GENERIC_HEADINGS]
        passage = _first_passage(section)
        if passage and made < PER_DOCUMENT["heading"]:
            yield Pair("heading", " — ".join([doc.title, *topic]), passage, doc.doc_id)
            made += 1


def abstract_pairs(doc: Document) -> Iterator[Pair]:
    opening, body = _split_opening(doc)
    if not opening or not body:
        return
    body_terms = [set(terms(p)) for p in body]
    made = 0
    for sentence in (s for text in opening for s in split_sentences(text)):
        if made >= PER_DOCUMENT["abstract"] or len(sentence.split()) < MIN_SENTENCE_WORDS:
            continue
        wanted = set(terms(sentence))
        shared = [len(wanted & t) for t in body_terms]
        best = max(range(len(body)), key=shared.__getitem__)
        if shared[best] >= MIN_SHARED_TERMS:
            yield Pair("abstract", sentence, body[best], doc.doc_id)
            made += 1


def question_pairs(doc: Document) -> Iterator[Pair]:
    if doc.collection != "medquad" or not doc.title:
        return
    for path, section in _sections(doc)[: PER_DOCUMENT["question"]]:
        template = MEDQUAD_QUESTIONS.get((path[-1] if path else "").strip().lower())
        passage = _first_passage(section)
        if template and passage:
            yield Pair("question", template.format(doc.title), passage, doc.doc_id)


def _sections(doc: Document) -> list[tuple[tuple[str, ...], Section]]:
    return [item for top in doc.sections for item in top.walk()]


def _first_passage(section: Section) -> str | None:
    for paragraph in section.paragraphs:
        if len(paragraph.text.split()) >= MIN_PASSAGE_WORDS:
            return paragraph.text
    return None


def _split_opening(doc: Document) -> tuple[list[str], list[str]]:
    """The opening's paragraphs (abstract, or a structured abstract's first part) and the rest's."""
    opening: list[str] = []
    body: list[str] = []
    for path, section in _sections(doc):
        heading = (path[-1] if path else "").strip().lower()
        is_opening = section.kind == "abstract" or heading in _OPENING_HEADINGS
        texts = [p.text for p in section.paragraphs if len(p.text.split()) >= MIN_PASSAGE_WORDS or is_opening]
        (opening if is_opening and not body else body).extend(texts)
    return opening, body
