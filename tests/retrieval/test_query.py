import re
from datetime import date

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evidenceqa.index.base import Filters
from evidenceqa.retrieval.query_class import (
    QUERY_CLASSES,
    SEED_ALPHA,
    classify,
    clinical_terms,
    learned_alpha,
    rule_alpha,
)
from evidenceqa.retrieval.temporal import Temporal, parse_temporal, scoped

TODAY = date(2026, 11, 29)

# question, year_min, year_max, text left for the search
EXPLICIT_YEARS = [
    ("Does CHG reduce SSI since 2021?", 2021, None, "Does CHG reduce SSI?"),
    ("Trials from 2019 onwards on TXA", 2019, None, "Trials on TXA"),
    ("Trials from 2019 onward on TXA", 2019, None, "Trials on TXA"),
    ("TXA in hip arthroplasty after 2015", 2016, None, "TXA in hip arthroplasty"),
    ("post-2015 studies of ERAS", 2016, None, "studies of ERAS"),
    ("Post 2015 studies of ERAS", 2016, None, "Studies of ERAS"),
    ("Is there anything newer than 2015 on ERAS?", 2016, None, "Is there anything on ERAS?"),
    ("ERAS studies 2015 or later", 2015, None, "ERAS studies"),
    ("ERAS studies 2015 and later", 2015, None, "ERAS studies"),
    ("ERAS studies 2019 onwards", 2019, None, "ERAS studies"),
    ("What happened in 2023 with remdesivir?", 2023, 2023, "What happened with remdesivir?"),
    ("Mortality during 2020 in the ICU", 2020, 2020, "Mortality in the ICU"),
    ("Studies published in 2019 on MRSA", 2019, 2019, "Studies on MRSA"),
    ("Evidence from 2018 on warming", 2018, 2018, "Evidence on warming"),
    ("Studies in the year 2017 on warming", 2017, 2017, "Studies on warming"),
    ("Was hair removal advised before 2010?", None, 2009, "Was hair removal advised?"),
    ("Guidelines prior to 2010 on shaving", None, 2009, "Guidelines on shaving"),
    ("pre-2010 cohorts of hip fracture", None, 2009, "cohorts of hip fracture"),
    ("Data until 2012 on aspirin", None, 2012, "Data on aspirin"),
    ("Data up to 2012 on aspirin", None, 2012, "Data on aspirin"),
    ("Data through 2012 on aspirin", None, 2012, "Data on aspirin"),
    ("Data on aspirin, 2012 or earlier", None, 2012, "Data on aspirin"),
    ("Trials between 2012 and 2016 of TXA", 2012, 2016, "Trials of TXA"),
    ("Trials between 2016 and 2012 of TXA", 2012, 2016, "Trials of TXA"),
    ("Trials from 2012 to 2016 of TXA", 2012, 2016, "Trials of TXA"),
    ("TXA trials 2012-2016", 2012, 2016, "TXA trials"),
    ("TXA trials 2012–2016", 2012, 2016, "TXA trials"),
    ("TXA trials 2012 - 2016", 2012, 2016, "TXA trials"),
    ("TXA trials in 2012-16", 2012, 2016, "TXA trials"),
    ("Outcomes in the 1990s after hip fracture", 1990, 1999, "Outcomes after hip fracture"),
    ("Trends in the 2010s in day surgery", 2010, 2019, "Trends in day surgery"),
    ("Papers from the 2000s on sepsis", 2000, 2009, "Papers on sepsis"),
    ("Has practice changed since the 2010s?", 2010, None, "Has practice changed?"),
    ("SINCE 2021, WHAT CHANGED IN SSI?", 2021, None, "WHAT CHANGED IN SSI?"),
    ("COVID-19 outcomes in 2020", 2020, 2020, "COVID-19 outcomes"),
    ("H1N1 vaccination in 2009", 2009, 2009, "H1N1 vaccination"),
    # Several phrases: the intersection, and the "and" between them goes too.
    ("Since 2015 and before 2020, how many RCTs on TXA?", 2015, 2019, "How many RCTs on TXA?"),
    # A year as an adjective before a publication noun names the publication: only the year goes.
    ("What does the 2016 WHO guideline recommend?", 2016, 2016, "What does the WHO guideline recommend?"),
    ("Is a 2012 guideline still valid?", 2012, 2012, "Is a guideline still valid?"),
    ("The ESC 2022 guidelines on beta blockers", 2022, 2022, "The ESC guidelines on beta blockers"),
]


@pytest.mark.parametrize(("question", "year_min", "year_max", "text"), EXPLICIT_YEARS)
def test_explicit_years(question: str, year_min: int | None, year_max: int | None, text: str) -> None:
    parsed = parse_temporal(question, TODAY)
    assert (parsed.year_min, parsed.year_max, parsed.recency) == (year_min, year_max, False)
    assert parsed.text == text
    assert parsed.phrase


# Relative to 2026-11-29: "the last N years" = the current calendar year and the N − 1 before it.
RELATIVE = [
    ("What changed in the last 5 years in ERAS?", 2022, None, "What changed in ERAS?"),
    ("What changed in the past five years in ERAS?", 2022, None, "What changed in ERAS?"),
    ("Over the past 3 years, what changed in sepsis care?", 2024, None, "What changed in sepsis care?"),
    ("Evidence from the previous twenty years on TXA", 2007, None, "Evidence on TXA"),
    ("Within the last 1 year, any trials on CHG?", 2026, None, "Any trials on CHG?"),
    ("Advances in the last decade in knee arthroplasty", 2017, None, "Advances in knee arthroplasty"),
    ("Advances over the past two decades in knee arthroplasty", 2007, None, "Advances in knee arthroplasty"),
    ("What did we learn last year about VTE?", 2025, 2025, "What did we learn about VTE?"),
    ("Last year's guidance on VTE", 2025, 2025, "Guidance on VTE"),
    ("Studies in the past year on delirium", 2025, None, "Studies on delirium"),
    ("Studies over the last year on delirium", 2025, None, "Studies on delirium"),
    ("What is new this year in anaesthesia?", 2026, 2026, "What is new in anaesthesia?"),
]


@pytest.mark.parametrize(("question", "year_min", "year_max", "text"), RELATIVE)
def test_relative_periods(question: str, year_min: int | None, year_max: int | None, text: str) -> None:
    parsed = parse_temporal(question, TODAY)
    assert (parsed.year_min, parsed.year_max, parsed.recency, parsed.text) == (
        year_min,
        year_max,
        False,
        text,
    )


RECENCY = [
    ("What has changed in recent years in sepsis care?", "What has changed in sepsis care?"),
    ("What has changed in the past few years in sepsis care?", "What has changed in sepsis care?"),
    ("What are the latest guidelines on SSI prevention?", "What are the guidelines on SSI prevention?"),
    ("What are the most recent recommendations for VTE prophylaxis?", "What are the recommendations for VTE prophylaxis?"),
    ("What is the current management of appendicitis?", "What is the management of appendicitis?"),
    ("What are the newest data on TXA?", "What are the data on TXA?"),
    ("Up-to-date evidence on hair removal", "Evidence on hair removal"),
    ("Recent randomized trials of CHG versus iodine", "Randomized trials of CHG versus iodine"),
    ("What do the current WHO guidelines say about hair removal?", "What do the WHO guidelines say about hair removal?"),
    ("Is TXA currently recommended in hip arthroplasty?", "Is TXA recommended in hip arthroplasty?"),
    ("What's the latest on TXA in hip arthroplasty?", "What's on TXA in hip arthroplasty?"),
    ("Recently published trials of warming", "Trials of warming"),
]  # fmt: skip


@pytest.mark.parametrize(("question", "text"), RECENCY)
def test_recency_without_years_boosts_instead_of_filtering(question: str, text: str) -> None:
    parsed = parse_temporal(question, TODAY)
    assert (parsed.year_min, parsed.year_max, parsed.recency) == (None, None, True)
    assert parsed.text == text


def test_explicit_years_win_over_recency_words() -> None:
    parsed = parse_temporal("Recent trials since 2020 on CHG", TODAY)
    assert (parsed.year_min, parsed.year_max, parsed.recency) == (2020, None, False)
    assert parsed.text == "Trials on CHG"
    assert parsed.phrase == "Recent, since 2020"


def test_contradicting_phrase_is_left_in_the_question() -> None:
    parsed = parse_temporal("Trials since 2020 and before 2010 on CHG", TODAY)
    assert (parsed.year_min, parsed.year_max) == (2020, None)
    assert parsed.text == "Trials and before 2010 on CHG"


NOT_TEMPORAL = [
    "What is the mortality of COVID-19 in the ICU?",
    "H1N1 vaccination in pregnancy",
    "ISO 9001 certification of operating theatres",
    "What did 2019-nCoV do to elective surgery?",
    "SARS-CoV-2 transmission in operating rooms",
    "Is a dose of 2000 mg cefazolin enough above 120 kg?",
    "Outcomes in 2015 patients after colectomy",
    "2015 patients were randomised to CHG",
    "n = 2012 participants enrolled in the trial",
    "Table 2010 shows SSI rates",
    "ICD-10 codes for sepsis",
    "Complications in 20 patients after TKA",
    "1000 participants received TXA",
    "Grade 3 complications after Whipple",
    "Infusion from 2000 to 3000 mg per day",
    "Between 1950 and 2000 mg of paracetamol daily",
    "Up to 2000 mL blood loss",
    "The 2009 H1N1 pandemic and elective surgery",
    "Studies in 2090 on robots",  # after next year: a number, not a year
    "What is the risk of SSI in current smokers?",
    "Timing of surgery after recent myocardial infarction",
    "Is new-onset atrial fibrillation after CABG dangerous?",
    "Current density of electrosurgical units",
    "What is the latest time to give cefazolin before incision?",
    "",
]


@pytest.mark.parametrize("question", NOT_TEMPORAL)
def test_not_temporal_comes_back_unchanged(question: str) -> None:
    assert parse_temporal(question, TODAY) == Temporal(text=question)


# Non-temporal medical questions, with numbers that look like years but are counts, doses or names.
_DRUGS = ["cefazolin", "chlorhexidine gluconate 2%", "povidone-iodine", "TXA", "enoxaparin 40 mg", "CHG"]
_CONDITIONS = ["SSI", "surgical site infection", "DVT", "MRSA", "COVID-19", "SARS-CoV-2", "2019-nCoV", "H1N1"]
_NUMBERS = st.integers(0, 5000)
_ODD_NUMBERS = st.one_of(
    st.builds("{} patients".format, _NUMBERS),
    st.builds("in {} participants".format, _NUMBERS),
    st.builds("a dose of {} mg".format, _NUMBERS),
    st.builds("{} mL".format, _NUMBERS),
    st.builds("{}%".format, _NUMBERS),
    st.builds("n = {}".format, _NUMBERS),
    st.builds("Table {}".format, _NUMBERS),
    st.builds("grade {}".format, _NUMBERS),
    st.builds("ISO {}".format, _NUMBERS),
    st.sampled_from(["ICD-10", "", "in current smokers", "after recent MI"]),
)


def _question(*parts: str) -> str:
    return " ".join(part for part in parts if part) + "?"


_QUESTIONS = st.builds(
    _question,
    st.sampled_from(["Is", "Does", "What about", "How effective is", "Should we use"]),
    st.sampled_from(_DRUGS),
    st.just("for"),
    st.sampled_from(_CONDITIONS),
    _ODD_NUMBERS,
    st.sampled_from(["after colectomy", "in obese patients", "in children", ""]),
)
_DATES = st.dates(date(1990, 1, 1), date(2100, 12, 31))


@given(_QUESTIONS, _DATES)
def test_generated_medical_questions_are_not_temporal(question: str, today: date) -> None:
    assert parse_temporal(question, today) == Temporal(text=question)


_TEMPORAL_WORDS = re.compile(
    r"\d|year|decade|recent|latest|newest|current|new|updat|lately|nowadays|days|up.to.date|contemporary",
    re.IGNORECASE,
)


@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80))
def test_text_without_temporal_words_is_unchanged(text: str) -> None:
    assume(not _TEMPORAL_WORDS.search(text))
    assert parse_temporal(text, TODAY) == Temporal(text=text)


@given(_QUESTIONS, st.integers(1900, 2027))
def test_since_year_added_to_any_question(question: str, year: int) -> None:
    parsed = parse_temporal(f"{question[:-1]} since {year}?", TODAY)
    assert (parsed.year_min, parsed.year_max, parsed.phrase) == (year, None, f"since {year}")
    assert parsed.text == question


@given(st.integers(1, 20), st.booleans(), _DATES)
def test_last_n_years_counts_the_current_year(n: int, spelled: bool, today: date) -> None:
    words = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
    number = words.split()[n - 1] if spelled else str(n)
    parsed = parse_temporal(f"Trials of CHG in the last {number} years", today)
    assert (parsed.year_min, parsed.year_max) == (today.year - n + 1, None)
    assert parsed.text == "Trials of CHG"


def test_years_beyond_next_year_are_numbers() -> None:
    assert parse_temporal("trials since 2027", TODAY).year_min == 2027
    assert parse_temporal("trials since 2028", TODAY).year_min is None
    assert parse_temporal("trials since 2028", date(2027, 1, 1)).year_min == 2028
    assert parse_temporal("trials since 1899", TODAY).year_min is None


def test_describe() -> None:
    assert parse_temporal("since 2021", TODAY).describe() == "year ≥ 2021 (from 'since 2021')"
    assert parse_temporal("before 2010", TODAY).describe() == "year ≤ 2009 (from 'before 2010')"
    assert parse_temporal("2012-2016", TODAY).describe() == "2012 ≤ year ≤ 2016 (from '2012-2016')"
    assert parse_temporal("in 2023", TODAY).describe() == "year = 2023 (from 'in 2023')"
    assert parse_temporal("latest guidelines", TODAY).describe() == "newer documents first (from 'latest')"
    assert parse_temporal("hair removal", TODAY).describe() == "no time limit"


def test_filters_narrow_the_base_filters() -> None:
    parsed = parse_temporal("SSI trials between 2012 and 2016", TODAY)
    assert parsed.filters() == Filters(year_min=2012, year_max=2016)
    base = Filters(year_min=2014, collections=("guidelines",))
    assert parsed.filters(base) == Filters(year_min=2014, year_max=2016, collections=("guidelines",))
    assert parse_temporal("SSI trials", TODAY).filters(base) == base


CLASSES = [
    ("What is MRSA?", "definition"),
    ("What is a Whipple procedure?", "definition"),
    ("What are surgical site infections?", "definition"),
    ("Define delirium", "definition"),
    ("What does ASA stand for?", "definition"),
    ("What is meant by frailty?", "definition"),
    ("What is the recommended dose of cefazolin in obese patients?", "guideline"),
    ("What does the WHO guideline say about hair removal?", "guideline"),
    ("What is the ERAS protocol for colectomy?", "guideline"),
    ("What is best practice for hand hygiene?", "guideline"),
    ("Is CHG better than povidone-iodine for SSI after colectomy?", "clinical-specific"),
    ("cefazolin 2 g vs 3 g in patients over 120 kg", "clinical-specific"),
    ("What is the risk of SSI after cholecystectomy?", "clinical-specific"),
    ("Does tranexamic acid reduce bleeding in hip arthroplasty?", "clinical-specific"),
    ("How do I prepare for an operation?", "general"),
    ("Should I stop aspirin before surgery?", "general"),
    ("What is the best way to teach surgical residents?", "general"),
]


@pytest.mark.parametrize(("question", "expected"), CLASSES)
def test_classify(question: str, expected: str) -> None:
    assert classify(question) == expected
    assert rule_alpha(classify(question)) == SEED_ALPHA[expected]


def test_seed_alpha_orders_the_classes() -> None:
    assert set(SEED_ALPHA) == set(QUERY_CLASSES)
    # Exact terms matter more for guideline and clinically specific questions, meaning for definitions.
    assert SEED_ALPHA["guideline"] < SEED_ALPHA["general"] < SEED_ALPHA["definition"]
    assert SEED_ALPHA["clinical-specific"] < SEED_ALPHA["general"]


def test_clinical_terms() -> None:
    assert clinical_terms("CHG 2% vs povidone-iodine for SSI after colectomy in 2 patients") == [
        "2%",
        "CHG",
        "povidone-iodine",
        "SSI",
        "colectomy",
    ]
    assert clinical_terms("cefazolin 2 g or 30 mg/kg, dose by weight") == [
        "2 g",
        "30 mg/kg",
        "cefazolin",
        "dose",
    ]
    assert clinical_terms("How do I prepare for an operation?") == []


def test_learned_alpha_looks_up_the_class() -> None:
    table = {"definition": 0.9, "general": 0.45}
    assert learned_alpha(classify("What is MRSA?"), table, default=0.5) == 0.9
    assert learned_alpha(classify("How do I prepare for an operation?"), table, default=0.5) == 0.45
    assert learned_alpha(classify("Is CHG better than iodine for SSI?"), table, default=0.5) == 0.5
    with pytest.raises(ValueError, match="outside"):
        learned_alpha(classify("What is MRSA?"), {"definition": 1.5}, default=0.5)


@pytest.mark.parametrize(
    ("question", "text_kept", "year_min", "year_max"),
    [
        ("In 2010, how many cases of tuberculosis were estimated in China?", True, 2010, None),
        ("What was the prevalence in Shandong in 2010?", True, 2010, None),
        ("How many surgical site infections occurred between 2012 and 2016?", True, 2012, None),
        ("Which outbreaks happened before 2010?", True, None, None),
        ("How has the childhood population grown in the last two decades?", True, None, None),
        ("Studies since 2015 on chlorhexidine skin preparation", False, 2015, None),
        ("What do guidelines published before 2010 say about shaving?", False, None, 2009),
        ("What is the evidence from the last 5 years on tranexamic acid?", False, 2022, None),
        ("trials in 2016 on antibiotic prophylaxis", False, 2016, 2016),
    ],
)
def test_scope_separates_evidence_dates_from_event_dates(question, text_kept, year_min, year_max):
    read = scoped(parse_temporal(question, TODAY), question)
    assert (read.text == question) is text_kept
    assert (read.year_min, read.year_max) == (year_min, year_max)
    assert read.scope == ("event" if text_kept else "publication")


def test_scope_leaves_questions_without_time_alone():
    question = "Can chlorhexidine gluconate be used on mucous membranes?"
    assert scoped(parse_temporal(question, TODAY), question) == Temporal(text=question)
