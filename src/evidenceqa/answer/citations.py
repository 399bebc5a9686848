"""Checking an answer against its evidence: which [n] each sentence cites, whether the cited
passages support it, and the exact passage text each citation points at.

An LLM's answer is split into sentences with their [n] markers (`split_answer`); `check` then marks
each sentence supported or not, with the reason; `citations_for` gives one Citation per cited block,
whose `text` is a verbatim substring of the chunk body, so a UI can highlight it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

import numpy as np

from evidenceqa.answer.base import ABSTAIN_MESSAGE, DISCARD_STREAMED, Evidence
from evidenceqa.embeddings.base import Embedder
from evidenceqa.records import Citation, Sentence
from evidenceqa.text.quantities import Unmatched, unmatched
from evidenceqa.text.sentences import body_sentences, split_sentences
from evidenceqa.text.tokens import terms

# support = LEXICAL_WEIGHT · (share of the sentence's terms found in the cited blocks)
#         + (1 − LEXICAL_WEIGHT) · (best cosine between the sentence and a cited block's sentence).
# Measured with MiniLM on the perioperative passages of tests/answer/test_citations.py: verbatim
# sentences score 1.0, light paraphrases 0.67–0.76, a looser one 0.59; claims the cited block does
# not make 0.20–0.27, or 0.48 when they borrow the block's topic words ("tranexamic acid reduces
# surgical site infection", citing the antisepsis trial). The threshold sits in that gap. Neither part
# sees direction or negation: a claim that reverses the block's comparison still passes; catching
# that needs an entailment (NLI) model.
LEXICAL_WEIGHT = 0.5
SUPPORT_THRESHOLD = 0.55
# Sentences that make no claim and need no citation: a few words ("In summary,"), a lead-in to a
# list ("The evidence recommends:"), a markdown heading.
CONNECTIVE_MAX_WORDS = 3
LEAD_IN_MAX_WORDS = 12
# "[3-40]" is more likely a typo than forty citations; a wider range keeps only its two ends.
MAX_RANGE = 20
# The problems the check names (a sentence's several are joined by PROBLEM_SEPARATOR); `problem_kinds`
# reads them back, so a count by kind never depends on the wording.
UNCITED = "cites no evidence"
UNSUPPORTED = "the cited evidence does not support it"
_NOT_IN_EVIDENCE = "not among the evidence"
_QUANTITY = "states "
PROBLEM_SEPARATOR = "; "

# One marker: "[1]", "[1, 3]", "[1-3]", "[1–3]"; runs such as "[1][2]" are consecutive markers.
_MARKER = re.compile(r"\s*\[(\d+(?:\s*[,;\-–]\s*\d+)*)\]")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\d+(?:\s*[,;\-–]\s*\d+)*\])+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_ABSTAIN_KEY = ABSTAIN_MESSAGE.lower().rstrip(".")
_CURLY_APOSTROPHE = "\u2019"


def split_answer(text: str) -> list[Sentence]:
    """The sentences of an answer, each with the [n] markers it carries moved into `citations`.

    A marker placed after the full stop ("… infection. [2]") belongs to the sentence before it.
    Each line is split on its own, since answers use list items without full stops.
    """
    sentences: list[Sentence] = []
    for line in text.splitlines():
        for piece in split_sentences(_LIST_ITEM.sub("", line)):
            leading = _LEADING_MARKERS.match(piece)
            if leading and sentences:
                sentences[-1].citations = _merge(sentences[-1].citations, _numbers(leading.group()))
                piece = piece[leading.end() :]
            clean = _MARKER.sub("", piece).strip()
            if clean:
                sentences.append(Sentence(clean, _numbers(piece)))
    return sentences


# A run of markers ("[3][1, 4]") is renumbered as one, so two passages of one document are one [n].
_MARKER_RUN = re.compile(rf"(?:{_MARKER.pattern})+")
# What may still become (part of) a run: held back from a stream until the next text shows its end.
_OPEN_RUN = re.compile(r"(?:\s*\[\d+(?:\s*[,;\-–]\s*\d+)*\])*\s*(?:\[[\d\s,;\-–]*)?$")


class SourceNumbers:
    """Evidence numbers as the reader sees them: one number per cited document, in order of first
    use, without gaps ("[3] … [1][4]" with 3 and 4 one paper → "[1] … [2][1]"). A marker citing no
    evidence is dropped (the check names it). Works on a stream piece by piece, holding back a marker
    run until it is whole, so what streams is what the answer's record holds."""

    def __init__(self, evidence: Sequence[Evidence]) -> None:
        self._document = {item.n: item.chunk.doc_id for item in evidence}
        self.reset()

    def reset(self) -> None:
        self._of_evidence: dict[int, int] = {}  # evidence number → source number
        self._of_document: dict[str, int] = {}
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        held = _OPEN_RUN.search(text)  # it matches at the end, at least
        cut = held.start() if held else len(text)
        self._held = text[cut:]
        return _MARKER_RUN.sub(self._run, text[:cut])

    def flush(self) -> str:
        text, self._held = self._held, ""
        return _MARKER_RUN.sub(self._run, text)

    def streamed(self, on_delta: Callable[[str], None] | None) -> Callable[[str], None] | None:
        """`on_delta` receiving the renumbered text (numbering afresh after a failed LLM's discard)."""
        if on_delta is None:
            return None
        deliver = on_delta

        def renumbered(piece: str) -> None:
            if piece == DISCARD_STREAMED:
                self.reset()
                deliver(piece)
            elif text := self.feed(piece):
                deliver(text)

        return renumbered

    def source(self, n: int) -> int:
        """The source number of evidence `n`, given at first use."""
        if n not in self._of_evidence:
            document = self._document[n]
            self._of_evidence[n] = self._of_document.setdefault(document, len(self._of_document) + 1)
        return self._of_evidence[n]

    def _run(self, match: re.Match[str]) -> str:
        found = list(dict.fromkeys(self.source(n) for n in _numbers(match.group(0)) if n in self._document))
        lead = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return lead + "".join(f"[{n}]" for n in found) if found else ""


def by_source(
    text: str, sentences: Sequence[Sentence], citations: Sequence[Citation], evidence: Sequence[Evidence]
) -> tuple[str, list[Sentence], list[Citation]]:
    """The answer renumbered by `SourceNumbers`: its text, its sentences' numbers, and its citations,
    those of one document together under one number, in the order the text first cites them."""
    numbers = SourceNumbers(evidence)
    text = numbers.feed(text) + numbers.flush()
    known = {item.n for item in evidence}
    renumbered = [
        replace(s, citations=list(dict.fromkeys(numbers.source(n) for n in s.citations if n in known)))
        for s in sentences
    ]
    cited = [replace(c, n=numbers.source(c.n)) for c in citations]
    return text, renumbered, sorted(cited, key=lambda c: c.n)


def _numbers(text: str) -> list[int]:
    """Evidence numbers of every marker in `text`, in order of appearance, each once."""
    found: list[int] = []
    for marker in _MARKER.finditer(text):
        for part in re.split(r"\s*[,;]\s*", marker.group(1)):
            found = _merge(found, _expand(part))
    return found


def _expand(part: str) -> list[int]:
    ends = [int(x) for x in re.split(r"\s*[-–]\s*", part)]
    low, high = ends[0], ends[-1]
    if 0 <= high - low <= MAX_RANGE:
        return list(range(low, high + 1))
    return [low, high]


def _merge(first: list[int], more: Iterable[int]) -> list[int]:
    return list(dict.fromkeys([*first, *more]))


def check(sentences: Sequence[Sentence], evidence: Sequence[Evidence], embedder: Embedder) -> list[Sentence]:
    """Each sentence, checked: supported or not, its support score and, if unsupported, why."""
    by_n = {item.n: item for item in evidence}
    checked: list[Sentence | None] = []
    to_score: list[int] = []
    for i, sentence in enumerate(sentences):
        verdict = _verdict_without_scoring(sentence, by_n)
        checked.append(verdict)
        if verdict is None:
            to_score.append(i)
    scores = _support_scores([sentences[i] for i in to_score], by_n, embedder)
    for i, score in zip(to_score, scores, strict=True):
        wrong = unmatched(sentences[i].text, [by_n[n].chunk.text for n in sentences[i].citations])
        problems = [UNSUPPORTED] if score < SUPPORT_THRESHOLD else []
        problems += quantity_problems(wrong)
        problem = PROBLEM_SEPARATOR.join(problems) or None
        checked[i] = replace(sentences[i], supported=problem is None, support=score, problem=problem)
    return [s for s in checked if s is not None]


def quantity_problems(wrong: Sequence[Unmatched]) -> list[str]:
    """What is wrong with a claim's quantities, in words. A number in a claim (a dose, a rate, a
    duration, a count) must be in the passage it cites, with its unit and comparator: a sentence that
    is otherwise close to its source ("4 mg/kg" for the source's "2 mg/kg", "2 mg" for "2 g") passes
    the support score, and a wrong dose is the claim that does harm."""
    missing = [str(u.claim) for u in wrong if u.stated is None]
    problems = [f"{_QUANTITY}{', '.join(missing)}, which the cited evidence does not"] if missing else []
    return problems + [
        f"{_QUANTITY}{u.claim} where the cited evidence says {u.stated}" for u in wrong if u.stated
    ]


def problem_kinds(problem: str | None) -> set[str]:
    """The kinds of the problems a checked sentence's `problem` names: "uncited", "not in the
    evidence" (a block that does not exist), "unsupported", "quantity"."""
    kinds = set()
    for part in (problem or "").split(PROBLEM_SEPARATOR):
        if part == UNCITED:
            kinds.add("uncited")
        elif part.endswith(_NOT_IN_EVIDENCE):
            kinds.add("not in the evidence")
        elif part == UNSUPPORTED:
            kinds.add("unsupported")
        elif part.startswith(_QUANTITY):
            kinds.add("quantity")
    return kinds


def _verdict_without_scoring(sentence: Sentence, by_n: dict[int, Evidence]) -> Sentence | None:
    """The checked sentence when no scoring is needed (a bad or missing citation, no claim);
    None when its support has to be measured."""
    missing = [n for n in sentence.citations if n not in by_n]
    if missing:
        cited = ", ".join(f"[{n}]" for n in missing)
        which = "which is" if len(missing) == 1 else "which are"
        return replace(
            sentence, supported=False, support=None, problem=f"cites {cited}, {which} {_NOT_IN_EVIDENCE}"
        )
    if sentence.citations:
        return None
    if _makes_no_claim(sentence.text):
        # Nothing to support: counted as supported so it never shows as a problem.
        return replace(sentence, supported=True, support=None, problem=None)
    return replace(sentence, supported=False, support=None, problem=UNCITED)


def _makes_no_claim(text: str) -> bool:
    stripped = text.strip()
    words = len(stripped.split())
    return (
        stripped.lower().replace(_CURLY_APOSTROPHE, "'").rstrip(".") == _ABSTAIN_KEY
        or words <= CONNECTIVE_MAX_WORDS
        or (stripped.endswith(":") and words <= LEAD_IN_MAX_WORDS)
        or stripped.startswith("#")
    )


def _support_scores(
    sentences: Sequence[Sentence], by_n: dict[int, Evidence], embedder: Embedder
) -> list[float]:
    """Support of each (cited) sentence by its cited blocks; every text is embedded in one call."""
    if not sentences:
        return []
    cited = list(dict.fromkeys(n for s in sentences for n in s.citations))
    passages = {n: [b.text for b in body_sentences(by_n[n].chunk.body)] for n in cited}
    # Words are looked up in the chunk's text, title and section included: the model sees those too.
    vocabulary = {n: set(terms(by_n[n].chunk.text)) for n in cited}
    texts = [s.text for s in sentences] + [p for n in cited for p in passages[n]]
    vectors = embedder.embed(texts)
    claim_vectors, rest = vectors[: len(sentences)], vectors[len(sentences) :]
    passage_vectors: dict[int, np.ndarray] = {}
    for n in cited:
        passage_vectors[n], rest = rest[: len(passages[n])], rest[len(passages[n]) :]
    scores = []
    for sentence, vector in zip(sentences, claim_vectors, strict=True):
        known = set().union(*(vocabulary[n] for n in sentence.citations))
        blocks = np.concatenate([passage_vectors[n] for n in sentence.citations])
        similarity = float(np.max(blocks @ vector)) if len(blocks) else 0.0
        scores.append(support_score(lexical_overlap(sentence.text, known), similarity))
    return scores


def lexical_overlap(text: str, known: set[str]) -> float:
    """Share of the distinct stemmed content terms of `text` that occur in `known`."""
    own = set(terms(text))
    return len(own & known) / len(own) if own else 0.0


def support_score(lexical: float, similarity: float) -> float:
    """How well the cited evidence supports a sentence, 0–1 (see LEXICAL_WEIGHT)."""
    return LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * max(similarity, 0.0)


def unsupported_count(sentences: Iterable[Sentence]) -> int:
    return sum(1 for s in sentences if s.supported is False)


def citations_for(sentences: Sequence[Sentence], evidence: Sequence[Evidence]) -> list[Citation]:
    """One Citation per evidence number the sentences cite (first cited first), whose text is the
    passage of the chunk body that best matches the sentences citing it."""
    by_n = {item.n: item for item in evidence}
    cited = [n for n in dict.fromkeys(n for s in sentences for n in s.citations) if n in by_n]
    return [_citation(by_n[n], [s for s in sentences if n in s.citations]) for n in cited]


def nearest_passages(question: str, evidence: Sequence[Evidence], count: int) -> list[Citation]:
    """For an abstention: the `count` best-ranked passages, each marked where it comes closest to the
    question. They do not answer it; they show the reader what the library holds nearby. Numbered
    by document in order of first rank, as citations are, so one document's passages show together."""
    numbers: dict[str, int] = {}
    return [
        replace(_passage(item, [question]), n=numbers.setdefault(item.chunk.doc_id, len(numbers) + 1))
        for item in evidence[:count]
    ]


def _citation(item: Evidence, citing: list[Sentence]) -> Citation:
    # A sentence the check found unsupported should not decide which passage is highlighted.
    claims = [s.text for s in citing if s.supported is not False] or [s.text for s in citing]
    return _passage(item, claims)


def _passage(item: Evidence, claims: list[str]) -> Citation:
    chunk = item.chunk
    return Citation(
        n=item.n,
        doc_id=chunk.doc_id,
        chunk_id=chunk.chunk_id,
        title=chunk.title,
        year=chunk.year,
        section=item.section,
        text=supporting_text(chunk.body, claims),
        evidence_type=chunk.evidence_type,
    )


def supporting_text(body: str, claims: Sequence[str]) -> str:
    """The verbatim passage of `body` that supports the claims: the body sentences that best match
    each claim, as one span. Matches far apart would make that span most of the chunk, so only the
    strongest run of adjacent matched sentences is kept; the whole body when nothing matches."""
    candidates = body_sentences(body)
    term_sets = [set(terms(c.text)) for c in candidates]
    frequency = document_frequencies(term_sets)
    weights = {t: idf(df, len(term_sets)) for t, df in frequency.items()}
    matched: dict[int, float] = {}
    for claim in claims:
        own = set(terms(claim))
        scores = [sum(weights[t] for t in own & other) for other in term_sets]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i), default=None)
        if best is not None and scores[best] > 0:
            matched[best] = matched.get(best, 0.0) + scores[best]
    if not matched:
        return body.strip()
    first, last = _strongest_run(matched)
    return body[candidates[first].start : candidates[last].end]


def _strongest_run(matched: dict[int, float]) -> tuple[int, int]:
    """First and last index of the run of consecutive matched sentences with the highest total
    score (the earliest such run on a tie)."""
    runs: list[list[int]] = []
    for i in sorted(matched):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    best = max(runs, key=lambda run: sum(matched[i] for i in run))
    return best[0], best[-1]


def document_frequencies(term_sets: Iterable[AbstractSet[str]]) -> Counter[str]:
    """In how many of the given term sets each term occurs."""
    return Counter(t for own in term_sets for t in own)


def idf(df: int, count: int) -> float:
    """BM25's idf of a term in `df` of `count` texts: always positive, so a term found in every text
    still counts a little, and a term found in none counts most."""
    return math.log(1 + (count - df + 0.5) / (df + 0.5))
