"""Question–answer pairs a publisher already wrote, found in loaded Documents.

Patterns (the name each pair carries in `pattern`):
- question-heading: a section whose heading is a question ("What Does the Evidence Show?"); the
  answer is everything below the heading, subsections included.
- summary / box: the same inside a summary (PLOS Editors' Summary: "Why Was This Study Done?") or a
  boxed text with a question title.
- question-title: an article whose title ends in a question ("…: Can Mental Exercise Prevent
  Alzheimer Disease?"), answered by its abstract's conclusion (else the whole abstract).
- qa-text: "Q:"/"A:" or "Question:"/"Answer:" paragraphs, or both on one line.
- medquad: a MedQuAD page's question (its section heading, which the loader keeps verbatim).
- medquad-qtype: a MedQuAD page in the library JSONL, whose headings are question types
  ("Symptoms"): the question is rebuilt from MedQuAD's own template for that type.

The same question twice in one document (MedQuAD splits long answers over repeated questions) is one
pair: its answers are joined, and its location is the first one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from evidenceqa.curation.candidates import Location
from evidenceqa.documents import Document, Section, normalize_space

# A heading without "?" still asks when it opens like a question — trusted only in MedQuAD pages,
# whose headings are questions by construction ("how vaccines prevent disease").
QUESTION_OPENERS = frozenset(
    "what why how who whom whose when where which is are was were do does did can could should will would".split()
)
# MedQuAD's question templates by question type: the library JSONL keeps only the type as heading.
MEDQUAD_TEMPLATES: dict[str, str] = {
    "information": "What is (are) {focus}?",
    "symptoms": "What are the symptoms of {focus}?",
    "causes": "What causes {focus}?",
    "susceptibility": "Who is at risk for {focus}?",
    "exams and tests": "How to diagnose {focus}?",
    "treatment": "What are the treatments for {focus}?",
    "prevention": "How to prevent {focus}?",
    "frequency": "How many people are affected by {focus}?",
    "outlook": "What is the outlook for {focus}?",
    "stages": "What are the stages of {focus}?",
    "research": "What research (or clinical trials) is being done for {focus}?",
    "inheritance": "Is {focus} inherited?",
    "genetic changes": "What are the genetic changes related to {focus}?",
    "considerations": "What to do for {focus}?",
    "complications": "What are the complications of {focus}?",
}
_Q_MARK = re.compile(r"^\s*(?:Q\s*\d*\s*:|Question\s*\d*\s*[:.])\s*(?P<text>\S.*)$", re.I | re.S)
_A_MARK = re.compile(r"^\s*(?:A\s*\d*\s*:|Answer\s*\d*\s*[:.])\s*(?P<text>\S.*)$", re.I | re.S)
_INLINE_A = re.compile(r"\s(?:A\s*\d*\s*:|Answer\s*\d*\s*:)\s+")
_CONCLUSION_HEADING = re.compile(r"conclu|interpretation|findings", re.I)
_CONCLUSION_LABEL = re.compile(r"\bConclusions?\s*[.:]\s+")
# A question that points at its article ("Why Was This Study Done?") means nothing on its own.
_DEICTIC = re.compile(
    r"\b(this|these|the) (study|studies|findings|results|researchers|authors|evidence|trial|review|article)\b",
    re.I,
)
MAX_QUESTION_WORDS = 60  # a longer "question" is a paragraph that merely starts with "Q:"
MIN_ANSWER_WORDS = 3


@dataclass(frozen=True)
class Pair:
    question: str
    answer: str
    pattern: str
    location: Location


@dataclass(frozen=True)
class _Place:
    """A section with its heading path, its reading-order index and the kind of box it sits in."""

    path: tuple[str, ...]
    index: int
    section: Section
    context: str  # the nearest non-body kind at or above it: body | abstract | summary | box


def extract_pairs(doc: Document) -> list[Pair]:
    places = list(_places(doc))
    found = [*_title_pairs(doc, places), *_heading_pairs(doc, places), *_text_pairs(doc, places)]
    return _merged(p for p in found if len(p.answer.split()) >= MIN_ANSWER_WORDS)


def is_question(text: str | None, lenient: bool = False) -> bool:
    """A question ends with "?"; with `lenient`, opening with a question word is enough."""
    words = (text or "").split()
    if len(words) < 2:
        return False
    return words[-1].endswith("?") or (lenient and len(words) >= 3 and words[0].lower() in QUESTION_OPENERS)


def in_context(question: str, doc: Document) -> str:
    """A question that points at its article gets the article's short title after it, so it can be
    asked of a whole library: "Why Was This Study Done? (Multidrug Resistant Pulmonary Tuberculosis …)"."""
    short_title = normalize_space((doc.title or "").split(": ")[0])
    return f"{question} ({short_title})" if short_title and _DEICTIC.search(question) else question


def _places(doc: Document) -> Iterator[_Place]:
    """Every section in Document.walk order, so `index` matches a walk's position."""
    counter = itertools.count()

    def visit(section: Section, path: tuple[str, ...], context: str) -> Iterator[_Place]:
        here = (*path, section.heading) if section.heading else path
        kind = context if section.kind == "body" else section.kind
        yield _Place(here, next(counter), section, kind)
        for sub in section.sections:
            yield from visit(sub, here, kind)

    for top in doc.sections:
        yield from visit(top, (), "body")


def _text_below(section: Section) -> str:
    """The section's paragraphs and its subsections', in reading order, as one answer."""
    return "\n\n".join(p.text for _, s in section.walk() for p in s.paragraphs if p.text.strip())


def _location(doc: Document, place: _Place, paragraph: int | None = 0) -> Location:
    return Location(list(place.path), place.index, paragraph, doc.source)


def _heading_pairs(doc: Document, places: list[_Place]) -> Iterator[Pair]:
    medquad = doc.collection == "medquad"
    # A page without a Focus is titled by its first question: no subject to put in a template.
    focus = doc.title if medquad and not is_question(doc.title, lenient=True) else None
    for place in places:
        heading = normalize_space(place.section.heading or "")
        template = MEDQUAD_TEMPLATES.get(heading.lower()) if focus else None
        if template:
            question, pattern = template.format(focus=focus), "medquad-qtype"
        elif is_question(heading, lenient=medquad):
            question = in_context(heading, doc)
            pattern = "medquad" if medquad else {"summary": "summary", "abstract": "summary",
                                                 "box": "box"}.get(place.context, "question-heading")  # fmt: skip
        else:
            continue
        yield Pair(question, _text_below(place.section), pattern, _location(doc, place))


def _title_pairs(doc: Document, places: list[_Place]) -> Iterator[Pair]:
    """A title whose last clause is a question, answered by the abstract's conclusion."""
    clause = normalize_space((doc.title or "").rsplit(": ", 1)[-1])
    if not is_question(clause):
        return
    abstract = next((p for p in places if p.section.kind == "abstract"), None)
    if abstract is None:
        return
    below = [p for p in places if p.path[: len(abstract.path)] == abstract.path and p is not abstract]
    conclusion = next((p for p in below if _CONCLUSION_HEADING.search(p.path[-1])), None)
    if conclusion is not None:
        yield Pair(clause, _text_below(conclusion.section), "question-title", _location(doc, conclusion))
        return
    text = _text_below(abstract.section)
    labelled = _CONCLUSION_LABEL.split(text, maxsplit=1)  # "Purpose. … Conclusion. …" in one paragraph
    yield Pair(clause, labelled[-1], "question-title", _location(doc, abstract))


def _text_pairs(doc: Document, places: list[_Place]) -> Iterator[Pair]:
    for place in places:
        texts = [p.text for p in place.section.paragraphs]
        for start, question, answer in _qa_runs(texts):
            yield Pair(in_context(question, doc), answer, "qa-text", _location(doc, place, start))


def _qa_runs(texts: list[str]) -> Iterator[tuple[int, str, str]]:
    """(index of the Q paragraph, question, answer) for each Q:/A: run among a section's paragraphs.
    The answer runs from the A: paragraph (or the Q paragraph's inline "A:") to the next Q:."""
    i = 0
    while i < len(texts):
        marked = _Q_MARK.match(texts[i])
        if not marked:
            i += 1
            continue
        question, _, inline = (part.strip() for part in _split_inline(marked.group("text")))
        answer = [inline] if inline else []
        j = i + 1
        if not answer:
            opened = _A_MARK.match(texts[j]) if j < len(texts) else None
            if opened is None:  # a "Q:" with no answer marker after it is not a Q&A
                i += 1
                continue
            answer, j = [opened.group("text").strip()], j + 1
        while j < len(texts) and not _Q_MARK.match(texts[j]):
            answer.append(texts[j].strip())
            j += 1
        if len(question.split()) <= MAX_QUESTION_WORDS:
            yield i, normalize_space(question), "\n\n".join(answer)
        i = j


def _split_inline(text: str) -> tuple[str, str, str]:
    found = _INLINE_A.search(text)
    return (text[: found.start()], "A:", text[found.end() :]) if found else (text, "", "")


def _merged(pairs: Iterator[Pair]) -> list[Pair]:
    merged: dict[str, Pair] = {}
    for pair in pairs:
        key = " ".join(pair.question.lower().split())
        first = merged.get(key)
        if first is None:
            merged[key] = pair
        elif pair.answer not in first.answer:
            merged[key] = Pair(
                first.question, f"{first.answer}\n\n{pair.answer}", first.pattern, first.location
            )
    return list(merged.values())
