import gzip
import json
import time
from pathlib import Path

from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, load

GOOD = {
    "doc_id": "x1",
    "title": "T",
    "year": 2019,
    "sections": [{"heading": "A", "paragraphs": ["Text one.", "Text two."]}],
}


def _lines(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines))
    return path


def test_reads_documents_with_sections_and_paragraphs(tmp_path):
    [doc] = load(_lines(tmp_path / "a.jsonl", json.dumps(GOOD)))
    assert isinstance(doc, Document)
    assert (doc.doc_id, doc.year, doc.source) == ("x1", 2019, str(tmp_path / "a.jsonl"))
    assert [p.text for p in doc.paragraphs()] == ["Text one.", "Text two."]


def test_gzip_is_read_whatever_the_name(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(GOOD) + "\n").encode()))
    assert [d.doc_id for d in load(path)] == ["x1"]


def test_each_bad_line_is_one_clear_error_and_the_rest_loads(tmp_path):
    path = _lines(
        tmp_path / "a.jsonl",
        json.dumps(GOOD),
        "{not json",
        json.dumps({"title": "no id", "sections": []}),
        json.dumps({**GOOD, "doc_id": "x2", "year": "2019"}),
        json.dumps({**GOOD, "doc_id": "x3", "sections": [{"heading": "A", "paragraphs": [""]}]}),
        b'{"doc_id": "x4", "title": "\xff"}',
        json.dumps([1, 2]),
        json.dumps({**GOOD, "doc_id": "x5", "sections": [{"heading": "A", "paragraphs": [{"oops": 1}]}]}),
        json.dumps({**GOOD, "doc_id": "x6"}),
    )
    items = list(load(path))
    assert [i.doc_id for i in items if isinstance(i, Document)] == ["x1", "x6"]
    errors = [str(i) for i in items if isinstance(i, LoadError)]
    assert errors == [
        f"{path}:2: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{path}:3: missing 'doc_id'",
        f"{path}:4: 'year' must be a whole number",
        f"{path}:5: document 'x3' has no text",
        f"{path}:6: not UTF-8 (byte 27)",
        f"{path}:7: not a JSON object",
        f"{path}:8: each paragraph must be a string",
    ]


def test_a_stated_evidence_type_is_kept_and_an_unknown_one_is_named(tmp_path):
    path = _lines(
        tmp_path / "a.jsonl",
        json.dumps({**GOOD, "evidence_type": "guideline", "evidence_reason": "rules: forged"}),
        json.dumps({**GOOD, "doc_id": "x2", "evidence_type": "level 1a"}),
    )
    doc, error = list(load(path))
    assert isinstance(doc, Document) and (doc.evidence_type, doc.evidence_reason) == ("guideline", None)
    assert str(error) == (
        f"{path}:2: 'evidence_type' must be one of guideline, systematic-review, rct, observational, "
        "case-report, narrative-review, patient-information, other"
    )


def test_stated_supersessions_are_kept_and_a_malformed_one_is_named(tmp_path):
    path = _lines(
        tmp_path / "a.jsonl",
        json.dumps({**GOOD, "supersedes": ["cg74"]}),
        json.dumps({**GOOD, "doc_id": "x2", "supersedes": "cg74"}),
        json.dumps({**GOOD, "doc_id": "x3", "supersedes": ["cg74", 7]}),
        json.dumps({**GOOD, "doc_id": "x4", "supersedes": ["x4"]}),
    )
    doc, *errors = list(load(path))
    assert isinstance(doc, Document) and doc.supersedes == ["cg74"]
    assert [str(e) for e in errors] == [
        f"{path}:2: 'supersedes' must be a list",
        f"{path}:3: 'supersedes' must be a list of doc_ids",
        f"{path}:4: a document cannot supersede itself",
    ]


def test_truncated_gzip_keeps_what_came_before(tmp_path):
    whole = gzip.compress(
        "".join(json.dumps({**GOOD, "doc_id": f"d{i}"}) + "\n" for i in range(2000)).encode()
    )
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    items = list(load(path))
    assert isinstance(items[-1], LoadError) and "compressed data is damaged" in str(items[-1])
    assert sum(isinstance(i, Document) for i in items) > 10


def test_real_library_files(library_dir: Path):
    counts = {}
    for path in sorted(library_dir.glob("*.jsonl*")):
        items = list(load(path))
        assert not [i for i in items if isinstance(i, LoadError)], path
        counts[path.name] = len(items)
    assert counts == {
        "covidqa_articles.jsonl": 82,
        "general_wikipedia_passages.jsonl.gz": 2600,
        "medquad_nih.jsonl.gz": 5486,
        "pubmedqa_abstracts.jsonl": 1000,
    }


def test_a_long_run_of_capitals_without_a_colon_is_read_at_once(tmp_path):
    # A DoS guard: a label pattern whose separators could split a run of spaces two ways took
    # seconds at 20 words and doubled with each one more.
    text = "It was safe.AAA" + "  BB" * 28 + " end"
    path = _lines(
        tmp_path / "a.jsonl", json.dumps({**GOOD, "sections": [{"heading": "A", "paragraphs": [text]}]})
    )
    started = time.perf_counter()
    doc, *_ = load(path)
    assert time.perf_counter() - started < 5
    assert isinstance(doc, Document) and [p.text for p in doc.paragraphs()] == [text]


def test_what_a_table_export_leaves_in_a_paragraph_is_not_read_as_its_text(tmp_path):
    # The shared COVID-QA articles without an abstract carry it as "nan"; ingested, it was found and
    # quoted as the article's abstract. "None" is a real paragraph (no competing interests). Some
    # PubMed abstracts keep the colon of a label split off their section (": Prophylactic …"), a
    # label run into the sentence before it ("purpose.AIM: To …") or half a label ("high.QUESTIONS/").
    sections = [
        {"heading": "Abstract", "paragraphs": ["nan"]},
        {
            "heading": "Body",
            "paragraphs": [
                " NaN ",
                {"text": "<NA>"},
                "Text one.",
                {"text": ": Found.", "page": 2},
                "Used for this purpose.AIM: To update it.",
                "Rates are high.QUESTIONS/",
                "It was safe.STUDY DESIGN/",
                "It was safe. MATERIALS &",
                "In the U.S.A: Not a label. NHS.CODE: kept.",
            ],
        },
        {"heading": "Competing interests", "paragraphs": ["None", ","]},
    ]
    path = _lines(
        tmp_path / "a.jsonl",
        json.dumps({**GOOD, "sections": sections}),
        json.dumps({**GOOD, "doc_id": "x2", "sections": [{"heading": "Abstract", "paragraphs": ["nan"]}]}),
    )
    doc, error = load(path)
    assert isinstance(doc, Document)
    assert [(p.text, p.page) for p in doc.paragraphs()] == [
        ("Text one.", None),
        ("Found.", 2),
        ("Used for this purpose. To update it.", None),
        ("Rates are high.", None),
        ("It was safe.", None),
        ("It was safe.", None),
        ("In the U.S.A: Not a label. NHS.CODE: kept.", None),
        ("None", None),
    ]
    assert str(error) == f"{path}:2: document 'x2' has no text"
