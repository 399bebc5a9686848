import pytest

from evidenceqa import evidence_types
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.loaders import LoadError, load


def _doc(*sections: tuple[str | None, str], title: str | None = None, **fields: object) -> Document:
    return Document(
        doc_id="d",
        title=title,
        sections=[Section(heading, [Paragraph(text)]) for heading, text in sections],
        **fields,  # type: ignore[arg-type]
    )


def _key(doc: Document) -> str:
    return evidence_types.classify(doc).key


def test_a_type_the_source_states_is_kept_and_an_unknown_one_is_not():
    trial = ("Methods", "Patients were randomly assigned to two groups.")
    assert evidence_types.classify(_doc(trial, evidence_type="guideline")) == evidence_types.Classification(
        "guideline", evidence_types.STATED
    )
    assert _key(_doc(trial, evidence_type="a very good study")) == "rct"


@pytest.mark.parametrize(
    ("doc_type", "expected"),
    [("case-report", "case-report"), ("patient-information", "patient-information"), ("correction", "other"),
     ("practice-guideline", "guideline"), ("editorial", "other")],
)  # fmt: skip
def test_the_metadata_type_decides_where_it_is_a_design(doc_type, expected):
    found = evidence_types.classify(
        _doc(("Methods", "We reviewed 300 charts retrospectively."), doc_type=doc_type)
    )
    assert found.key == expected and found.reason == f"metadata: type {doc_type}"


def test_a_review_article_is_narrative_unless_its_text_says_systematic():
    text = "Recent findings on wound healing are summarised."
    assert _key(_doc((None, text), doc_type="review-article")) == "narrative-review"
    searched = "We searched MEDLINE and Embase for trials of wound dressings."
    assert _key(_doc((None, searched), doc_type="review-article")) == "systematic-review"


def test_the_methods_decide_not_the_background_that_cites_other_designs():
    doc = _doc(
        ("Background", "Randomized trials and a meta-analysis found that shaving raises infection rates."),
        ("Methods", "We retrospectively reviewed the records of 412 patients undergoing spinal surgery."),
        ("Results", "Infection occurred in 3%."),
    )
    assert _key(doc) == "observational"


def test_a_trial_called_prospective_is_filed_as_a_trial():
    doc = _doc(("Methods", "In this prospective study, 120 patients were randomized to warming or not."))
    assert _key(doc) == "rct"


def test_a_study_of_guideline_adherence_is_not_a_guideline():
    methods = ("Methods", "We surveyed 200 surgeons by questionnaire.")
    assert _key(_doc(methods, title="Adherence to guidelines for antibiotic prophylaxis")) == "observational"
    assert _key(_doc(methods, title="Guidelines for antibiotic prophylaxis in surgery")) == "guideline"


def test_subject_terms_name_a_design_the_text_does_not():
    doc = _doc(("Methods", "Wound infection was recorded at 30 days."), topics=["Humans", "Cohort Studies"])
    found = evidence_types.classify(doc)
    assert found == evidence_types.Classification("observational", "rules: subject term 'cohort studies'")
    # "… as Topic" is what a study is about, not its design.
    about = _doc(
        ("Methods", "Wound infection was recorded."), topics=["Randomized Controlled Trials as Topic"]
    )
    assert _key(about) == "other"


def test_a_case_and_a_laboratory_study():
    case = _doc((None, "We report a case of a 64-year-old man with haemolysis after aortic repair."))
    assert _key(case) == "case-report"
    lab = _doc((None, "Vero cells were infected and viral titres measured by plaque assay."))
    assert evidence_types.classify(lab) == evidence_types.Classification(
        "other", "rules: no study design named"
    )


def test_label_records_the_type_and_why():
    doc = _doc(("Methods", "Patients were randomly allocated to early or late feeding."))
    evidence_types.label(doc)
    assert (doc.evidence_type, doc.evidence_reason) == ("rct", "rules: 'randomly allocated'")


def test_every_type_has_a_name_and_the_ranked_ones_are_in_order():
    assert evidence_types.type_name("rct") == "Randomised controlled trial"
    assert evidence_types.type_name(None) is None and evidence_types.type_name("x") is None
    ranked = [t.rank for t in evidence_types.TYPES if t.rank]
    assert ranked == sorted(ranked) == list(range(1, len(ranked) + 1))


def test_every_real_file_of_the_shared_formats_gets_a_type(formats_dir):
    labelled: dict[str, str] = {}
    for path in sorted(formats_dir.rglob("*")):
        if path.is_file() and path.suffix.lower() in {".xml", ".nxml", ".html", ".pdf"}:
            for doc in load(path):
                if not isinstance(doc, LoadError):
                    evidence_types.label(doc)
                    labelled[path.relative_to(formats_dir).as_posix()] = doc.evidence_type or ""
    assert len(labelled) > 30 and set(labelled.values()) <= set(evidence_types.KEYS)
    assert labelled["jats_xml/allofplos/journal.pone.0108198.xml"] == "other"  # a correction notice
    # The case reports: by their JATS article-type, and by the rules from their PDFs' text alone.
    for article in ("PMC4739218", "PMC4745277", "PMC4745350"):
        assert labelled[f"jats_xml/hindawi_epmc/{article}/fulltext.xml"] == "case-report"
        assert labelled[f"pdf/hindawi_epmc/{article}/fulltext.pdf"] == "case-report"
    assert labelled["pdf/bmc_trials/trials_16_1_19/fulltext.pdf"] == "rct"
