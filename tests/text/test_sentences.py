from evidenceqa.text.sentences import ends_sentence, split_sentences


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
