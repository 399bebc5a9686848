"""Findings before aims and methods; the direction of yes/no evidence, never against what it cites."""

from __future__ import annotations

import itertools
import time

import pytest

from evidenceqa.answer.extractive import ExtractiveGenerator
from evidenceqa.answer.findings import (
    CONCLUSION_VOTE,
    asks_yes_or_no,
    direction_of,
    finding_weight,
    is_preamble,
    is_tentative,
    polarity,
    verdict,
    vote_weight,
)
from tests.answer.evidence import CHUNKS, extractive_generator, numbered


@pytest.fixture(scope="module")
def generator(tmp_path_factory: pytest.TempPathFactory, models_dir) -> ExtractiveGenerator:
    return extractive_generator(tmp_path_factory, models_dir)


@pytest.mark.parametrize(
    ("text", "section", "sign"),
    [
        ("To determine whether shaving increases infection, we reviewed 1,200 records.", [], -1),
        ("We retrospectively reviewed the charts of all patients.", ["Results"], -1),
        ("The aim of this study was to compare two antiseptics.", [], -1),
        ("Here, the aim is to describe the process of establishing preparedness plans.", [], -1),
        ("To perform an updated meta-analysis of indices predictive of fluid responsiveness.", [], -1),
        ("To critically assess the evidence that perforation is a risk factor for infertility.", [], -1),
        # A structured abstract's label kept in the sentence is its section.
        ("OBJECTIVE: To assess mental health outcomes among health care workers.", ["Abstract"], -1),
        ("Background: The Ebola epidemic caused global fear.", ["Abstract"], -1),
        ("IMPORTANCE: Health care workers exposed to COVID-19 could be stressed.", ["Results"], -1),
        ("Conclusions: Communication and training were important for preparedness.", ["Abstract"], 1),
        ("Shaving was associated with a higher infection rate (OR 2.1).", ["Abstract"], 1),
        ("Clipping reduced infection compared with shaving.", ["Conclusions"], 1),
        ("Surgical site infection is a common complication.", ["Background"], -1),
        # Methods told in the passive or with the patients as subject, even in a Results section.
        ("Serum concentrations of 31 patients treated with vancomycin were collected.", ["Results"], -1),
        ("Patients underwent either radical or partial nephrectomy.", ["Results"], -1),
        # Opened by the study period, stating no result: a method; with a result: a finding.
        (
            "Between May and November 2006, all patients undergoing RRP or RALP were prospectively assessed.",
            ["Results"],
            -1,
        ),
        ("From 2000 to 2010, surgical site infection decreased from 5% to 3%.", [], 1),
        # A method and a result in one sentence: the result counts.
        ("Blood samples were collected and IL-6 was significantly higher in cases.", [], 1),
    ],
)
def test_a_finding_weighs_up_and_an_aim_method_or_background_down(
    text: str, section: list[str], sign: int
) -> None:
    weight = finding_weight(text, section)
    assert (weight > 0) if sign > 0 else (weight < 0), weight


@pytest.mark.parametrize(
    ("section", "preamble"),
    [
        (["Background"], True),
        (["Summary of Background Data"], True),  # background, though it says summary
        (["Patients and methods"], True),
        (["Objective"], True),
        (["Results"], False),
        (["Conclusions"], False),
        (["Results and discussion"], False),
        (["Treatment"], False),  # a page's section says nothing of a study's plan
        ([], False),
    ],
)
def test_a_section_named_for_what_a_study_set_out_to_do_is_its_preamble(
    section: list[str], preamble: bool
) -> None:
    assert is_preamble(section) is preamble


def test_a_long_run_of_capitals_without_a_colon_is_weighed_at_once() -> None:
    # A DoS guard: "AND" read both as a joining word and as a capital word split a run two ways.
    started = time.perf_counter()
    assert finding_weight("ABC" + " AND" * 28 + " was associated with less infection.") > 0
    assert time.perf_counter() - started < 5


def test_a_conclusion_labelled_in_its_sentence_counts_as_one() -> None:
    assert vote_weight("CONCLUSIONS: Clipping reduced infection.", ["Abstract"]) == CONCLUSION_VOTE
    assert vote_weight("Clipping reduced infection.", ["Abstract"]) == 1.0


def test_a_purpose_with_a_main_clause_is_not_an_aim() -> None:
    assert finding_weight("To perform this function, the gene provides instructions for a protein.") > -1
    assert finding_weight("To date, no conclusive evidence has been found.") > -1


def test_yes_no_questions_are_told_from_open_ones() -> None:
    assert asks_yes_or_no("Does shaving increase infection?") and asks_yes_or_no("can CHG be used on mucosa")
    assert not asks_yes_or_no("What is the best antiseptic?") and not asks_yes_or_no("shaving infection risk")


@pytest.mark.parametrize(
    "question",
    [
        # A request for information put as a question.
        "Do you have information about Pacemakers and Implantable Defibrillators",
        "Can you tell me about tranexamic acid in hip replacement?",
        "could you please summarise ERAS for colorectal surgery",
        "Are there any guidelines on bridging anticoagulation?",
        "Is there any evidence on hair removal before surgery?",
        # A choice between two, which a yes would not answer.
        "Do I need an inguinal exploration, or can I open the hydrocele through the scrotum?",
        "Can I eat normal food the next morning or do I have to wait until my bowels work?",
        "Is vancomycin MIC creep happening everywhere, or should each hospital track its own?",
    ],
)
def test_a_request_or_a_choice_put_as_a_question_is_no_yes_no_question(question: str) -> None:
    assert not asks_yes_or_no(question)


@pytest.mark.parametrize(
    ("question", "yes_or_no"),
    [
        # Clinicians' shorthand and papers' titles ask whether without "does" or "is" where a
        # sentence would have it.
        ("DDAVP ok for haemophilia B?", True),
        ("pre-op statin -> less POAF after CABG?", True),
        ("nCoV RNA detectable in blood - predicts severe disease?", True),
        ("RALP vs open RRP - IL-6 / CRP response lower with the robot?", True),
        ("Necrotizing fasciitis: an indication for hyperbaric oxygenation therapy?", True),
        ("Acute respiratory distress syndrome in children with malignancy--can we predict outcome?", True),
        ("Assessment of carotid stenosis before coronary bypass surgery. Is it always necessary?", True),
        # Unless it asks what, offers a choice, is no question or names only a topic.
        ("G6PD deficiency - what triggers haemolysis?", False),
        ("HIT - typical onset after starting heparin, how many days?", False),
        ("emergency laparotomy - APACHE II pre-op or on ICU admission for risk stratification?", False),
        ("orchidopexy age testicular atrophy intra-abdominal vs inguinal testis", False),
        ("CVP?", False),
        ("Stroke risk?", False),
        ("Clipping versus shaving?", False),
        ("GK for trigeminal neuralgia - 1 vs 2 isocentres?", False),
    ],
)
def test_a_question_put_without_its_auxiliary(question: str, yes_or_no: bool) -> None:
    assert asks_yes_or_no(question) is yes_or_no


def test_an_or_inside_one_question_keeps_it_yes_or_no() -> None:
    assert asks_yes_or_no("Does shaving or clipping increase infection after spinal surgery?")
    assert asks_yes_or_no("Is a drain needed after thyroid or parathyroid surgery?")


@pytest.mark.parametrize(
    "question",
    [
        "Do you have to stop aspirin before a hip replacement?",  # "you" is anyone
        "Can you get hepatitis C from a blood transfusion?",
        "Is there any evidence that tranexamic acid reduces blood loss?",
        'Is there any evidence of a "July effect" in patients undergoing major cancer surgery?',
        "Are there any risks of spinal anaesthesia in aortic stenosis?",
    ],
)
def test_a_question_addressed_to_anyone_is_still_yes_or_no(question: str) -> None:
    assert asks_yes_or_no(question)


@pytest.mark.parametrize(
    ("text", "side"),
    [
        ("Shaving did not increase the rate of infection.", "no"),
        ("There was no significant difference in infection between groups.", "no"),
        ("Outcomes were similar in both arms.", "no"),
        ("Chlorhexidine significantly reduced surgical site infection.", "yes"),
        ("Tranexamic acid may reduce blood loss, but further studies are needed.", "yes"),
        ("Whether tranexamic acid reduces thrombosis remains unclear.", None),
        ("Patients were followed up at the clinic.", None),
        ("These results suggest little need to use peak concentration in vancomycin monitoring.", "no"),
        # "or" is a word, not an odds ratio (OR): no result is stated.
        ("Patients chose general or regional anaesthesia.", None),
        ("Infection was more common after shaving (OR 2.1, 95% CI 1.2-3.4).", "yes"),
        ("The results showed no overall first night effect on bruxism.", "no"),
        ("The preconditioning effect appears not to depend on intermittent reperfusion.", "no"),
        ("Men and women reported similar patterns of depressive symptoms.", "no"),
        ("Both groups have similar perioperative results and neurological outcomes.", "no"),
        ("There are no data to support the practice of using central venous pressure.", "no"),
        # A negated modal, and words that say no by themselves.
        ("Samples from heparinized arterial lines cannot be relied upon for APTT results.", "no"),
        ("The register will not be able to provide the same quality of information.", "no"),
        ("Mosaic trisomy 9 is usually not inherited.", "no"),  # an adverb of frequency before "not"
        ("Bedside assessment lacks the necessary sensitivity to be used for screening.", "no"),
        ("Protection against infectious diseases was frequently insufficient in the elderly.", "no"),
        ("Image manipulations are unlikely to be detected by dentists.", "no"),
        ("None of the proposed clinical identifiers have been validated.", "no"),
        ("All five predictive models have limited ability to risk-stratify patients.", "no"),
        (
            "The results of this study cast doubt on the suggested advantage of HBO in reducing mortality.",
            "no",
        ),
        ("Symptoms had a poor predictive value for COPD.", "no"),
        # Knowledge or agreement stated to be low.
        ("Family doctors have little awareness of the costs of medical care.", "no"),
        ("Correlation between the transition zone and the length of aganglionosis remains low.", "no"),
        ("The diagnostic yield of routine staging laparoscopy was very low.", "no"),
        ("The infection rate was low in both groups (2.1%).", "yes"),
        # A leading condition is not what the sentence states; a sentence that is all condition is read whole.
        (
            "Although infection rates did not differ overall, chlorhexidine significantly reduced deep infection.",
            "yes",
        ),
        ("While music did not significantly reduce cortisol, spikes were observed merely by chance.", "no"),
        # Not a negation: "not only" adds, "may or may not" is uncertain.
        ("Quality of life is not only the outcome of the disease but improves with support.", "yes"),
        ("Fluoridation may or may not reduce the use of restorative services.", None),
        ("Irritation of the gastrointestinal tract by the drug cannot be ruled out.", None),
    ],
)
def test_the_polarity_of_a_finding(text: str, side: str | None) -> None:
    assert polarity(text) == side


def test_a_hedged_conclusion_states_its_direction_tentatively() -> None:
    hedged = "The shaving of the incision site before spinal surgery may increase the rate of infection."
    stated = "A postoperative infection developed in 4 shaved patients and in 1 unshaved patient (P<0.01)."
    assert polarity(hedged) == "yes" and is_tentative(hedged) and not is_tentative(stated)
    alone = verdict([(hedged, 1)])
    assert alone.direction == "yes" and alone.tentative
    assert (
        alone.line() == "In short: the evidence found suggests yes." and direction_of(alone.line()) == "yes"
    )
    backed = verdict([(hedged, 1), (stated, 1)])
    assert backed.direction == "yes" and not backed.tentative
    assert backed.line() == "In short: the evidence found indicates yes."


def test_a_summary_of_background_and_a_count_of_the_randomised_are_not_findings() -> None:
    assert (
        finding_weight(
            "Spine surgeons usually shave the skin before surgery.", ["Summary Of Background Data"]
        )
        < 0
    )
    method = ("A total of 789 patients scheduled to undergo spinal surgery were randomly allocated into 2 "
              "groups: those whose site was shaved and those whose site was not.")  # fmt: skip
    assert finding_weight(method, ["Methods"]) == -1


def test_the_verdict_is_the_majority_cited_by_those_that_agree() -> None:
    assert (
        verdict([("A reduced infection.", 1), ("B significantly reduced infection.", 2)]).direction == "yes"
    )
    found = verdict([("A reduced infection.", 1), ("B reduced infection.", 2), ("C did not reduce it.", 3)])
    assert found.direction == "yes" and found.citations == [1, 2]
    mixed = verdict([("A reduced infection.", 1), ("B did not reduce infection.", 2)])
    assert mixed.direction == "mixed" and mixed.citations == [1, 2]
    assert verdict([("Patients were followed up.", 1)]).direction == "unclear"
    assert verdict([]).citations == []
    assert all(direction_of(verdict(s).line()) == verdict(s).direction for s in ([], [("A reduced it.", 1)]))


def test_a_study_whose_conclusion_takes_a_side_speaks_through_it_alone() -> None:
    results = [("The infection rate was 4% lower with prophylaxis.", 1), ("Prophylaxis reduced fever.", 2)]
    conclusion = ("Routine prophylaxis is not recommended.", 3)  # the same study's conclusion: no
    findings, weights = [*results, conclusion], [1.0, 1.0, 2.0]
    assert verdict(findings, weights).direction == "mixed"  # counted as separate votes
    found = verdict(findings, weights, sources=["study"] * 3)
    assert found.direction == "no" and found.citations == [3] and found.sides == {"no": [3]}
    # Another study's results still vote: two sources that disagree are mixed.
    other = verdict(findings, weights, sources=["other", "other", "study"])
    assert other.direction == "mixed" and other.sides == {"yes": [1, 2], "no": [3]}
    # A source without a conclusion that takes a side votes with every finding, as before.
    split = [results[0], ("The infection rate did not differ.", 2)]
    assert verdict(split, [1.0, 1.0], sources=["study", "study"]).direction == "mixed"


def test_a_finding_that_restates_the_question_says_yes_to_it() -> None:
    question = "Do ventricular arrhythmias in athletes subside over time?"
    restated = "These arrhythmias subside over time when athletes are engaged in non-competitive sports."
    assert polarity(restated) is None  # no word of effect or property of its own
    assert polarity(restated, question) == "yes"
    assert verdict([(restated, 1)], question=question).direction == "yes"
    assert verdict([(restated, 1)]).direction == "unclear"  # without the question, nothing says so
    # Restating less than half of the question, or restating it as uncertain, says nothing.
    assert verdict([("Athletes were followed for a long time.", 1)], question=question).direction == "unclear"
    unsure = "Whether these arrhythmias subside over time in athletes remains unclear."
    assert verdict([(unsure, 1)], question=question).direction == "unclear"
    # What a condition sets out ("If hair has to be removed, …") is not what the sentence says.
    condition = "If hair has to be removed, it should be done on the day of surgery."
    assert polarity(condition, "Should hair be removed routinely before surgery?") is None
    # A stance of its own is kept: a negated restatement says no.
    denied = "Ventricular arrhythmias in athletes did not subside over time."
    assert verdict([(denied, 1)], question=question).direction == "no"


def test_a_question_about_safety_is_answered_only_by_findings_that_state_it() -> None:
    question = "Is tranexamic acid safe in hip replacement?"
    benefit = "Combined use of tranexamic acid and desmopressin decreases postoperative blood loss."
    harms = "Tranexamic acid did not increase thromboembolic complications."  # a yes, read as a "no"
    assert polarity(benefit) == "yes" and polarity(benefit, question) is None
    assert verdict([(benefit, 1), (harms, 2)], question=question).direction == "unclear"
    assert (
        verdict([("Tranexamic acid was safe and well tolerated.", 1)], question=question).direction == "yes"
    )
    assert (
        verdict([("Tranexamic acid was not safe in these patients.", 1)], question=question).direction == "no"
    )
    # Any other question reads the benefit as before.
    assert verdict([(benefit, 1)], question="Does tranexamic acid reduce blood loss?").direction == "yes"


@pytest.mark.parametrize(
    ("question", "finding", "side"),
    [
        # Doing well without what is asked about says it is not needed.
        (
            "Is fluoroscopy essential for retrieval of lower ureteric stones?",
            "Ureteroscopic stone retrieval can safely be done without the use of fluoroscopy in most patients.",
            "no",
        ),
        (
            "Adjuvant radiation of stage III thymoma: is it necessary?",
            "Some patients enjoy prolonged disease-free survival without adjuvant radiation after resection.",
            "no",
        ),
        ("Is a drain needed after thyroidectomy?", "Thyroidectomy without a drain was safe.", "no"),
        # Going without it and doing badly is no such finding; nor is doing well without something else.
        ("Is surgery necessary for appendicitis?", "Patients without surgery died sooner than others.", None),
        ("Is a drain needed after thyroidectomy?", "Thyroidectomy without antibiotics was safe.", "yes"),
        # Any other question reads the finding as before.
        ("Does thyroidectomy cause hypocalcaemia?", "Thyroidectomy without a drain was safe.", "yes"),
    ],
)
def test_a_question_whether_something_is_needed_is_answered_no_by_doing_well_without_it(
    question: str, finding: str, side: str | None
) -> None:
    assert polarity(finding, question) == side


def test_a_question_whether_two_things_are_alike_is_answered_by_no_difference() -> None:
    alike = "Is single-agent mitoxantrone as effective as combination chemotherapy?"
    no_difference = (
        "No significant difference was detected between the two treatments in response or survival."
    )
    lower = "Interstitial concentrations of meropenem were significantly lower than plasma concentrations."
    assert polarity(no_difference) == "no" and polarity(no_difference, alike) == "yes"
    equivalent = "Are interstitial concentrations of meropenem equivalent to plasma concentrations?"
    assert polarity(lower) == "yes" and polarity(lower, equivalent) == "no"
    weaker = "Mitoxantrone alone was not as effective as combination chemotherapy."
    assert polarity(weaker, alike) == "no"
    # Denied in as many words as it is asked: "as safe and effective as" both ways.
    both = "Is the laparoscopic repair as safe and effective as the open one?"
    assert polarity("The laparoscopic repair was not as safe and effective as the open one.", both) == "no"
    # An effect that compares nothing says nothing about alike; "the same target" compares nothing.
    accurate = "Ultrasound diagnosed fractures accurately."
    assert polarity(accurate) == "yes" and polarity(accurate, "Is ultrasound equal to X-ray?") is None
    target = "Should all patients be optimised to the same haemoglobin level to avoid transfusion?"
    assert polarity("Not all patients need the same haemoglobin target.", target) == "no"
    # Nor is a conjunction, an amount or a time a likeness asked about.
    both = "Does ondansetron reduce nausea as well as vomiting after surgery?"
    assert polarity("Ondansetron did not reduce vomiting.", both) == "no"
    assert (
        polarity("Ondansetron did not reduce vomiting.", "Is anticoagulation needed for as long as 6 months?")
        == "no"
    )
    assert (
        polarity(
            "Combined repair did not add risk.", "Can the sling be fitted at the same time as the repair?"
        )
        == "no"
    )


QUESTIONS = [
    "Does clipping rather than shaving reduce surgical site infection?",
    "Is chlorhexidine-alcohol better than povidone-iodine for skin antisepsis?",
    "Does tranexamic acid reduce the need for blood transfusion?",
    "Should hair be removed routinely before surgery?",
    "Can alcohol-based antiseptic ignite under diathermy?",
    "Is clipping as good as shaving for preventing surgical site infection?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_yes_no_line_never_contradicts_the_sentences_it_cites(
    generator: ExtractiveGenerator, question: str
) -> None:
    for names in itertools.permutations(CHUNKS, 2):
        draft = generator.generate(question, numbered(*names))
        if draft.abstained:
            continue
        first, *quoted = draft.sentences
        direction = direction_of(first.text)
        assert direction is not None, draft.text
        by_number = {n: [s.text for s in quoted if n in s.citations] for n in first.citations}
        for n, texts in by_number.items():
            sides = {polarity(t, question) for t in texts} - {None}
            assert texts and (direction == "mixed" or sides == {direction}), (question, names, n, texts)
        assert direction in {"unclear"} or first.citations, draft.text
