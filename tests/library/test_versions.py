"""Superseded guidance: versions linked by stated metadata or by title family, issuer and year.

The guideline pair is constructed (the shared library holds no two editions of one guideline),
written the way NICE titles its editions."""

import sqlite3

import pytest

from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.versions import Successor, title_family, version_key

TITLE = "Surgical site infections: prevention and treatment"


def guideline(doc_id: str, year: int, title: str = TITLE, journal: str | None = "NICE guideline",
              supersedes: list[str] | None = None, kind: str = "guideline") -> Document:  # fmt: skip
    text = f"Do not use hair removal routinely to reduce the risk of surgical site infection ({year})."
    return Document(doc_id=doc_id, title=title, year=year, journal=journal, evidence_type=kind,
                    supersedes=supersedes or [], sections=[Section("Recommendations", [Paragraph(text)])])  # fmt: skip


def put(catalogue: Catalogue, *docs: Document) -> None:
    with catalogue.transaction():
        for doc in docs:
            catalogue.put_document(doc, chunk_document(doc, ChunkingConfig()), doc.content_hash(), "sig")
        catalogue.bump_version()


@pytest.mark.parametrize(
    ("title", "family"),
    [
        (TITLE, "surgical site infections prevention and treatment"),
        (f"{TITLE} (2019 update)", "surgical site infections prevention and treatment"),
        (f"{TITLE}, 2nd edition", "surgical site infections prevention and treatment"),
        ("Antibiotic prophylaxis in surgery: version 2.1", "antibiotic prophylaxis in surgery"),
        ("Hand hygiene", None),  # too short to tell two documents apart
        (None, None),
    ],
)
def test_the_title_family_drops_what_changes_between_editions(title: str | None, family: str | None) -> None:
    assert title_family(title) == family


def test_only_reissued_kinds_with_an_issuer_and_a_year_are_linked_by_inference() -> None:
    assert version_key(guideline("g", 2019)) == (
        "surgical site infections prevention and treatment",
        "nice guideline",
    )
    assert version_key(guideline("g", 2019, kind="rct")) is None  # a trial is not reissued
    assert version_key(guideline("g", 2019, journal=None)) is None  # no issuer
    old = guideline("g", 2019)
    old.year = None
    assert version_key(old) is None


def test_the_newest_edition_supersedes_the_older_ones(tmp_path) -> None:
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        put(catalogue, guideline("cg74", 2008), guideline("ng125-2019", 2019, f"{TITLE} (2019 update)"),
            guideline("ng125-2020", 2020), guideline("other-body", 2021, journal="WHO guideline"))  # fmt: skip
        found = catalogue.superseded_by(["cg74", "ng125-2019", "ng125-2020", "other-body"])
        newest = Successor("ng125-2020", TITLE, 2020, stated=False)
        assert found == {"cg74": newest, "ng125-2019": newest}  # another issuer's is no version of it
        assert newest.label() == f"{TITLE} (2020)"
        with catalogue.transaction():  # the newest withdrawn: the 2019 edition is current again
            catalogue.delete_document("ng125-2020")
        assert catalogue.superseded_by(["cg74", "ng125-2019"]) == {
            "cg74": Successor("ng125-2019", f"{TITLE} (2019 update)", 2019, stated=False)
        }


def test_a_stated_replacement_is_followed_to_its_end_whatever_the_titles(tmp_path) -> None:
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        put(
            catalogue,
            guideline("a", 2010, "Preventing wound infection after operations", kind="other"),
            guideline("b", 2015, "Wound infection: prevention", supersedes=["a"], kind="other"),
            guideline("c", 2021, "Surgical wound infection guidance", supersedes=["b"], kind="other"),
        )
        found = catalogue.superseded_by(["a", "b", "c"])
        assert (
            found["a"] == found["b"] == Successor("c", "Surgical wound infection guidance", 2021, stated=True)
        )
        assert "c" not in found


def test_a_stated_successor_of_the_newest_edition_replaces_every_older_one(tmp_path) -> None:
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        put(catalogue, guideline("cg74", 2008), guideline("ng125", 2019),
            guideline("ng300", 2025, "Preventing surgical wound infection", supersedes=["ng125"]))  # fmt: skip
        found = catalogue.superseded_by(["cg74", "ng125"])
        assert {doc: s.doc_id for doc, s in found.items()} == {"cg74": "ng300", "ng125": "ng300"}
        assert found["cg74"].stated


def test_a_cycle_in_stated_replacements_ends(tmp_path) -> None:
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        put(catalogue, guideline("a", 2010, "Guide one to wounds", supersedes=["b"], kind="other"),
            guideline("b", 2012, "Guide two to wounds", supersedes=["a"], kind="other"))  # fmt: skip
        assert set(catalogue.superseded_by(["a", "b"])) == {"a", "b"}


def test_a_catalogue_from_before_versions_links_its_documents(tmp_path) -> None:
    path = tmp_path / "c.sqlite3"
    with Catalogue(path) as catalogue:
        put(catalogue, guideline("cg74", 2008), guideline("ng125", 2019))
    db = sqlite3.connect(path)  # back to the schema before versions
    db.executescript("DROP TABLE versions; DROP TABLE supersedes; DELETE FROM _migrations WHERE number = 6;")
    db.close()
    with Catalogue(path) as catalogue:
        assert catalogue.superseded_by(["cg74"])["cg74"].doc_id == "ng125"
