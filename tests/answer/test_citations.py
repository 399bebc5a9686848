"""Citation checking: [n] markers read from an answer, support measured against the cited passages
with the real MiniLM embedder, and the exact passage each citation points at."""

from __future__ import annotations

import pytest

from evidenceqa.answer.base import ABSTAIN_MESSAGE, DISCARD_STREAMED, Evidence
from evidenceqa.answer.citations import (
    SUPPORT_THRESHOLD,
    SourceNumbers,
    by_source,
    check,
    citations_for,
    nearest_passages,
    problem_kinds,
    quantity_problems,
    split_answer,
    supporting_text,
    unsupported_count,
)
from evidenceqa.answer.extractive import ExtractiveGenerator
from evidenceqa.embeddings import CachedEmbedder
from evidenceqa.records import Sentence
from evidenceqa.text.quantities import unmatched
from tests.answer.evidence import CHUNKS, HAIR_GUIDELINE, chunk, numbered, real_embedder

EVIDENCE = numbered("chlorhexidine", "hair", "tranexamic")
CLIPPING_SENTENCE = (
    "When hair must be removed, clipping rather than shaving with a razor reduces the risk of "
    "surgical site infection."
)


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory, models_dir) -> CachedEmbedder:
    return real_embedder(tmp_path_factory.mktemp("citations"), models_dir)


def checked(embedder: CachedEmbedder, text: str, *citations: int) -> Sentence:
    (result,) = check([Sentence(text, list(citations))], EVIDENCE, embedder)
    return result


# split_answer


def test_markers_become_citations_and_leave_the_text():
    sentences = split_answer(
        "Clipping reduces infection [2]. Chlorhexidine-alcohol was superior [1, 3]. "
        "Both were studied [1][2]. Several trials agree [1-3]. Dry the skin first [1–2]."
    )

    assert [(s.text, s.citations) for s in sentences] == [
        ("Clipping reduces infection.", [2]),
        ("Chlorhexidine-alcohol was superior.", [1, 3]),
        ("Both were studied.", [1, 2]),
        ("Several trials agree.", [1, 2, 3]),
        ("Dry the skin first.", [1, 2]),
    ]


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before():
    sentences = split_answer("Clipping reduces infection. [2] Razors cut the skin. [2][3]")

    assert [(s.text, s.citations) for s in sentences] == [
        ("Clipping reduces infection.", [2]),
        ("Razors cut the skin.", [2, 3]),
    ]


def test_a_sentence_without_a_marker_is_uncited():
    sentences = split_answer("Clipping reduces infection [2]. Razors should never be used.")

    assert sentences[1] == Sentence("Razors should never be used.", [])


def test_list_items_are_sentences_of_their_own():
    sentences = split_answer(
        "Before surgery:\n- clip, do not shave [2]\n- prepare the skin with chlorhexidine [1]"
    )

    assert [(s.text, s.citations) for s in sentences] == [
        ("Before surgery:", []),
        ("clip, do not shave", [2]),
        ("prepare the skin with chlorhexidine", [1]),
    ]


def test_an_implausible_range_keeps_only_its_ends():
    assert split_answer("Trials agree [2-90].")[0].citations == [2, 90]


# check


def test_a_verbatim_sentence_is_supported(embedder):
    result = checked(embedder, CLIPPING_SENTENCE, 2)

    assert result.supported is True
    assert result.support is not None and result.support > 0.9
    assert result.problem is None


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Clipping hair instead of shaving lowers the chance of a wound infection after surgery.", 2),
        (
            "Skin preparation with chlorhexidine in alcohol works better than iodine at preventing "
            "wound infections.",
            1,
        ),
        ("Giving tranexamic acid means fewer patients need a blood transfusion.", 3),
    ],
)
def test_a_paraphrase_is_supported(embedder, text, n):
    result = checked(embedder, text, n)

    assert result.supported is True, result.support
    assert result.support is not None and result.support < 0.9  # it is not verbatim


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Cefazolin 2 g should be given within 60 minutes before incision.", 1),
        ("The patient should fast for six hours before anaesthesia.", 2),
        # On the topic of the cited block, but the block says nothing about tranexamic acid.
        ("Tranexamic acid reduces surgical site infection after hip replacement.", 1),
        # True, but of another block than the one cited.
        ("Tranexamic acid reduces blood loss.", 2),
    ],
)
def test_a_sentence_the_cited_block_does_not_say_is_unsupported(embedder, text, n):
    result = checked(embedder, text, n)

    assert result.supported is False
    assert result.support is not None and result.support < SUPPORT_THRESHOLD
    assert (result.problem or "").startswith("the cited evidence does not support it")
    assert "unsupported" in problem_kinds(result.problem)


def test_a_number_not_among_the_evidence_is_flagged(embedder):
    result = checked(embedder, CLIPPING_SENTENCE, 2, 7)

    assert result.supported is False
    assert result.problem == "cites [7], which is not among the evidence"
    assert problem_kinds(result.problem) == {"not in the evidence"}


def test_an_uncited_claim_is_flagged(embedder):
    result = checked(embedder, "Clipping rather than shaving reduces surgical site infection.")

    assert result.supported is False
    assert result.problem == "cites no evidence"
    assert problem_kinds(result.problem) == {"uncited"}


@pytest.mark.parametrize(
    "text",
    [
        ABSTAIN_MESSAGE,
        "In summary,",
        "The evidence recommends the following:",
        "## Preparing the skin before surgery",
    ],
)
def test_sentences_that_claim_nothing_need_no_citation(embedder, text):
    result = checked(embedder, text)

    assert result.supported is True
    assert result.problem is None


def test_check_returns_new_sentences_in_order(embedder):
    sentences = split_answer(f"{CLIPPING_SENTENCE} [2] Razors should never be used. Dry the skin [9].")
    results = check(sentences, EVIDENCE, embedder)

    assert [r.text for r in results] == [s.text for s in sentences]
    assert [r.supported for r in results] == [True, False, False]
    assert all(s.supported is None and s.problem is None for s in sentences)  # inputs untouched
    assert unsupported_count(results) == 2


def test_an_extractive_answer_passes_the_check(embedder):
    draft = ExtractiveGenerator(embedder).generate(
        "How can surgical site infection be prevented before surgery?", EVIDENCE
    )
    results = check(split_answer(draft.text), EVIDENCE, embedder)

    assert len(results) > 1
    assert unsupported_count(results) == 0


# citations_for


def test_one_citation_per_cited_block_in_order_of_first_citation(embedder):
    sentences = split_answer(
        "Giving tranexamic acid means fewer patients need a blood transfusion [3]. "
        "Clipping rather than shaving reduces surgical site infection [2][3]. Dry the skin [3]."
    )
    citations = citations_for(check(sentences, EVIDENCE, embedder), EVIDENCE)

    assert [c.n for c in citations] == [3, 2]
    hair = citations[1]
    assert (hair.doc_id, hair.chunk_id, hair.title, hair.year, hair.section) == (
        "tanner-2021",
        "tanner-2021#2",
        "Preoperative hair removal to reduce surgical site infection",
        2021,
        "Main results",
    )


def test_the_citation_text_is_the_matching_sentence_of_the_body():
    sentences = split_answer(
        "Clipping hair instead of shaving lowers the chance of a wound infection [2]. "
        "Tranexamic acid cut transfusions by a third [3]."
    )
    by_n = {c.n: c.text for c in citations_for(sentences, EVIDENCE)}

    assert by_n[2] == CLIPPING_SENTENCE
    assert by_n[3] == (
        "A meta-analysis of 129 trials found that tranexamic acid reduced the probability of "
        "receiving a blood transfusion by a third."
    )


def test_citation_texts_are_exact_substrings_of_the_body(embedder):
    sentences = split_answer(
        "Chlorhexidine-alcohol prevented more surgical site infections than povidone-iodine [1]. "
        "The infection rate was 9.5% with chlorhexidine-alcohol [1]. Razors cut the skin [2]."
    )
    for citation in citations_for(sentences, EVIDENCE):
        body = EVIDENCE[citation.n - 1].chunk.body
        assert citation.text and citation.text in body
        assert citation.text == citation.text.strip()
    chlorhexidine = citations_for(sentences, EVIDENCE)[0].text
    assert chlorhexidine.startswith("Preoperative skin antisepsis") and chlorhexidine.endswith(
        "povidone-iodine group."
    )


def test_matches_far_apart_give_the_strongest_passage_not_the_whole_body():
    body = CHUNKS["chlorhexidine"].body
    text = supporting_text(
        body,
        [
            "Chlorhexidine-alcohol was superior to povidone-iodine for preventing surgical site infection.",
            "Alcohol must dry before drapes are applied.",
        ],
    )

    # Not the span from the first sentence to the last (which would take in the caption): the
    # drying sentence alone, whose shared words are rarer in the chunk, so the stronger match.
    assert text == (
        "Alcohol-based solutions must be allowed to dry completely before drapes are applied, because "
        "pooled alcohol can ignite under surgical diathermy."
    )


def test_an_unsupported_sentence_does_not_choose_the_passage(embedder):
    # The second claim is unsupported but shares words with the sentence after the clipping one.
    sentences = split_answer(f"{CLIPPING_SENTENCE} [2] Bacteria colonise the operating room air [2].")
    (citation,) = citations_for(check(sentences, EVIDENCE, embedder), EVIDENCE)

    assert citation.text == CLIPPING_SENTENCE


def test_citations_ignore_numbers_not_among_the_evidence():
    assert citations_for(split_answer("Clipping reduces infection [2][8]."), EVIDENCE)[0].n == 2
    assert len(citations_for(split_answer("Clipping reduces infection [2][8]."), EVIDENCE)) == 1


@pytest.mark.parametrize(
    ("claim", "passage", "problems"),
    [
        ("Give 4 mg/kg within 24 h.", "A dose of 2 mg/kg was given within 24 hours.",
         ["states 4 mg/kg, which the cited evidence does not"]),
        ("Of 1,200 patients, 9.5% had an infection.", "9.50% of the 1200 patients had an infection.", []),
        ("COVID-19 spread in 2020.", "COVID-19 was first reported in 2019.",
         ["states 2020, which the cited evidence does not"]),
        ("Clipping reduces infection.", "Clipping rather than shaving reduces infection.", []),
        ("Give 2 mg of cefazolin.", "Give cefazolin 2 g within 60 minutes of incision.",
         ["states 2 mg where the cited evidence says 2 g"]),
        ("Use 3 g in patients under 120 kg.", "Use 3 g for patients of 120 kg or more.", []),
        ("Use 3 g below 120 kg.", "Use 3 g for patients of 120 kg or more.",
         ["states below 120 kg where the cited evidence says 120 kg or more"]),
        ("Doses of 2 mg/kg and 3 mg/kg were compared.", "Doses of 1, 2 or 3 mg/kg were compared.", []),
    ],
)  # fmt: skip
def test_a_quantity_of_a_claim_must_be_in_the_passage_it_cites(
    claim: str, passage: str, problems: list[str]
) -> None:
    assert quantity_problems(unmatched(claim, [passage])) == problems


def test_a_wrong_unit_is_flagged_in_the_checked_answer(embedder):
    # The trial's own sentence but for one unit: the support score passes it, the unit does not.
    claim = ("In a randomised trial of 849 patients, the overall rate of surgical site infection was "
             "9.5 mmol/L in the chlorhexidine-alcohol group.")  # fmt: skip
    (checked,) = check(split_answer(f"{claim} [1]"), EVIDENCE, embedder)

    assert checked.support is not None and checked.support >= SUPPORT_THRESHOLD
    assert not checked.supported
    assert checked.problem == "states 9.5 mmol/L where the cited evidence says 9.5%"
    assert problem_kinds(checked.problem) == {"quantity"} and problem_kinds(None) == set()


# [4] is a second passage of [2]'s review: one source, one number.
SAME_PAPER = [*numbered("chlorhexidine", "hair", "tranexamic"),
              Evidence(4, chunk("tanner-2021#5", HAIR_GUIDELINE, "Preoperative hair removal", 2021, ["Discussion"]), 0.5)]  # fmt: skip
CITING = (
    "Tranexamic acid means fewer transfusions [3]. Clipping reduces infection [2][4]. "
    "Dry the skin [1, 3]. Razors cut the skin [4]. Nothing says this [7]."
)
BY_SOURCE = (
    "Tranexamic acid means fewer transfusions [1]. Clipping reduces infection [2]. "
    "Dry the skin [3][1]. Razors cut the skin [2]. Nothing says this."
)


def test_sources_are_numbered_by_document_in_order_of_first_use_without_gaps():
    sentences = split_answer(CITING)
    text, renumbered, citations = by_source(
        CITING, sentences, citations_for(sentences, SAME_PAPER), SAME_PAPER
    )
    assert text == BY_SOURCE
    assert [s.citations for s in renumbered] == [[1], [2], [3, 1], [2], []]
    # Both passages of the review are source 2, together, in the order the text cites the sources.
    assert [(c.n, c.chunk_id) for c in citations] == [
        (1, "ker-2012#1"), (2, "tanner-2021#2"), (2, "tanner-2021#5"), (3, "darouiche-2010#3")]  # fmt: skip


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_a_stream_is_numbered_as_its_record_whatever_its_pieces(size):
    numbers, streamed = SourceNumbers(SAME_PAPER), []
    deliver = numbers.streamed(streamed.append)
    for at in range(0, len(CITING), size):
        deliver(CITING[at : at + size])
    assert "".join(streamed) + numbers.flush() == BY_SOURCE


def test_a_discarded_stream_starts_its_numbering_again():
    numbers, streamed = SourceNumbers(SAME_PAPER), []
    deliver = numbers.streamed(streamed.append)
    deliver("Clipping [2]. ")
    deliver(DISCARD_STREAMED)
    deliver("Tranexamic acid [3]. Clipping [2].")
    assert streamed[-1] + numbers.flush() == "Tranexamic acid [1]. Clipping [2]."


def test_an_abstentions_closest_passages_are_numbered_by_document() -> None:
    # Two passages of one review were two cards, each with the review's name.
    second = chunk("tanner-2021#5", "Clipping and shaving did not differ in the rate of infection.",
                   "Preoperative hair removal to reduce surgical site infection", 2021, ["Main results"])  # fmt: skip
    evidence = [*numbered("hair", "chlorhexidine"), Evidence(3, second, 0.5)]
    nearest = nearest_passages("hair clipping and infection", evidence, 3)
    assert [(c.n, c.doc_id) for c in nearest] == [
        (1, "tanner-2021"),
        (2, "darouiche-2010"),
        (1, "tanner-2021"),
    ]
