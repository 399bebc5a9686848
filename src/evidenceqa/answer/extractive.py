"""The offline default generator: an answer made of the evidence's own sentences, each cited.

No language model and no cost: the sentences of the evidence chunks are scored against the question
(query terms weighted by rarity, embedding similarity, whether they state a finding, position), the
best few that say different things are kept from the sources that are about the question, and they
are shown as verbatim extracts with their [n], grouped by source in retrieval order, each source's
best sentence first. A yes/no question gets a first line saying which way the findings point.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evidenceqa.answer.base import Draft, Evidence, Expansions, ReadsExpansions, abstention
from evidenceqa.answer.citations import document_frequencies, idf
from evidenceqa.answer.findings import (
    AIM_OR_METHOD,
    Verdict,
    asks_yes_or_no,
    finding_weight,
    polarity,
    side_line,
    verdict,
    vote_weight,
    without_label,
)
from evidenceqa.embeddings.base import Embedder
from evidenceqa.evidence_types import PATIENT_INFORMATION, type_name
from evidenceqa.records import Sentence
from evidenceqa.text.sentences import REFERENCE_ON_STOP, BodySentence, body_sentences, ends_sentence
from evidenceqa.text.tokens import terms

if TYPE_CHECKING:
    from evidenceqa.answer import GeneratorOptions

# score = TERM_WEIGHT · term weight + SIMILARITY_WEIGHT · cosine + POSITION_WEIGHT · position
# + FINDING_WEIGHT · finding, each part 0–1 (finding -1–1; see `sentence_score`). Similarity leads
# because it catches paraphrase; terms keep the exact clinical words (drug names, procedures)
# decisive; a stated result beats an aim or a method on the same words; position breaks near-ties.
TERM_WEIGHT = 0.4
SIMILARITY_WEIGHT = 0.5
POSITION_WEIGHT = 0.1
FINDING_WEIGHT = 0.1
# Position: each later sentence of a chunk, and each lower-ranked block, counts this much less.
# The block's rank weighs twice the sentence's place, so of two equal sentences the one retrieval
# ranked higher wins.
POSITION_DECAY = 0.85
RANK_SHARE = 2 / 3
# The generator's own floor: a sentence is relevant if it holds at least MIN_TERM_WEIGHT of the
# question's (rarity-weighted) terms, so one common word such as "surgery" is not enough, or is at
# least MIN_SIMILARITY similar to the question. With MiniLM, sentences on other topics score
# ≈ 0–0.3 against a question, same-field sentences that do not answer it up to ≈ 0.46, and
# sentences that answer it in other words ≈ 0.5 and more.
MIN_TERM_WEIGHT = 0.2
MIN_SIMILARITY = 0.5
# Kept sentences score at least this share of the best one: a clear answer is not padded with
# sentences that barely relate to the question.
RELATIVE_CUTOFF = 0.6
# The sources an answer quotes: the one retrieval ranks first (it judges a whole source better than
# one sentence does) and any whose best sentence scores SOURCE_CUTOFF of the best, so a patient
# leaflet's line that shares a word does not join a study's finding. 1.0: besides the first-ranked
# source, only the one holding the best sentence. Chosen leave-one-benchmark-out over four
# benchmarks (benchmarks/source_cutoff.py; its table is in docs/answering.md).
SOURCE_CUTOFF = 1.0
# A yes/no question's answer never hides the other side: a source left out by SOURCE_CUTOFF is kept
# when a finding of its says the opposite of one kept and its best sentence scores this share of
# the best (the cut used for every source before).
DISAGREEING_CUTOFF = 0.8
# Near-duplicates: a sentence this similar to one already chosen, or whose terms are this much
# contained in one already chosen, adds nothing.
DUPLICATE_COSINE = 0.9
CONTAINED_SHARE = 0.8
# A sentence that TEMPLATE_DOCUMENTS or more documents of the library carry word for word is a
# site's or a publisher's template ("The frequency may also be listed as a fraction." on 2,243 NIH
# pages, a licence line), not what its source says about the question: it scores TEMPLATE_WEIGHT of
# what it would, so the source's own sentences come first, and is still quoted where nothing else
# answers ("This condition is inherited in an autosomal recessive pattern, …" on 364 pages).
TEMPLATE_DOCUMENTS = 10
TEMPLATE_WEIGHT = 0.5
# Shorter "sentences" are fragments ("See Fig. 2.", "Results."), not answers.
MIN_WORDS = 5
# A paragraph that is one short line without a full stop is a heading.
HEADING_MAX_WORDS = 12

# Paragraphs that are not prose, all of them: a figure or table caption ("Figure 2. Rates of …",
# "Table S1: …", but not prose such as "Table 1 shows …"), an entry of a reference list
# ("1. Smith AB, …", "[4] Jones C. …").
_NOT_PROSE = re.compile(
    r"^(?i:fig(?:ure)?s?|table|box|panel|supplementary)\.?\s*(?:[A-Z]?\d{1,3}[a-z]?|[A-Z]|[IVX]+)\s*[.:|–—-]"
    r"|^\[?\d{1,3}[.\])]\s+[A-Z][\w'-]+,?\s+[A-Z]{1,3}\b"
)
# Sentences that are citation debris: author lists, "2010;362:18", "12(3):45", DOIs and links; and
# the metadata lines of a document's overview chunk ("Authors: …", "Journal: …").
_CITATION_DEBRIS = re.compile(
    r"(?:[A-Z][\w'-]+ [A-Z]{1,3}, ){2,}"
    r"|\b(?:19|20)\d\d\s*;\s*\d+"
    r"|\b\d+\s*\(\d+\)\s*:\s*\d+"
    r"|\bdoi\b|https?://|www\.|\bPMID\b"
    r"|^(?:Authors|Journal|Year|DOI|Type|Topics|Contents):\s"
)

# Sentences that point elsewhere instead of saying anything: a web page's links, and lead-ins to a
# list the page holds elsewhere or not at all ("Click here to view a diagram of the eye.", "For more
# information on breast cancer risk, call …", "These resources address the diagnosis or management
# of …: - Gene Review …", "The Human Phenotype Ontology provides the following list of signs …",
# "More detailed information about the treatment of ARDS can be accessed through …").
# Never quoted; still read wherever the evidence is judged (which sources are about the question;
# `answerable_sentences`: abstention's signals, the library's own questions), since they name what
# the page is about.
_NAVIGATION = re.compile(
    r"\bclick (?:here|on the following link)\b"
    r"|^For (?:more|additional|further)(?: detailed)? information\b"
    r"|^(?:These|The following|Other) (?:resources|websites|organi[sz]ations|links)\b"
    r"|^(?:Check|See|Visit) the (?:lists?|websites?|pages?) of\b"
    r"|^[^:]*\b(?:provides?|offers?|gives?) (?:the following|a) list of\b"
    r"|^(?:More |Further |Additional )?(?:detailed |medical )?(?:information|details|(?:support )?resources)\b"
    r"[^.]{0,200}?\b(?:can (?:also )?be (?:accessed|found|viewed|obtained) (?:through|from|on|at|in|via)"
    r"|(?:is|are) available (?:through|from|on|at|via))\b(?!\s*\d)",  # not "from 12 of the 20 trials"
    re.IGNORECASE,
)

# A question is never an answer: the headings of a Q&A page ("How might scurvy be treated?", which
# matches a question about it better than the answer below it does) and a study's research questions.
_QUESTION = re.compile(r"\?[\"'”’)\]]*$")
# A sentence that goes on from the one before it in its source ("But others develop …", "Also, …",
# "Other risk factors include …", "Moreover, …", "Second, …"; not "Second pancreas survival …"):
# alone, it reads as an answer's start only after another sentence of its source. Not "However",
# "Therefore", "In contrast" …, which as often open the finding itself ("However,
# tricompartmental replacement significantly affected …").
_GOES_ON = re.compile(
    r"^(?:(?:But|Also|Others?|Then)\b"
    r"|(?:Second(?:ly)?|Third(?:ly)?|Similarly|Likewise|In addition|Additionally|Moreover|Furthermore),)"
)

# A bracketed reference list: [11], [3, 4], [5-7], [12–14]; with the space before it, and the one
# after it where punctuation follows ("15-45% [1] ." reads "15-45%.").
_REFERENCE_MARK = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\](?:\s+(?=[.,;:]))?")
# A superscript reference flattened into the text (CORD-19's full texts) ends up opening the next
# sentence: "13 Patients 0-65 years of age were recruited.", "12,40 Among our positive cases, …". A
# sentence that really opens on a count goes on in lower case ("20 patients were …").
# A list of several numbers is a reference list before any word ("8, 9, 11, 12, 14 HCoV-OC43 and …").
_NUMBERS = r"\d{1,3}(?:\s*[,–-]\s*\d{1,3})*"
# A numbered point of the source's own list opens a sentence too: "(5) HAdV-55-induced severe ARDS has
# a very high mortality rate", which beside our [n] reads as a citation.
_LEADING_REFERENCE = re.compile(
    rf"^(?:{_NUMBERS}\s+(?=[A-Z][a-z])|{_NUMBERS}\s*,\s*\d{{1,3}}\s+(?=[A-Z])|\(\d{{1,2}}\)\s+(?=\S))"
)
# One flattened onto the full stop instead ("… of the population.1"; `split_sentences` ends the
# sentence after it).
_TRAILING_REFERENCE = re.compile(rf"{REFERENCE_ON_STOP}$")


@dataclass(frozen=True)
class _Candidate:
    rank: int  # the evidence block's place in the evidence (0 = best retrieved)
    n: int
    index: int  # the sentence's place among its chunk's answerable sentences
    text: str
    terms: frozenset[str]
    finding: float  # `finding_weight`: a result (1) rather than an aim or a method (-1)
    vote: float  # `vote_weight`: how much it counts towards a yes/no verdict
    doc_id: str
    quotable: bool = True  # False: navigation (`_NAVIGATION`), which only tells what its page is about
    # False for patient information: what a leaflet states is not a study's finding ("people with
    # it have an increased risk of …" reads as one), so its best answering sentence leads.
    reports_findings: bool = True
    templated: bool = False  # carried word for word by TEMPLATE_DOCUMENTS documents or more
    topic: frozenset[str] = frozenset()  # the terms of its document's title


def sentence_score(
    term_weight: float, similarity: float, index: int, rank: int, finding: float = 0.0
) -> float:
    """The score of one evidence sentence for a question, from its parts:
    `term_weight` — the rarity-weighted share of the question's terms it contains (0–1);
    `similarity` — its embedding cosine with the question (negative counts as 0);
    `index`, `rank` — its place in its chunk and its chunk's place in the evidence (0 = first);
    `finding` — whether it states a result (1) or an aim, a method, background (-1)."""
    position = RANK_SHARE * POSITION_DECAY**rank + (1 - RANK_SHARE) * POSITION_DECAY**index
    return (TERM_WEIGHT * term_weight + SIMILARITY_WEIGHT * max(similarity, 0.0)
            + POSITION_WEIGHT * position + FINDING_WEIGHT * finding)  # fmt: skip


def _states_an_answer(candidate: _Candidate, question: str) -> bool:
    """Whether a sentence of patient information, which reports no findings, speaks to a yes/no
    question: it states all of the question's terms ("Milroy disease is inherited in an autosomal
    dominant manner.", "Most cases of Milroy disease are not inherited." to "Is Milroy disease
    inherited?"), one at least beyond its page's title, and is no background. A leaflet's other
    sentences take no side, whatever their wording: "Your doctor may prescribe medicines to prevent
    DVT." says nothing to "Will she need anticoagulation for as long?", nor "Crohn's disease is a
    type of inflammatory bowel disease." to "Is it Crohn's disease?"."""
    asked = set(terms(question))
    if candidate.reports_findings or candidate.finding < 0 or asked <= candidate.topic:
        return False
    return asked <= candidate.terms


def _sides(found: Verdict, evidence: Sequence[Evidence]) -> list[Sentence]:
    """When the evidence is mixed, one line per side naming its sources' kind and year, so that a
    reader can weigh a trial against a case report ("Saying yes: Randomised controlled trial, 2019.").
    None where both sides name the same kinds and years (one page on both sides, two cohort studies
    of one year): "Saying yes: Patient information. Saying no: Patient information." weighs nothing."""
    if found.direction != "mixed":
        return []
    chunks = {item.n: item.chunk for item in evidence}

    def source(n: int) -> str:
        chunk = chunks[n]
        return ", ".join(p for p in (type_name(chunk.evidence_type) or "Source", str(chunk.year or "")) if p)

    named = {side: list(dict.fromkeys(source(n) for n in found.sides[side])) for side in found.sides}
    if len({frozenset(sources) for sources in named.values()}) < 2:
        return []
    return [
        Sentence(side_line(side, named[side]), found.sides[side], supported=True)
        for side in ("yes", "no")
        if side in named
    ]


class ExtractiveGenerator(ReadsExpansions):
    """Answers with verbatim sentences of the evidence, at most `max_sentences` and about `max_words`."""

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder,
        max_sentences: int = 4,
        max_words: int = 120,
        source_cutoff: float = SOURCE_CUTOFF,
    ) -> None:
        self.embedder = embedder
        self.max_sentences = max_sentences
        self.max_words = max_words
        self.source_cutoff = source_cutoff

    def generate_expanded(
        self,
        question: str,
        evidence: Sequence[Evidence],
        expansions: Expansions,
        on_delta: Callable[[str], None] | None = None,
    ) -> Draft:
        chosen = self._choose(question, _candidates(evidence), expansions)
        if not chosen:
            draft = abstention(self.name)
        else:
            sentences = [Sentence(_quoted(c.text), [c.n], supported=True, support=1.0)
                         for c in chosen]  # fmt: skip
            if asks_yes_or_no(question):
                # Derived by rule from the findings it cites, which follow it verbatim.
                findings = [c for c in chosen if c.finding > 0 or _states_an_answer(c, question)]
                found = verdict(
                    [(c.text, c.n) for c in findings],
                    [c.vote for c in findings],
                    question,
                    [c.doc_id for c in findings],
                )
                sentences[:0] = [
                    Sentence(found.line(), found.citations, supported=True),
                    *_sides(found, evidence),
                ]
            text = " ".join(f"{s.text} {''.join(f'[{n}]' for n in s.citations)}".strip() for s in sentences)
            draft = Draft(text, sentences, abstained=False, model=self.name)
        if on_delta:
            on_delta(draft.text)
        return draft

    def _choose(
        self, question: str, candidates: list[_Candidate], expansions: Expansions = ()
    ) -> list[_Candidate]:
        """The candidates that answer the question, best first; none if none is relevant."""
        if not candidates:
            return []
        vectors = self.embedder.embed([c.text for c in candidates])  # one batch: fast
        similarities = vectors @ self.embedder.embed_query(question)
        weights = _term_weights(set(terms(question)), candidates, expansions)
        scores = {
            i: sentence_score(w, float(s), candidates[i].index, candidates[i].rank, candidates[i].finding)
            * (TEMPLATE_WEIGHT if candidates[i].templated else 1.0)
            for i, (w, s) in enumerate(zip(weights, similarities, strict=True))
            # A study's aim or method is never the answer, however well it matches the question.
            if (w >= MIN_TERM_WEIGHT or s >= MIN_SIMILARITY) and candidates[i].finding > AIM_OR_METHOD
        }
        if not scores:
            return []
        # Sources are cut before sentences are chosen, so the places an off-topic source would have
        # taken go to more of the sources kept.
        yes_or_no = asks_yes_or_no(question)
        scores = _of_sources_about_the_question(scores, candidates, self.source_cutoff, yes_or_no)
        # A page's navigation ("… provides the following list of signs and symptoms for X") counted
        # above, for which pages are about the question; it is never quoted.
        scores = {i: score for i, score in scores.items() if candidates[i].quotable}
        if not scores:
            return []
        chosen = self._select(scores, candidates, vectors)
        if yes_or_no:
            chosen = _with_first_conclusion(chosen, scores, candidates, question, self.max_sentences)
        return _by_source(chosen, scores, candidates)

    def _select(
        self, scores: dict[int, float], candidates: list[_Candidate], vectors: np.ndarray
    ) -> list[int]:
        """The best-scoring candidates (ties in evidence order) down to RELATIVE_CUTOFF of the best,
        skipping near-duplicates, within the sentence and word limits."""
        floor = RELATIVE_CUTOFF * max(scores.values())
        chosen: list[int] = []
        words = 0
        for i in sorted(scores, key=lambda i: -scores[i]):
            if scores[i] < floor or len(chosen) == self.max_sentences:
                break
            length = len(candidates[i].text.split())
            # The first sentence is kept even if long: a verbatim answer beats none.
            if (chosen and words + length > self.max_words) or _repeats(i, chosen, candidates, vectors):
                continue
            chosen.append(i)
            words += length
        return chosen


def _of_sources_about_the_question(
    scores: dict[int, float], candidates: list[_Candidate], cutoff: float, yes_or_no: bool = False
) -> dict[int, float]:
    """The scores of the candidates whose source is about the question: the best-ranked source with
    a sentence that could be chosen (≥ RELATIVE_CUTOFF of the best), and each source whose best
    sentence scores at least `cutoff` of the best. For a `yes_or_no` question, also each source
    within DISAGREEING_CUTOFF whose findings take a side that the kept sources' findings do not
    (a side stated in so many words: a finding that only restates the question pulls in no source)."""
    best: dict[str, float] = {}
    for i, score in scores.items():
        best[candidates[i].doc_id] = max(best.get(candidates[i].doc_id, 0.0), score)
    top = max(best.values())
    rank = _source_ranks(candidates)
    first = min((doc for doc in best if best[doc] >= RELATIVE_CUTOFF * top), key=rank.__getitem__)
    kept = {doc for doc in best if doc == first or best[doc] >= cutoff * top}
    if yes_or_no:
        sides: dict[str, set[str]] = {}
        for i, score in scores.items():
            if (
                score >= RELATIVE_CUTOFF * top
                and candidates[i].finding > 0
                and (side := polarity(candidates[i].text))
            ):
                sides.setdefault(candidates[i].doc_id, set()).add(side)
        taken = set().union(*(sides.get(doc, set()) for doc in kept))
        kept |= {
            doc
            for doc, said in sides.items()
            if taken and said - taken and best[doc] >= DISAGREEING_CUTOFF * top
        }
    return {i: score for i, score in scores.items() if candidates[i].doc_id in kept}


def _with_first_conclusion(
    chosen: list[int], scores: dict[int, float], candidates: list[_Candidate], question: str, limit: int
) -> list[int]:
    """`chosen`, with the first source's best conclusion that takes a side on `question` when it has
    one and none was chosen: what a study found as a whole is what a yes/no answer must quote and
    its yes/no line must hear, even where a single result matched the question's words better. It
    takes the last place when the answer is full. (On PubMedQA, answered whole: the line is right
    more often on both halves of the questions; docs/answering.md.)"""
    if not chosen:
        return chosen
    rank = _source_ranks(candidates)
    first = min({candidates[i].doc_id for i in scores}, key=rank.__getitem__)
    concluding = [
        i
        for i in scores
        if candidates[i].doc_id == first
        and candidates[i].finding > 0
        and candidates[i].vote > 1
        and polarity(candidates[i].text, question) is not None
    ]
    if not concluding or any(i in chosen for i in concluding):
        return chosen
    return [*chosen[: limit - 1], max(concluding, key=scores.__getitem__)]


def _by_source(chosen: list[int], scores: dict[int, float], candidates: list[_Candidate]) -> list[_Candidate]:
    """The chosen candidates grouped by source in retrieval order (which judges a whole source better
    than one sentence does); within a study's or a guideline's source its findings first, then the
    rest, each best first; within patient information, best first. A sentence that goes on from
    the one before it comes after the rest of its source, unless the sentence after it is quoted
    too, so that the two read on ("Also, if a large bone breaks, fat … can travel through the
    blood." before "If the fat reaches the lungs, …")."""
    rank = _source_ranks(candidates)
    places = {(candidates[i].rank, candidates[i].index) for i in chosen}  # (chunk, sentence) chosen

    def place(i: int) -> tuple[int, bool, bool, float]:
        candidate = candidates[i]
        non_finding = candidate.reports_findings and candidate.finding <= 0
        read_on = (candidate.rank, candidate.index + 1) in places
        # Read as quoted: a leading reference mark or label would hide the opening word.
        goes_on = bool(_GOES_ON.match(_quoted(candidate.text))) and not read_on
        return rank[candidate.doc_id], non_finding, goes_on, -scores[i]

    return [candidates[i] for i in sorted(chosen, key=place)]


def _source_ranks(candidates: list[_Candidate]) -> dict[str, int]:
    """Each source's place in the evidence: that of its best-ranked chunk, even when that chunk has
    no sentence to quote (an abstract's aim ranked first makes its paper the first source)."""
    rank: dict[str, int] = {}
    for candidate in candidates:
        rank[candidate.doc_id] = min(rank.get(candidate.doc_id, candidate.rank), candidate.rank)
    return rank


def _quoted(text: str) -> str:
    """What an answer quotes of a sentence: without the source's own numbered references ("… 14 days
    [11] ,", a superscript's number before or after the sentence), since in an answer [n] must
    always mean our evidence n and no stray number may read as a count, and without a
    structured-abstract label ("RESULTS: …"), which the answer's grouping by source replaces. The
    citation keeps the verbatim text for highlighting."""
    text = _TRAILING_REFERENCE.sub("", _LEADING_REFERENCE.sub("", _REFERENCE_MARK.sub("", text).strip()))
    return without_label(text)


def _candidates(evidence: Sequence[Evidence]) -> list[_Candidate]:
    found = []
    for rank, item in enumerate(evidence):
        for index, sentence in enumerate(answerable_sentences(item.chunk.body)):
            path = item.chunk.section_path
            found.append(_Candidate(rank, item.n, index, sentence.text, frozenset(terms(sentence.text)),
                                    finding_weight(sentence.text, path), vote_weight(sentence.text, path),
                                    item.chunk.doc_id, not _NAVIGATION.search(sentence.text),
                                    item.chunk.evidence_type != PATIENT_INFORMATION,
                                    item.shared.get(sentence.text, 1) >= TEMPLATE_DOCUMENTS,
                                    frozenset(terms(item.chunk.title or ""))))  # fmt: skip
    return found


def answerable_sentences(body: str) -> list[BodySentence]:
    """The sentences of a chunk body that could stand in an answer: not in a caption or a reference
    entry, not a heading, a question, citation debris or a fragment."""
    sentences = body_sentences(body)
    # Each paragraph's text from its first sentence on (only its opening is matched).
    openings = {s.paragraph: body[s.start :] for s in reversed(sentences)}
    skipped = {p for p, text in openings.items() if _NOT_PROSE.match(text)}
    sizes = Counter(s.paragraph for s in sentences)
    return [
        s
        for s in sentences
        if s.paragraph not in skipped
        and not (_is_heading(s.text) and sizes[s.paragraph] == 1)
        and not s.heading
        and len(s.text.split()) >= MIN_WORDS
        and not _CITATION_DEBRIS.search(s.text)
        and not _QUESTION.search(s.text)
    ]


def _is_heading(text: str) -> bool:
    return not ends_sentence(text) and len(text.split()) <= HEADING_MAX_WORDS


def _term_weights(query: set[str], candidates: list[_Candidate], expansions: Expansions = ()) -> list[float]:
    """Each candidate's share of the question's terms, each term weighted by its idf over the
    candidates: a term every sentence has hardly tells them apart; one found nowhere weighs most.
    A term with another form the search looked for ("CVP", "central venous pressure") is one
    term, found in a sentence that has either form."""
    units = {t: [frozenset({t})] for t in query}  # a unit of the question: the forms that state it
    for pair in expansions:
        forms = [form for form in map(frozenset, map(terms, pair)) if form]
        if any(form <= query for form in forms):
            for t in set().union(*forms):
                units.pop(t, None)
            units[" | ".join(pair)] = forms
    found = [
        {unit for unit, forms in units.items() if any(form <= c.terms for form in forms)} for c in candidates
    ]
    frequency = document_frequencies(found)
    weight = {unit: idf(frequency[unit], len(candidates)) for unit in units}
    total = sum(weight.values())
    if not total:
        return [0.0] * len(candidates)
    return [sum(weight[unit] for unit in have) / total for have in found]


def _repeats(i: int, chosen: list[int], candidates: list[_Candidate], vectors: np.ndarray) -> bool:
    """Whether candidate i says again what a chosen one says: near-identical meaning or words."""
    own = candidates[i].terms
    for j in chosen:
        if float(vectors[i] @ vectors[j]) >= DUPLICATE_COSINE:
            return True
        if own and len(own & candidates[j].terms) / len(own) >= CONTAINED_SHARE:
            return True
    return False


def from_settings(settings: GeneratorOptions, embedder: Embedder) -> ExtractiveGenerator:
    """The registered `extractive` generator: verbatim sentences of the evidence, offline."""
    return ExtractiveGenerator(embedder)
