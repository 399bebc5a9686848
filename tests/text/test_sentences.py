from hypothesis import given
from hypothesis import strategies as st

from evidenceqa.text.sentences import (
    BodySentence,
    body_sentences,
    ends_sentence,
    sentence_key,
    split_sentences,
)

# Phrases the sentence rules react to (run-in headings, openers, list dashes, a list's repeat),
# so random texts of them reach the rules' corners.
PIECES = [
    "Common Symptoms", "The most common symptoms are", "- cloudy vision", "- glare", "cloudy vision glare",
    "Tests for Cataract", "Cataract is found", "Stage IIIB", "In stage IIIB, it spread", "If a clot is large",
    "the hepatitis A virus", "Depression (Beck", ".", ",", ":", "-", "–", "\n", "\n\n", "x",
]  # fmt: skip


def located(body: str) -> list[BodySentence]:
    """`body_sentences(body)`, each checked to stand exactly where it says in the body."""
    sentences = body_sentences(body)
    assert all(s.text and body[s.start : s.end] == s.text for s in sentences)
    return sentences


def test_splits_at_sentence_ends_only():
    text = (
        "Chlorhexidine 2% was applied, e.g. before incision. Smith et al. reported 0.5 mg doses. "
        "See Fig. 2 for details! Was it safe? Yes."
    )
    assert split_sentences(text) == [
        "Chlorhexidine 2% was applied, e.g. before incision.",
        "Smith et al. reported 0.5 mg doses.",
        "See Fig. 2 for details!",
        "Was it safe?",
        "Yes.",
    ]


def test_initials_and_lowercase_starts_are_not_boundaries():
    assert split_sentences("Reported by J. Smith in 2010. it continued.") == [
        "Reported by J. Smith in 2010. it continued."
    ]


def test_a_reference_number_on_the_full_stop_ends_the_sentence_but_a_decimal_does_not():
    # NIH pages read as text: a superscript reference flattened onto the stop ("population.1 However").
    text = "It affects 17 percent of the population.1 However, rates vary.3,6 Men are at risk. Give 2.5 Mg."
    assert split_sentences(text) == [
        "It affects 17 percent of the population.1",
        "However, rates vary.3,6",
        "Men are at risk.",
        "Give 2.5 Mg.",
    ]
    assert split_sentences("See Fig.3 Below it.") == ["See Fig.3 Below it."]


def test_splitting_keeps_every_word():
    text = 'One. Two (2) items. "Three" follows. [4] Four ends'
    assert " ".join(split_sentences(text)).split() == text.split()


def test_ends_sentence():
    assert ends_sentence("It was effective.")
    assert ends_sentence('He said "stop."')
    assert ends_sentence("(See Table 1.)")
    assert not ends_sentence("the rate of surgical site")
    assert not ends_sentence("Results were:")


def test_list_items_after_a_full_stop_are_boundaries_but_not_after_the_colon():
    text = "Symptoms may include the following: - Blood in the stool. - Pain in the rectum. - Constipation"
    assert split_sentences(text) == [
        "Symptoms may include the following: - Blood in the stool.",
        "- Pain in the rectum.",
        "- Constipation",
    ]
    assert split_sentences("Dose was 5 - 10 mg. Then stop.") == ["Dose was 5 - 10 mg.", "Then stop."]


def test_each_table_row_is_a_sentence_and_the_alignment_row_none():
    text = "Table 1. Doses.\n| Drug | Dose |\n| --- | ---: |\n| Ondansetron | 4 mg |\nNote: adults. Or not."
    assert split_sentences(text) == [
        "Table 1.", "Doses.", "| Drug | Dose |", "| Ondansetron | 4 mg |", "Note: adults.", "Or not."
    ]  # fmt: skip


def test_body_sentences_are_located_exactly():
    body = (
        "Hair removal before surgery and surgical site infection\n\n"
        "Clipping, not shaving, should be used when hair must be removed. Shaving  raised infection rates."
    )
    sentences = located(body)

    assert sentences[0].text == "Hair removal before surgery and surgical site infection"
    assert [s.paragraph for s in sentences] == [0, 1, 1]


def test_list_items_and_heading_lines_are_sentences_of_their_own():
    # Sources that keep a list and its heading in one block of text (NIH pages); the item's marker
    # is not part of its sentence, and a line break inside a sentence is left alone.
    body = (
        "Key Points\n - Ovarian tumours form in the tissue covering the ovary.\n - Surgery to remove the tumour"
        "\n\nStage I Testicular Cancer\n Treatment depends on the type: - Surgery. - Radiation therapy."
        "\n\nPositive skin test: This \n means the body was infected."
    )
    sentences = located(body)

    assert [s.text for s in sentences] == [
        "Key Points",
        "Ovarian tumours form in the tissue covering the ovary.",
        "Surgery to remove the tumour",
        "Stage I Testicular Cancer",
        "Treatment depends on the type: - Surgery.",
        "Radiation therapy.",
        "Positive skin test: This \n means the body was infected.",
    ]
    assert [s.paragraph for s in sentences] == [0, 0, 0, 1, 1, 1, 2]


def test_a_sentences_key_is_its_words_case_and_spacing_aside():
    assert sentence_key("The frequency may also be listed as a fraction.") == sentence_key(
        "the frequency  may also be listed\nas a fraction."
    )
    assert sentence_key("The frequency may also be listed as a fraction.") != sentence_key(
        "The frequency may also be listed as a percentage."
    )


def test_a_heading_run_into_its_sentence_is_a_piece_of_its_own():
    # As NIH pages flattened to text write them (NIHSeniorHealth, PDQ): no line break after the heading.
    body = (
        "Common Symptoms The most common symptoms of a cataract are cloudy vision and glare. "
        "Tests for Cataract Cataract is detected through a comprehensive eye exam. "
        "Tests for Cataract - The visual acuity test is an eye chart test.\n\n"
        "Stage IIIB Stage IIIB is divided into two sections. Stage II In stage II, the tumor has spread."
    )

    assert [(s.text, s.heading) for s in located(body)] == [
        ("Common Symptoms", True),
        ("The most common symptoms of a cataract are cloudy vision and glare.", False),
        ("Tests for Cataract", True),
        ("Cataract is detected through a comprehensive eye exam.", False),
        ("Tests for Cataract", True),
        ("The visual acuity test is an eye chart test.", False),
        ("Stage IIIB", True),
        ("Stage IIIB is divided into two sections.", False),
        ("Stage II", True),
        ("In stage II, the tumor has spread.", False),
    ]


def test_names_that_open_a_sentence_are_not_run_in_headings():
    for sentence in (
        "Medicare Part A beneficiaries had more chronic conditions in 2010 than in 2008.",
        "The Selenium and Vitamin E Cancer Prevention Trial found no benefit.",
        "The College of American Pathologists and the American College of Medical Genetics recommend against it.",
        "CellTiter Glo and Caspase 3/7 Glo assays were used.",
        "Depression (Beck Depression Index) improved.",
        "Factor V Leiden thrombophilia is an inherited disorder.",
    ):
        assert [(s.text, s.heading) for s in body_sentences(sentence)] == [(sentence, False)]


def test_a_list_said_again_without_its_markers_is_left_out():
    body = (
        "The most common symptoms are - cloudy or blurry vision - glare -- lights may appear too bright - "
        "double vision. cloudy or blurry vision glare -- lights may appear too bright double vision. "
        "See your doctor.\n\n- a lump in the breast - a change in its shape. a lump in the breast a change in its shape."
    )

    assert [s.text for s in located(body)] == [
        "The most common symptoms are - cloudy or blurry vision - glare -- lights may appear too bright - double vision.",
        "See your doctor.",
        "a lump in the breast - a change in its shape.",
    ]
    # A list followed by other words in lower case is kept whole.
    kept = "Risks include - bleeding - infection. bleeding is the commoner."
    assert [s.text for s in located(kept)] == [kept]


def test_a_list_run_into_the_next_sentence_ends_where_that_sentence_opens():
    # MedlinePlus pages flattened to text: the last item has no stop; "A" names a variant as often.
    body = (
        "It can cause - Permanent damage to the lung - Damage to other organs from too little oxygen "
        "If a clot is large, it can cause death. It protects against the hepatitis A virus - in adults."
    )
    assert [s.text for s in located(body)] == [
        "It can cause - Permanent damage to the lung - Damage to other organs from too little oxygen",
        "If a clot is large, it can cause death.",
        "It protects against the hepatitis A virus - in adults.",
    ]


@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_body_sentences_are_located_exactly_in_any_text(words: list[str]) -> None:
    sentences = located(" ".join(words))

    assert [s.start for s in sentences] == sorted(s.start for s in sentences)
