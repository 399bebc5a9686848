import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidenceqa.documents import Document
from evidenceqa.library.vocabulary import (
    Expansion,
    ShorthandError,
    Vocabulary,
    build_vocabulary,
    clinical_shorthand,
    library_shorthand,
    mine_abbreviations,
    ranked_long_forms,
    read_shorthand,
    vocabulary_from_counts,
)

DEFINITIONS = [
    ("The rate of surgical site infection (SSI) fell.", "SSI", "surgical site infection"),
    ("Staff in the operating room (OR) wore masks.", "OR", "operating room"),
    ("Skin was prepared with chlorhexidine gluconate (CHG) in alcohol.", "CHG", "chlorhexidine gluconate"),
    (
        "Carriers of methicillin-resistant Staphylococcus aureus (MRSA) were screened.",
        "MRSA",
        "methicillin-resistant Staphylococcus aureus",
    ),
    ("Risk of deep vein thrombosis (DVT) after TKA.", "DVT", "deep vein thrombosis"),
    ("Cases of 2019 novel coronavirus (2019-nCoV) rose.", "2019-nCoV", "2019 novel coronavirus"),
    ("We used the Kyoto Encyclopedia of Genes and Genomes (KEGG).", "KEGG", "Kyoto Encyclopedia of Genes and Genomes"),
    ("Personal protective equipment (PPE) was worn.", "PPE", "Personal protective equipment"),
    ("The World Health Organization's (WHO) advice", "WHO", "World Health Organization"),
    ("Longer time to antibiotic (TTA) raised mortality.", "TTA", "time to antibiotic"),  # "to" is no start
    # The abbreviation first, its long form in the parenthesis.
    ("MRSA (methicillin-resistant Staphylococcus aureus) is common.", "MRSA", "methicillin-resistant Staphylococcus aureus"),
    ("Admission to the ICU (intensive care unit) was rare.", "ICU", "intensive care unit"),
    # Plurals are stored singular.
    ("Patients in intensive care units (ICUs) were older.", "ICU", "intensive care unit"),
    ("Quality-adjusted life years (QALYs) gained", "QALY", "Quality-adjusted life year"),
    ("Respiratory viruses such as human coronaviruses (HCoVs) circulate.", "HCoV", "human coronavirus"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "abbr", "long"), DEFINITIONS)
def test_mines_definitions(text: str, abbr: str, long: str) -> None:
    assert mine_abbreviations([text]) == {abbr: Counter({long: 1})}


JUNK = [
    "Rates differed (p < 0.05) in 20 patients (n = 20).",
    "As shown in panel (A) and (2015) and (Table 1).",
    "Cells were bought (Invitrogen) and stained (Fig 2).",
    "Antiseptics (e.g. CHG) and (i.e. iodine) were compared.",
    "Odds ratio (OR 1.5, 95% CI 1.1-2.0) for SSI.",
    "A very long phrase that goes on and on about nothing at all really (VLPTGOOANAAR).",
    "Symptoms of depression (OR) were common.",  # a stop word cannot start the long form
    "Among occasional partners (OR) it was rare.",  # "partners" gives no initial to "OR"
    "This happened once (XYZ).",
    "Hb (hemoglobin) and TXA (given) were measured.",  # one-word long forms need the usual order
]


@pytest.mark.parametrize("text", JUNK)
def test_rejects_junk(text: str) -> None:
    assert mine_abbreviations([text]) == {}


def test_long_form_stops_at_the_clause() -> None:
    text = "After surgery, site infection (SI) was seen; the rate of surgical site infection (SSI) fell."
    assert mine_abbreviations([text]) == {
        "SI": Counter({"site infection": 1}),
        "SSI": Counter({"surgical site infection": 1}),
    }


def test_counts_each_text_once() -> None:
    once = "Surgical site infection (SSI) is common. Surgical site infection (SSI) costs."
    other = "The surgical site infections (SSI) were treated."
    assert mine_abbreviations([once, other]) == {
        "SSI": Counter({"Surgical site infection": 1, "surgical site infections": 1})
    }


@given(st.text(max_size=200))
def test_mining_arbitrary_text_yields_abbreviation_shapes(text: str) -> None:
    for abbr, forms in mine_abbreviations([text, f"({text})", f"{text} (AB)"]).items():
        letters = [c for c in abbr if c.isalpha()]
        assert len(letters) >= 2 and any(c.isupper() for c in letters)
        assert all(0 < len(long.split()) <= 8 for long in forms)


def test_ranked_long_forms_merge_variants() -> None:
    forms = Counter({"odds ratio": 3, "Odds Ratio": 1, "odds ratios": 2, "operating room": 2})
    assert ranked_long_forms(forms) == [("odds ratio", 6), ("operating room", 2)]
    viruses = Counter({"Respiratory syncytial viruses": 1, "respiratory syncytial virus": 1})
    assert ranked_long_forms(viruses) == [("respiratory syncytial virus", 2)]
    hyphens = Counter({"next-generation sequencing": 1, "Next Generation Sequencing": 1})
    assert ranked_long_forms(hyphens) == [("next-generation sequencing", 2)]


def _texts(*definitions: str, times: int = 2) -> list[str]:
    return [d for d in definitions for _ in range(times)]


def test_build_vocabulary_min_count_and_ambiguity() -> None:
    texts = [
        *_texts(
            "Surgical site infection (SSI) rates.",
            "Staff in the operating room (OR) wore masks.",
            "Alzheimer's disease (AD) and atopic dermatitis (AD).",  # defined equally often two ways
        ),
        "Deep vein thrombosis (DVT) once.",
    ]
    vocabulary = build_vocabulary(texts)
    assert vocabulary.terms == {"OR": "operating room", "SSI": "Surgical site infection"}
    assert vocabulary.counts == {"OR": 2, "SSI": 2}
    assert build_vocabulary(texts, min_count=1).terms["DVT"] == "Deep vein thrombosis"
    assert "AD" not in build_vocabulary(texts, min_count=1).terms


VOCABULARY = Vocabulary(
    terms={
        "OR": "operating room",
        "SSI": "surgical site infection",
        "CHG": "chlorhexidine gluconate",
        "MRSA": "methicillin-resistant Staphylococcus aureus",
        "SARS": "severe acute respiratory syndrome",
        "SARS-CoV-2": "severe acute respiratory syndrome coronavirus 2",
        "ICU": "intensive care unit",
        "IL": "interleukin",
    },
    counts={"OR": 5, "SSI": 9, "CHG": 3, "MRSA": 4, "SARS": 3, "SARS-CoV-2": 6, "ICU": 7, "IL": 2},
)

EXPANSIONS = [
    ("OR attire", "OR attire operating room", [("OR", "operating room")]),
    ("Does CHG prevent SSI?", "Does CHG prevent SSI? chlorhexidine gluconate surgical site infection",
     [("CHG", "chlorhexidine gluconate"), ("SSI", "surgical site infection")]),
    # The reverse: a long form brings its abbreviation.
    ("Surgical site infections after colectomy", "Surgical site infections after colectomy SSI",
     [("SSI", "surgical site infection")]),
    ("surgical site infection or surgical site infections?", "surgical site infection or surgical site infections? SSI",
     [("SSI", "surgical site infection")]),
    ("Methicillin resistant Staphylococcus aureus carriage", "Methicillin resistant Staphylococcus aureus carriage MRSA",
     [("MRSA", "methicillin-resistant Staphylococcus aureus")]),
    ("chlorhexidine gluconate 2% for MRSA-positive patients",
     "chlorhexidine gluconate 2% for MRSA-positive patients methicillin-resistant Staphylococcus aureus CHG",
     [("MRSA", "methicillin-resistant Staphylococcus aureus"), ("CHG", "chlorhexidine gluconate")]),
    # The longest abbreviation wins; a hyphen before a capital or digit continues a name.
    ("SARS-CoV-2 in the ICU", "SARS-CoV-2 in the ICU severe acute respiratory syndrome coronavirus 2 intensive care unit",
     [("SARS-CoV-2", "severe acute respiratory syndrome coronavirus 2"), ("ICU", "intensive care unit")]),
    ("IL-6 after surgery", "IL-6 after surgery", []),
    # Case matters for abbreviations: "or" and "Or" are words.
    ("Shaving or clipping? Or neither?", "Shaving or clipping? Or neither?", []),
    ("ORs and SSIs", "ORs and SSIs", []),
    # Both forms already there: nothing to add.
    ("surgical site infection (SSI) rates", "surgical site infection (SSI) rates", []),
    ("", "", []),
]  # fmt: skip


@pytest.mark.parametrize(("question", "text", "added"), EXPANSIONS)
def test_expand(question: str, text: str, added: list[tuple[str, str]]) -> None:
    assert VOCABULARY.expand(question) == Expansion(text=text, added=added)


_WORDS = st.sampled_from(
    ["OR", "or", "SSI", "chlorhexidine", "gluconate", "2%", "ICU", "in", "the", "care", "unit"]
)


@given(st.lists(_WORDS, max_size=12).map(" ".join))
def test_expansion_keeps_the_question_verbatim(question: str) -> None:
    expansion = VOCABULARY.expand(question)
    assert expansion.text.startswith(question)
    assert len({abbr for abbr, _ in expansion.added}) == len(expansion.added)
    for abbr, long in expansion.added:
        assert VOCABULARY.terms[abbr] == long
    if not expansion.added:
        assert expansion.text == question


def test_json_round_trip() -> None:
    data = json.loads(json.dumps(VOCABULARY.to_json()))
    assert Vocabulary.from_json(data) == VOCABULARY
    assert data["terms"]["SSI"] == {"long_form": "surgical site infection", "count": 9}
    with pytest.raises(ValueError, match="format"):
        Vocabulary.from_json({**data, "format": 99})


def test_empty_vocabulary_expands_nothing() -> None:
    assert Vocabulary().expand("OR attire") == Expansion(text="OR attire")


# Clinical shorthand ------------------------------------------------------------------------------

SHORTHAND = {
    "TXA": "tranexamic acid",
    "MAP": "mean arterial pressure",
    "Hb": "hemoglobin",
    "SSI": "skin and soft-tissue infection",
    "lap": "laparoscopic",
}


@pytest.fixture
def shorthand(monkeypatch) -> Vocabulary:
    """The test vocabulary with shorthand; "map" and "lap" are English words, as the tests need."""
    monkeypatch.setattr(
        "evidenceqa.library.vocabulary.common_words", lambda: frozenset({"map", "the", "lap"})
    )
    return replace(VOCABULARY, shorthand=SHORTHAND)


SHORTHAND_EXPANSIONS = [
    ("TXA in hip surgery", [("TXA", "tranexamic acid")]),
    ("txa in hip surgery", [("TXA", "tranexamic acid")]),  # not an English word: any case
    ("MAP target in sepsis", [("MAP", "mean arterial pressure")]),
    ("map of the ward", []),  # an English word keeps its case
    ("Map of the ward", []),
    ("Lap or open repair?", [("lap", "laparoscopic")]),  # one listed in lower case may open a sentence
    ("LAP or open repair?", []),
    ("Hb after haemoglobin-guided transfusion", []),  # the long form is there, in the other spelling
    ("tranexamic acid (TXA) dose", []),
    # The library's own definition wins over the shipped one.
    ("SSI after TXA", [("SSI", "surgical site infection"), ("TXA", "tranexamic acid")]),
]  # fmt: skip


@pytest.mark.parametrize(("question", "added"), SHORTHAND_EXPANSIONS)
def test_shorthand_expands_what_the_library_does_not_define(shorthand, question, added) -> None:
    expansion = shorthand.expand(question)
    assert expansion.added == added
    assert expansion.text == " ".join([question, *(long for _, long in added)])


def test_without_a_list_of_english_words_every_shorthand_keeps_its_case(monkeypatch) -> None:
    monkeypatch.setattr("evidenceqa.library.vocabulary.common_words", frozenset)
    vocabulary = Vocabulary(shorthand=SHORTHAND)
    assert vocabulary.expand("txa in hip surgery").added == []
    assert vocabulary.expand("TXA in hip surgery").added == [("TXA", "tranexamic acid")]


def test_the_shipped_shorthand_list_is_what_a_library_gets() -> None:
    entries = clinical_shorthand()
    assert entries["TXA"] == "tranexamic acid" and entries["sux"] == "suxamethonium / succinylcholine"
    assert vocabulary_from_counts({}).shorthand == entries
    assert vocabulary_from_counts({}, shorthand={}).expand("TXA").added == []


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("TXA tranexamic acid\n", "shorthand.tsv:1: expected a shorthand, a tab and its long form"),
        ("# list\nTXA\t\n", "shorthand.tsv:2: expected a shorthand, a tab and its long form"),
        ("TXA\ttranexamic acid\ntxa\ttexas\n", "shorthand.tsv:2: 'txa' is listed twice"),
    ],
)
def test_a_malformed_shorthand_file_is_refused_with_its_line(tmp_path, content, error) -> None:
    path = tmp_path / "shorthand.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ShorthandError, match=error):
        read_shorthand(path)


def test_a_library_adds_its_own_shorthand_and_changes_a_listed_one(tmp_path) -> None:
    own = tmp_path / "shorthand.tsv"
    assert library_shorthand(None) == library_shorthand(own) == clinical_shorthand()  # no file of its own
    own.write_text("NELA\tnational emergency laparotomy audit\ntxa\ttexas\n", encoding="utf-8")
    merged = library_shorthand(own)
    assert merged["NELA"] == "national emergency laparotomy audit"
    assert merged["txa"] == "texas" and "TXA" not in merged  # one meaning per spelling, in any case
    assert merged["sux"] == clinical_shorthand()["sux"]
    own.write_text("NELA\tnational emergency laparotomy audit\n", encoding="utf-8")
    assert library_shorthand(own)["TXA"] == "tranexamic acid"  # an edited file is read again


def test_the_shorthand_fingerprint_follows_the_list() -> None:
    listed = Vocabulary(shorthand={"TXA": "tranexamic acid"})
    assert (
        listed.shorthand_fingerprint
        == Vocabulary(
            terms={"OR": "operating room"}, shorthand={"TXA": "tranexamic acid"}
        ).shorthand_fingerprint
    )
    assert listed.shorthand_fingerprint != Vocabulary(shorthand={"TXA": "texas"}).shorthand_fingerprint
    assert listed.shorthand_fingerprint != Vocabulary().shorthand_fingerprint


# The real library -------------------------------------------------------------------------------


def _document_texts(path: Path) -> Iterator[str]:
    """One text per document: counts are then documents that define an abbreviation."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            doc = Document.from_dict(json.loads(line))
            yield "\n".join(p.text for p in doc.paragraphs())


KNOWN_PAIRS = {
    "MERS": "Middle East respiratory syndrome",
    "ICU": "intensive care unit",
    "WHO": "World Health Organization",
    "BMI": "body mass index",
    "RSV": "respiratory syncytial virus",
    "PCR": "polymerase chain reaction",
    "CI": "confidence interval",
    "SARS": "severe acute respiratory syndrome",
    "2019-nCoV": "2019 novel coronavirus",
    "ARDS": "acute respiratory distress syndrome",
    "CABG": "coronary artery bypass grafting",
    "TKA": "total knee arthroplasty",
    "ECMO": "extracorporeal membrane oxygenation",
    "CLABSI": "central line-associated bloodstream infection",
    "QALY": "quality-adjusted life year",
}


def test_mines_the_real_library(library_dir: Path) -> None:
    started = time.perf_counter()
    texts = [
        text
        for name in ("covidqa_articles.jsonl", "pubmedqa_abstracts.jsonl")
        for text in _document_texts(library_dir / name)
    ]
    vocabulary = build_vocabulary(texts)
    assert time.perf_counter() - started < 10
    for abbr, long in KNOWN_PAIRS.items():
        assert vocabulary.terms.get(abbr) == long, abbr
    assert vocabulary.counts["CI"] >= 20 and vocabulary.counts["WHO"] >= 10
    assert vocabulary.terms["OR"] == "odds ratio"  # this library's OR; a surgical one would differ
    for abbr, long in vocabulary.terms.items():
        letters = [c for c in abbr if c.isalpha()]
        assert len(letters) >= 2 and any(c.isupper() for c in letters) and not abbr.isdigit(), abbr
        assert len(long.split()) <= 8 and long.split()[0].lower() not in {"of", "and", "the", "in"}, long
    mined = mine_abbreviations(texts)
    assert not {"Invitrogen", "Qiagen", "Table", "p<0.001", "A", "B"} & set(mined)
    assert "occasional partners" not in mined.get("OR", {})
    expanded = vocabulary.expand("Does ECMO improve survival in ARDS?")
    assert expanded.text == (
        "Does ECMO improve survival in ARDS? extracorporeal membrane oxygenation acute respiratory distress syndrome"
    )
