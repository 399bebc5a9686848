"""The extractive generator on real perioperative passages with the real MiniLM embedder."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from evidenceqa.answer.base import ABSTAIN_MESSAGE, Draft, Evidence, generate
from evidenceqa.answer.citations import split_answer
from evidenceqa.answer.extractive import (
    TEMPLATE_DOCUMENTS,
    ExtractiveGenerator,
    _candidates,
    _of_sources_about_the_question,
    _quoted,
    _sides,
    _term_weights,
    answerable_sentences,
    sentence_score,
)
from evidenceqa.answer.findings import direction_of, is_summary, verdict
from evidenceqa.embeddings import CachedEmbedder
from evidenceqa.embeddings.cache import EmbeddingCache
from tests.answer.evidence import CHUNKS, chunk, extractive_generator, numbered

CLIPPING = "Does clipping rather than shaving reduce surgical site infection?"
CLIPPING_SENTENCE = (
    "When hair must be removed, clipping rather than shaving with a razor reduces the risk of "
    "surgical site infection."
)
# An abstract that states its aim and method before its finding, in the words of the question.
SHAVING_STUDY = (
    "To determine whether shaving before spinal surgery increases surgical site infection, we reviewed "
    "the records of 1,200 patients. Shaving increased the rate of surgical site infection after spinal "
    "surgery compared with clipping (4.1% vs 1.9%, p < 0.01)."
)
RAZORS_SENTENCE = "Razors cause microscopic cuts in the skin that become colonised by bacteria."


@pytest.fixture(scope="module")
def generator(tmp_path_factory: pytest.TempPathFactory, models_dir) -> ExtractiveGenerator:
    return extractive_generator(tmp_path_factory, models_dir)


@pytest.fixture(scope="module")
def embedder(generator: ExtractiveGenerator) -> CachedEmbedder:
    return generator.embedder


def answer(generator: ExtractiveGenerator, question: str, *names: str) -> Draft:
    return generator.generate(question, numbered(*names))


def test_quotes_the_answering_sentence_verbatim_and_cites_its_block(generator):
    draft = answer(generator, CLIPPING, "chlorhexidine", "hair", "tranexamic")

    assert not draft.abstained
    assert draft.model == "extractive"
    cited = {s.text: s.citations for s in draft.sentences}
    assert cited.get(CLIPPING_SENTENCE) == [2]
    assert CLIPPING_SENTENCE in CHUNKS["hair"].body
    assert f"{CLIPPING_SENTENCE} [2]" in draft.text
    # A yes/no question: the rule-made line first, then verbatim sentences only.
    assert direction_of(draft.sentences[0].text) == "yes" and draft.sentences[0].citations == [2]
    assert all(s.supported is True and s.support == 1.0 for s in draft.sentences[1:])


def test_every_sentence_is_verbatim_from_the_block_it_cites(generator):
    evidence = numbered("chlorhexidine", "hair", "hair_guideline", "tranexamic")
    draft = generator.generate("How can surgical site infection be prevented before surgery?", evidence)

    assert len(draft.sentences) > 1
    for sentence in draft.sentences:
        (n,) = sentence.citations
        assert sentence.text in evidence[n - 1].chunk.body


def test_markers_in_the_text_match_the_sentences(generator):
    draft = answer(
        generator, "Does tranexamic acid reduce transfusion?", "chlorhexidine", "hair", "tranexamic"
    )

    markers = [[int(n)] for n in re.findall(r"\[(\d+)\]", draft.text)]
    assert len(draft.sentences) >= 2
    assert markers == [s.citations for s in draft.sentences]
    assert draft.text == " ".join(f"{s.text} [{s.citations[0]}]" for s in draft.sentences)
    # The citation checker reads the generator's answer back into the same sentences.
    assert [(s.text, s.citations) for s in split_answer(draft.text)] == [
        (s.text, s.citations) for s in draft.sentences
    ]


def test_a_repeated_sentence_is_given_once(generator, embedder):
    # The guideline repeats the review's recommendation word for word.
    draft = answer(generator, CLIPPING, "hair", "hair_guideline")

    texts = [s.text for s in draft.sentences]
    assert texts.count(CLIPPING_SENTENCE) == 1
    vectors = embedder.embed(texts)
    for a, b in itertools.combinations(range(len(texts)), 2):
        assert float(vectors[a] @ vectors[b]) < 0.9, (texts[a], texts[b])


def test_of_two_equal_sentences_the_higher_ranked_block_is_quoted(generator):
    # The sentence opens the guideline but comes second in the review: retrieval rank decides.
    draft = answer(generator, CLIPPING, "chlorhexidine", "hair", "hair_guideline")
    assert [s.citations for s in draft.sentences if s.text == CLIPPING_SENTENCE] == [[2]]

    draft = answer(generator, CLIPPING, "chlorhexidine", "hair_guideline", "hair")
    assert [s.citations for s in draft.sentences if s.text == CLIPPING_SENTENCE] == [[2]]


def test_an_unrelated_question_abstains(generator):
    draft = answer(generator, "What is the capital of France?", "chlorhexidine", "hair", "tranexamic")

    assert draft.abstained
    assert draft.text == ABSTAIN_MESSAGE
    assert draft.model == "extractive"


def test_no_evidence_abstains(generator):
    assert generator.generate(CLIPPING, []).abstained


def test_the_finding_leads_not_the_aim_or_the_method(generator):
    study = chunk(
        "shave-2007#1", SHAVING_STUDY, "Shaving and infection after spinal surgery", 2007, ["Abstract"]
    )
    draft = generator.generate(
        "Does shaving before spinal surgery increase infection?", [Evidence(1, study, 0.9)]
    )

    quoted = [s.text for s in draft.sentences if direction_of(s.text) is None]
    assert quoted[0].startswith("Shaving increased the rate of surgical site infection"), quoted
    assert direction_of(draft.sentences[0].text) == "yes"


@pytest.mark.parametrize(
    ("evidence_type", "first"),
    [("patient-information", "answer"), ("observational", "finding"), (None, "finding")],
)
def test_a_leaflets_best_sentence_leads_and_a_studys_finding(evidence_type, first):
    # "increased risk" reads as a result: a study's result leads its source, but a leaflet states
    # facts, and the one that answers the question comes first.
    answer = "Signs and symptoms of alpha syndrome include bravo joints and charlie skin."
    finding = "People with alpha syndrome have an increased risk of delta tumours."
    page = replace(
        chunk("alpha#1", f"{answer} {finding}", "Alpha syndrome", 2020, []), evidence_type=evidence_type
    )
    embedder = FixedSimilarityEmbedder({answer: 0.9, finding: 0.7})

    chosen = ExtractiveGenerator(embedder)._choose(
        "What are the symptoms of alpha syndrome?", _candidates([Evidence(1, page, 0.9)])
    )
    assert [c.text for c in chosen] == ([answer, finding] if first == "answer" else [finding, answer])


MILROY = "Milroy disease is inherited in an autosomal dominant manner."
MILROY_TOPIC = "Milroy disease is a condition that affects the normal function of the lymphatic system."


@pytest.mark.parametrize(
    ("evidence_type", "sentences", "line"),
    [
        # A leaflet reports no findings: what it states in all of the question's terms answers it.
        ("patient-information", [MILROY, MILROY_TOPIC], "yes"),
        ("patient-information", ["Most cases of Milroy disease are not inherited.", MILROY_TOPIC], "no"),
        # A sentence that only names the topic takes no side, nor one in words of a finding.
        ("patient-information", [MILROY_TOPIC], "unclear"),
        (
            "patient-information",
            ["Compression garments may reduce the swelling of Milroy disease."],
            "unclear",
        ),
        # A study's sentence that is no finding never did, and does not now.
        (None, [MILROY, MILROY_TOPIC], "unclear"),
    ],
)
def test_what_patient_information_states_answers_a_yes_no_question(evidence_type, sentences, line):
    page = replace(
        chunk("milroy#1", " ".join(sentences), "Milroy disease", 2020, ["Inheritance"]),
        evidence_type=evidence_type,
    )
    embedder = FixedSimilarityEmbedder(dict.fromkeys(sentences, 0.8))
    draft = ExtractiveGenerator(embedder).generate("Is Milroy disease inherited?", [Evidence(1, page, 0.9)])

    assert direction_of(draft.sentences[0].text) == line, draft.text


def test_a_leaflet_sentence_that_only_names_its_page_s_topic_takes_no_side() -> None:
    page = replace(
        chunk("milroy#1", MILROY_TOPIC, "Milroy disease", 2020, []), evidence_type="patient-information"
    )
    embedder = FixedSimilarityEmbedder({MILROY_TOPIC: 0.8})
    draft = ExtractiveGenerator(embedder).generate("Is it Milroy disease?", [Evidence(1, page, 0.9)])

    assert direction_of(draft.sentences[0].text) == "unclear", draft.text


def test_sources_come_in_retrieval_order_grouped(generator):
    evidence = numbered("hair", "chlorhexidine")
    question = "How do chlorhexidine-alcohol and clipping compare for preventing surgical site infection?"
    draft = generator.generate(question, evidence)

    # The question asks about both: [1] (clipping), ranked first, then [2] (chlorhexidine), which
    # holds the best sentence.
    blocks = [s.citations[0] for s in draft.sentences]
    assert set(blocks) == {1, 2} and blocks == sorted(blocks), blocks


def test_a_source_whose_best_sentence_falls_short_is_left_out_whole(generator):
    evidence = numbered("hair", "chlorhexidine", "tranexamic")
    chosen = generator._choose(CLIPPING, _candidates(evidence))
    # Tranexamic acid shares "surgery" and little else: none of its sentences comes with the answer.
    assert chosen and all(c.n != 3 for c in chosen)
    assert {c.n for c in chosen} <= {1, 2}


def test_the_sources_kept_are_the_first_ranked_and_those_near_the_best_sentence():
    candidates = _candidates(numbered("hair", "chlorhexidine", "hair_guideline"))
    first = {i: c.n for i, c in enumerate(candidates)}

    def kept(scores: dict[int, float], cutoff: float) -> set[int]:
        return {first[i] for i in _of_sources_about_the_question(scores, candidates, cutoff)}

    one, two, three = (next(i for i, n in first.items() if n == k) for k in (1, 2, 3))
    # [1] is ranked first and stays though [2] holds the best sentence; [3], at 0.9 of the best, goes
    # at a cut of 1 and stays at 0.8.
    assert kept({one: 0.7, two: 1.0, three: 0.9}, 1.0) == {1, 2}
    assert kept({one: 0.7, two: 1.0, three: 0.9}, 0.8) == {1, 2, 3}
    # A first-ranked source whose best sentence could not be chosen (under 0.6 of the best) is not
    # the first source: the next-ranked one that could is.
    assert kept({one: 0.5, two: 1.0, three: 0.9}, 1.0) == {2}
    assert kept({one: 0.5, two: 0.9, three: 1.0}, 1.0) == {2, 3}


class FixedSimilarityEmbedder:
    """Each text at a set cosine to every question, on its own axis otherwise (so no two texts look
    alike): the extractive scores without a model."""

    model_id = "fixed-similarity"

    def __init__(self, similarity: dict[str, float]) -> None:
        self.similarity = similarity
        self.dim = len(similarity) + 1

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            axis = 1 + list(self.similarity).index(text)
            vectors[row, 0] = self.similarity[text]
            vectors[row, axis] = np.sqrt(1 - self.similarity[text] ** 2)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return np.eye(self.dim, dtype=np.float32)[0]


def test_a_sentence_in_the_other_form_the_search_looked_for_speaks_to_the_question():
    # "CVP" was searched for as "central venous pressure" too (the library's own abbreviation); the
    # conclusion that names only the long form is the answer, not nothing.
    finding = "There are no data to support using central venous pressure to guide fluid therapy."
    other = "Fluid responders were common."
    evidence = [Evidence(1, chunk("cvp#1", f"{other} {finding}", "CVP", 2013, ["Conclusions"]), 0.9)]
    generator = ExtractiveGenerator(FixedSimilarityEmbedder({other: 0.3, finding: 0.3}))
    assert generator.generate("CVP?", evidence).abstained
    expanded = generator.generate_expanded("CVP?", evidence, [("CVP", "central venous pressure")])
    assert [s.text for s in expanded.sentences] == [finding]
    # Through the answer pipeline's entry point, which reads the search's expansions where it can.
    assert generate(generator, "CVP?", evidence, [("CVP", "central venous pressure")]).text == expanded.text
    # Either form counts once: the short form in a sentence weighs as the long one does.
    short = _candidates(
        [Evidence(1, chunk("s#1", "CVP was high. Central venous pressure was high.", "S", 2013, []), 0.9)]
    )
    assert len(set(_term_weights({"cvp", "high"}, short, [("CVP", "central venous pressure")]))) == 1


def test_the_places_a_source_left_out_would_take_go_to_the_sources_kept():
    first = [
        "Alpha bravo charlie delta echo.",
        "Foxtrot golf hotel india juliet.",
        "Kilo lima mike november oscar.",
    ]
    best = "Papa quebec romeo sierra tango."
    near = "Uniform victor whiskey xray yankee."
    evidence = [
        Evidence(1, chunk("first#1", " ".join(first), "First", 2020, []), 0.9),
        Evidence(2, chunk("best#1", best, "Best", 2020, []), 0.8),
        Evidence(3, chunk("near#1", near, "Near", 2020, []), 0.7),
    ]
    # The best sentence is [2]'s; [3]'s scores 0.94 of it, above [1]'s second sentence.
    embedder = FixedSimilarityEmbedder({first[0]: 0.9, first[1]: 0.85, first[2]: 0.8, best: 0.95, near: 0.9})
    question = "Zulu?"

    def quoted(cutoff: float) -> list[str]:
        generator = ExtractiveGenerator(embedder, max_sentences=3, source_cutoff=cutoff)
        return [c.text for c in generator._choose(question, _candidates(evidence))]

    assert quoted(0.8) == [first[0], best, near]
    # [3] left out: its place goes to [1]'s next sentence, not to nothing.
    assert quoted(1.0) == [first[0], first[1], best]


def test_a_source_ranks_by_its_best_chunk_even_when_that_chunk_has_nothing_to_quote():
    aim = "To determine whether alpha bravo charlie delta echo."
    finding = "Foxtrot golf hotel india juliet kilo."
    other = "Lima mike november oscar papa quebec."
    evidence = [
        Evidence(1, chunk("paper#0", aim, "Paper", 2020, []), 0.9),  # an abstract's aim: never quoted
        Evidence(2, chunk("leaflet#1", other, "Leaflet", 2020, []), 0.8),
        Evidence(3, chunk("paper#2", finding, "Paper", 2020, []), 0.7),
    ]
    embedder = FixedSimilarityEmbedder({aim: 0.95, finding: 0.8, other: 0.9})

    chosen = ExtractiveGenerator(embedder)._choose("Zulu?", _candidates(evidence))
    # The paper is the first source (its chunk [1] ranked first), so its finding leads, though [2]
    # holds the best quotable sentence.
    assert [c.text for c in chosen] == [finding, other]


AGREES = "Kilo was associated with fewer lima events in mike patients."


def _three_studies(first: str, third: str) -> tuple[list[Evidence], FixedSimilarityEmbedder]:
    """Three studies' results in rank order: both others score under the best sentence (the source
    cut), the third within 0.8 of it."""
    evidence = [
        Evidence(n, chunk(f"study{n}#1", body, f"Study {n}", 2020, ["Results"]), 1.0 - n / 10)
        for n, body in enumerate((first, AGREES, third), start=1)
    ]
    return evidence, FixedSimilarityEmbedder({first: 0.95, AGREES: 0.9, third: 0.88})


def test_a_yes_no_answer_keeps_a_source_that_says_the_opposite():
    says_yes = "Alpha increased the bravo rate compared with charlie (4% vs 2%)."
    says_no = "Alpha did not change the bravo rate of delta echo."
    evidence, embedder = _three_studies(says_yes, says_no)

    draft = ExtractiveGenerator(embedder).generate("Does zulu work?", evidence)
    assert direction_of(draft.sentences[0].text) == "mixed"
    assert {n for s in draft.sentences for n in s.citations} == {1, 3}
    # Not a yes/no question: no side to keep, only the source holding the best sentence.
    draft = ExtractiveGenerator(embedder).generate("What does zulu do?", evidence)
    assert [s.citations for s in draft.sentences] == [[1]]


def test_a_source_that_only_restates_the_question_is_not_kept_as_the_other_side():
    says_no = "Alpha did not change the bravo rate of delta echo."
    restates = "Alpha changes the bravo rate of delta echo in older patients."  # no stance of its own
    evidence, embedder = _three_studies(says_no, restates)

    draft = ExtractiveGenerator(embedder).generate("Does alpha change the bravo rate?", evidence)
    assert direction_of(draft.sentences[0].text) == "no"
    assert {n for s in draft.sentences for n in s.citations} == {1}


def test_a_yes_no_answer_quotes_its_first_sources_conclusion(generator):
    """The results match the question's words best, yet the conclusion says what the study found:
    the answer quotes it, and the yes/no line hears it."""
    results = (
        "Delirium after hip fracture surgery occurred in 31% of the early mobilisation group and in 33% "
        "of the usual care group. Early mobilisation after hip fracture surgery started within 24 hours in "
        "92% of patients. Patients with delirium after hip fracture surgery were older. Early mobilisation "
        "after hip fracture surgery was more often interrupted by pain in patients with delirium."
    )
    conclusion = "These findings do not support mobilisation alone to prevent postoperative confusion."
    study = "Early mobilisation after hip fracture surgery"
    evidence = [
        Evidence(1, chunk("trial#2", results, study, 2020, ["Results"]), 0.9),
        Evidence(2, chunk("trial#3", conclusion, study, 2020, ["Conclusions"]), 0.8),
    ]
    draft = generator.generate(
        "Does early mobilisation reduce delirium after hip fracture surgery?", evidence
    )
    assert conclusion in [s.text for s in draft.sentences]
    assert len([s for s in draft.sentences if not is_summary(s.text)]) <= generator.max_sentences
    # Not "yes" from the 31% vs 33% alone, nor "mixed": the study's conclusion speaks for it.
    assert direction_of(draft.sentences[0].text) == "no"


@pytest.mark.parametrize(
    ("question", "junk"),
    [
        # The caption matches this question better than any sentence does.
        ("What were the rates of surgical site infection in each antiseptic group?", "Rates of surgical"),
        # The titles of the references (one in a numbered list) are the questions.
        ("What is the effect of tranexamic acid on surgical bleeding?", "Ker K"),
        ("Does preoperative hair removal reduce surgical site infection?", "Tanner J"),
        # The heading is the question.
        ("What about hair removal before surgery and surgical site infection?", "Hair removal before"),
    ],
)
def test_captions_references_and_headings_are_never_quoted(generator, question, junk):
    draft = answer(generator, question, "chlorhexidine", "hair", "tranexamic")

    assert not draft.abstained
    assert not any(junk in s.text for s in draft.sentences), draft.text


def test_fragments_are_not_quoted(generator):
    body = f"Clipping versus shaving.\n\n{CLIPPING_SENTENCE}"
    draft = generator.generate(
        "Clipping versus shaving?", [Evidence(1, chunk("x#1", body, "T", 2020, []), 1.0)]
    )

    assert [s.text for s in draft.sentences] == [CLIPPING_SENTENCE]


def test_a_question_in_the_text_is_never_quoted_as_its_answer(generator):
    # NIH's genetic-disease pages open each section with its question, which matches a question
    # about the disease better than the answer below it does.
    answer_sentence = "Scurvy is caused by too little vitamin C in the diet for at least three months."
    body = f"What causes scurvy? {answer_sentence}\n\nHow might scurvy be treated? Vitamin C is given."
    draft = generator.generate(
        "What causes scurvy?", [Evidence(1, chunk("scurvy#1", body, "Scurvy", 2020, ["Causes"]), 1.0)]
    )

    assert [s.text for s in draft.sentences] == [answer_sentence]


def test_overview_metadata_lines_are_not_quoted(generator):
    body = (
        "Chlorhexidine-alcohol versus povidone-iodine for surgical-site antisepsis\n\n"
        "Authors: Darouiche RO; Wall MJ; Itani KM et al.\n\n"
        "Journal: The New England Journal of Medicine\n\n"
        "Chlorhexidine-alcohol was superior to povidone-iodine for preventing surgical site infection."
    )
    overview = chunk("darouiche-2010#0", body, "Chlorhexidine-alcohol versus povidone-iodine", 2010, [])
    draft = generator.generate(
        "Which journal published the chlorhexidine-alcohol versus povidone-iodine trial?",
        [Evidence(1, overview, 1.0)],
    )

    assert [s.text for s in draft.sentences] == [
        "Chlorhexidine-alcohol was superior to povidone-iodine for preventing surgical site infection."
    ]


def test_the_answer_stays_within_the_limits(embedder):
    generator = ExtractiveGenerator(embedder, max_sentences=2, max_words=40)
    evidence = numbered("chlorhexidine", "hair", "hair_guideline", "tranexamic")
    draft = generator.generate("How can surgical site infection be prevented before surgery?", evidence)

    assert 1 <= len(draft.sentences) <= 2
    assert sum(len(s.text.split()) for s in draft.sentences) <= 40


def test_on_delta_receives_the_whole_text_once(generator):
    received: list[str] = []
    draft = generator.generate(CLIPPING, numbered("hair"), on_delta=received.append)
    assert received == [draft.text]

    received.clear()
    abstained = generator.generate(
        "What is the capital of France?", numbered("hair"), on_delta=received.append
    )
    assert received == [abstained.text] == [ABSTAIN_MESSAGE]


class CountingEmbedder:
    """Passes through to a real embedder, counting calls of embed."""

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.batches: list[int] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)


def ten_chunks() -> list[Evidence]:
    bodies = [c.body for c in CHUNKS.values()]
    chunks = [
        chunk(f"copy-{i}#1", f"{bodies[i % 4]}\n\nCopy {i} of the passage.", "T", 2020, []) for i in range(10)
    ]
    return [Evidence(i + 1, c, 1.0) for i, c in enumerate(chunks)]


def test_all_sentences_are_embedded_in_one_batch(embedder):
    counting = CountingEmbedder(embedder)
    ExtractiveGenerator(counting).generate(CLIPPING, ten_chunks())

    assert len(counting.batches) == 1
    assert counting.batches[0] >= 30


def test_answering_the_same_evidence_again_asks_the_model_for_nothing(embedder, tmp_path):
    # Why an answer is quick once warm: every sentence vector comes from the cache. How quick is
    # measured by benchmarks/ask_latency.py, not here.
    model = CountingEmbedder(embedder.embedder)
    generator = ExtractiveGenerator(CachedEmbedder(model, EmbeddingCache(tmp_path / "vectors.sqlite3")))
    first = generator.generate(CLIPPING, ten_chunks())
    asked = len(model.batches)

    again = generator.generate(CLIPPING, ten_chunks())

    assert asked >= 1
    assert len(model.batches) == asked
    assert again.text == first.text


def test_score_parts_weigh_as_documented():
    # Query terms and similarity decide; position only breaks near-ties.
    assert sentence_score(1.0, 0.8, 0, 0) > sentence_score(0.0, 0.2, 0, 0)
    assert sentence_score(0.5, 0.5, 0, 0) > sentence_score(0.5, 0.5, 3, 0) > sentence_score(0.5, 0.5, 3, 3)
    assert sentence_score(0.5, 0.5, 5, 5) > sentence_score(0.4, 0.4, 0, 0)
    assert sentence_score(0.0, -0.3, 0, 0) == sentence_score(0.0, 0.0, 0, 0)


def test_the_sources_own_reference_numbers_never_look_like_our_citations(generator):
    body = (
        "The incubation period of COVID-19 was estimated at five days [11, 12] in early case series. "
        "Most patients developed symptoms within fourteen days [13-15]."
    )
    evidence = [Evidence(1, chunk("covid#0", body, "Incubation of COVID-19", 2020, ["Results"]), 0.9)]
    draft = generator.generate("What is the incubation period of COVID-19?", evidence)
    assert not draft.abstained
    assert re.findall(r"\[(\d+)\]", draft.text) == ["1"] * len(draft.sentences)
    assert "The incubation period of COVID-19 was estimated at five days in early case series." in draft.text


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        # A superscript's number, flattened into the text, opens the next sentence.
        ("13 Patients with co-infection had fever for longer.", "Patients with co-infection had"),
        ("12,40 Among co-infected patients fever lasted longer.", "Among co-infected patients"),
        # A count that opens a sentence stays.
        ("20 patients with co-infection had fever for longer.", "20 patients with co-infection"),
        # Or flattened onto the full stop of the sentence before (NIH pages).
        (
            "Fever lasted longer with co-infection.3,6 Most recovered.",
            "Fever lasted longer with co-infection.",
        ),
    ],
)
def test_a_superscript_reference_number_does_not_open_a_quoted_sentence(generator, sentence, quoted):
    body = f"Respiratory viruses were common in children. {sentence}"
    evidence = [Evidence(1, chunk("flu#0", body, "Respiratory viruses", 2015, ["Results"]), 0.9)]
    draft = generator.generate("How long did fever last in patients with co-infection?", evidence)
    assert any(s.text.startswith(quoted) for s in draft.sentences), draft.text
    assert not {s.text.split(" ")[0] for s in draft.sentences} & {"13", "12,40"}
    assert not any(re.search(r"\.\d", s.text) for s in draft.sentences), draft.text


def test_mixed_evidence_names_each_side_with_its_kind_and_year():
    trial = replace(
        chunk("trial#1", "Shaving increased infection.", "Shaving", 2019, ["Results"]), evidence_type="rct"
    )
    cohort = replace(
        chunk("cohort#1", "Rates did not differ.", "Hair removal", 2015, ["Results"]),
        evidence_type="observational",
    )
    unlabelled = chunk("old#1", "Shaving raised infection.", "Razors", 1998, ["Results"])
    later = replace(cohort, chunk_id="cohort-2#1", year=2021)
    evidence = [
        Evidence(1, trial, 0.9),
        Evidence(2, cohort, 0.85),
        Evidence(3, unlabelled, 0.8),
        Evidence(4, later, 0.7),
    ]
    votes = [("Shaving increased infection.", 1), ("Rates did not differ.", 2), ("Shaving raised infection.", 3),
             ("Rates did not differ.", 4)]  # fmt: skip
    found = verdict(votes)
    assert (found.direction, found.sides) == ("mixed", {"yes": [1, 3], "no": [2, 4]})
    assert [(s.text, s.citations) for s in _sides(found, evidence)] == [
        ("Saying yes: Randomised controlled trial, 2019; Source, 1998.", [1, 3]),
        ("Saying no: Cohort, case-control or other non-randomised study, 2015; "
         "Cohort, case-control or other non-randomised study, 2021.", [2, 4]),
    ]  # fmt: skip
    assert all(is_summary(s.text) for s in _sides(found, evidence))
    assert _sides(verdict([("Shaving increased infection.", 1)]), evidence) == []  # one side: no sides


def test_sides_that_name_the_same_kind_and_year_are_left_out() -> None:
    # "Saying yes: Patient information. Saying no: Patient information." gives a reader nothing to weigh.
    page = replace(chunk("page#1", "…", "Page", 2020, []), year=None, evidence_type="patient-information")
    same_year = [replace(chunk(f"cohort-{n}#1", "…", "Cohort", 2020, ["Results"]), evidence_type="observational")
                 for n in (1, 2)]  # fmt: skip
    votes = [("Shaving increased infection.", 1), ("Rates did not differ.", 2)]
    one_page = [Evidence(1, page, 0.9), Evidence(2, page, 0.9)]
    two_cohorts = [Evidence(1, same_year[0], 0.9), Evidence(2, same_year[1], 0.8)]
    assert verdict(votes).direction == "mixed"
    assert _sides(verdict(votes), one_page) == []
    assert _sides(verdict(votes), two_cohorts) == []


def test_a_list_of_reference_numbers_does_not_open_a_sentence_before_any_word() -> None:
    # "… as reported elsewhere. 8, 9, 11, 12, 14 HCoV-OC43 and …": a list is references even before
    # a word in capitals; one number before one is a count.
    assert (
        _quoted("8, 9, 11, 12, 14 HCoV-OC43 and HCoV-229E were the most common strains.")
        == "HCoV-OC43 and HCoV-229E were the most common strains."
    )
    assert _quoted("20 ICU beds were opened.") == "20 ICU beds were opened."
    # The number of a point in the source's own list ("(4) … (5) …") is no part of the sentence.
    assert (
        _quoted("(5) HAdV-55-induced severe ARDS has a very high mortality rate (80%).")
        == "HAdV-55-induced severe ARDS has a very high mortality rate (80%)."
    )
    assert _quoted("(80%) of patients recovered.") == "(80%) of patients recovered."
    # A DoS guard: a long run of numbers that no word follows is read at once.
    started = time.perf_counter()
    assert _quoted("1, " * 5000 + "x") == "1, " * 4999 + "1, x"
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    "pointer",
    [
        "The Human Phenotype Ontology provides the following list of signs and symptoms for scurvy.",
        "Click here to view a diagram of the gums affected by scurvy.",
        "For more information on scurvy, call the information line of the institute.",
        "These resources address the diagnosis or management of scurvy: - Gene Review - Testing Registry",
        "Check the list of clinical trials that are now accepting patients with scurvy.",
        "More detailed information about the signs of scurvy can be accessed through Medscape Reference.",
        "Detailed information on the symptoms of scurvy is available from GeneReviews.",
    ],
)
def test_a_sentence_that_points_elsewhere_is_never_quoted(generator, pointer):
    # Web pages' links and lead-ins to lists they hold elsewhere say nothing of the question.
    answer_sentence = "Scurvy is caused by too little vitamin C in the diet for at least three months."
    body = f"{pointer}\n\n{answer_sentence}"
    draft = generator.generate(
        "What are the signs and symptoms of scurvy?",
        [Evidence(1, chunk("scurvy#1", body, "Scurvy", 2020, ["Symptoms"]), 1.0)],
    )

    assert [s.text for s in draft.sentences] == [answer_sentence]


def test_a_finding_about_where_information_was_reported_is_no_pointer(generator):
    finding = "Information on the signs of scurvy is available from 12 of the 20 reports of patients."
    draft = generator.generate(
        "What are the signs and symptoms of scurvy?",
        [Evidence(1, chunk("scurvy#1", finding, "Scurvy", 2020, ["Results"]), 1.0)],
    )

    assert [s.text for s in draft.sentences] == [finding]


def test_a_page_s_navigation_still_says_which_page_the_question_is_about(generator):
    # An NIH page's lead-in names the condition asked about; its table of signs matches the
    # question's words less well than a page on a neighbouring condition does, which is not about
    # the question and must not be quoted for it.
    asked = chunk(
        "spg19#1",
        "The Human Phenotype Ontology provides the following list of signs and symptoms for spastic "
        "paraplegia 19. Signs and Symptoms Approximate number of patients (when available) Ankle clonus - "
        "Autosomal dominant inheritance - Babinski sign - Hyperreflexia - Lower limb muscle weakness - "
        "Lower limb spasticity - Slow progression - Spastic gait - Spastic paraplegia -",
        "Spastic paraplegia 19",
        2020,
        ["Symptoms"],
    )
    neighbour = chunk(
        "spg11#1",
        "Signs and symptoms of spastic paraplegia 11 include progressive stiffness and weakness of the "
        "legs, and thinning of the corpus callosum.",
        "Spastic paraplegia 11",
        2020,
        ["Symptoms"],
    )
    draft = generator.generate(
        "What are the signs and symptoms of spastic paraplegia 19?",
        [Evidence(1, asked, 1.0), Evidence(2, neighbour, 0.9)],
    )

    assert [s.citations for s in draft.sentences] == [[1]], draft.text
    assert draft.sentences[0].text.startswith("Signs and Symptoms Approximate number"), draft.text


HPO_TEMPLATE = "In these cases, the sign or symptom may be rare or common."
INHERITANCE_TEMPLATE = (
    "This condition is inherited in an autosomal recessive pattern, which means both copies of the gene "
    "in each cell have mutations."
)


def test_a_template_that_many_documents_carry_gives_way_to_what_the_source_says(generator):
    # An NIH page on a rare disease: its own description of the signs, and the explanation of the
    # symptom table that 2,243 pages carry word for word, which matches "signs or symptoms" best.
    own = "Infants with achondrogenesis usually have a small body, short arms and legs, and a narrow chest."
    body = f"{own} Sometimes, no information on frequency is available. {HPO_TEMPLATE}"
    page = chunk("achondrogenesis#1", body, "Achondrogenesis", 2020, ["Symptoms"])
    question = "What are the signs or symptoms of achondrogenesis?"

    alone = generator.generate(question, [Evidence(1, page, 1.0)])
    assert HPO_TEMPLATE in [s.text for s in alone.sentences], "the template must be the best match here"

    templated = {HPO_TEMPLATE: 2243, "Sometimes, no information on frequency is available.": 2243}
    draft = generator.generate(question, [Evidence(1, page, 1.0, templated)])
    assert [s.text for s in draft.sentences] == [own], draft.text


def test_a_template_is_still_quoted_where_nothing_else_answers(generator):
    # A page's inheritance section holds only the templates hundreds of pages carry: they answer
    # (weighed down, not removed).
    parents = (
        "The parents of an individual with an autosomal recessive condition each carry one copy of the "
        "mutated gene, but they typically do not show signs and symptoms of the condition."
    )
    page = chunk("salih#2", f"{INHERITANCE_TEMPLATE} {parents}", "Salih myopathy", 2020, ["Inheritance"])
    draft = generator.generate(
        "How is this condition inherited?",
        [Evidence(1, page, 1.0, {INHERITANCE_TEMPLATE: 364, parents: 490})],
    )

    assert INHERITANCE_TEMPLATE in [s.text for s in draft.sentences], draft.text


def test_a_sentence_few_documents_share_is_no_template(generator):
    # Pages on the subtypes of one condition share their introduction: it is still theirs.
    body = f"Infants with achondrogenesis usually have a small body, short arms and legs. {HPO_TEMPLATE}"
    page = chunk("achondrogenesis-1a#1", body, "Achondrogenesis type 1A", 2020, ["Symptoms"])
    question = "What are the signs or symptoms of achondrogenesis?"
    shared = {HPO_TEMPLATE: TEMPLATE_DOCUMENTS - 1}

    assert generator.generate(question, [Evidence(1, page, 1.0, shared)]).sentences == (
        generator.generate(question, [Evidence(1, page, 1.0)]).sentences
    )


def test_headings_and_list_markers_stay_out_of_quoted_sentences(generator):
    # NIH pages keep a heading and the list below it in one block: "Key Points\n - Scurvy is …".
    cause = "Scurvy is caused by too little vitamin C in the diet for at least three months."
    cure = "Vitamin C given by mouth cures scurvy within a few weeks in adults."
    body = f"Key Points\n - {cause}\n\nTreatment of Scurvy in Adults and Older Children\n {cure}"
    draft = generator.generate(
        "What causes scurvy and how is scurvy treated with vitamin C?",
        [Evidence(1, chunk("scurvy#1", body, "Scurvy", 2020, []), 1.0)],
    )

    assert sorted(s.text for s in draft.sentences) == sorted([cause, cure])


def test_a_list_item_without_a_full_stop_can_still_be_quoted() -> None:
    body = "Treatment may include:\n - Surgery to remove the whole tumour\n - Radiation therapy to the pelvis"
    assert [s.text for s in answerable_sentences(body)] == [
        "Surgery to remove the whole tumour",
        "Radiation therapy to the pelvis",
    ]


def test_the_sources_own_reference_marks_leave_no_gap_before_punctuation() -> None:
    # PMC text often has a space between a reference and the full stop: "15-45% [1] ." read "15-45% ."
    assert _quoted("transmission is approximately 15-45% [1] .") == "transmission is approximately 15-45%."
    assert _quoted("within 14 days [11] , and [3, 4] ; then") == "within 14 days, and; then"
    assert _quoted("as shown [2] (Table 1) [5-7].") == "as shown (Table 1)."


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        (
            "RESULTS: Hair clipped rather than shaved before surgery gave fewer infections.",
            "Hair clipped rather than shaved before surgery gave fewer infections.",
        ),
        ("Conclusions: Clipping should replace shaving.", "Clipping should replace shaving."),
        (
            "Summary : Clipping is preferred to shaving before surgery.",
            "Clipping is preferred to shaving before surgery.",
        ),
    ],
)
def test_an_answer_quotes_a_sentence_without_its_structured_abstract_label(generator, sentence, quoted):
    # The label ("RESULTS:", as CORD-19 abstracts and MedlinePlus pages keep it in the text) is the
    # source's layout, not its finding; the citation keeps the sentence verbatim.
    evidence = [Evidence(1, chunk("hair#1", sentence, "Hair removal", 2020, ["Abstract"]), 1.0)]
    draft = generator.generate("Should hair be clipped rather than shaved before surgery?", evidence)

    assert [s.text for s in draft.sentences if not s.text.startswith("In short")] == [quoted]


@pytest.mark.parametrize(
    ("before", "after", "similarities"),
    [
        # "But others develop …" means nothing before the sentence it followed in its page, however
        # well it matches the question.
        (
            "Some people infected with the virus of herpes labialis never notice it.",
            "But others develop symptoms of herpes labialis, painful cold sores around the lips.",
            (0.7, 0.9),
        ),
        # "Also, …" leads where it matches best when the sentence after it is quoted and reads on.
        (
            "Also, symptoms of herpes labialis can start with tingling around the lips.",
            "Painful cold sores of herpes labialis appear a day later.",
            (0.9, 0.7),
        ),
    ],
)
def test_a_sentence_that_goes_on_from_another_does_not_open_its_source(before, after, similarities):
    page = replace(
        chunk("herpes#1", f"{before} {after}", "Cold sores", 2020, []), evidence_type="patient-information"
    )
    embedder = FixedSimilarityEmbedder(dict(zip((before, after), similarities, strict=True)))

    chosen = ExtractiveGenerator(embedder)._choose(
        "What are the symptoms of herpes labialis?", _candidates([Evidence(1, page, 0.9)])
    )
    assert [c.text for c in chosen] == [before, after]
