import sqlite3

import pytest

from evidenceqa import evidence_types
from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.library.catalogue import MIGRATIONS, Catalogue


def _doc(doc_id: str = "d1", text: str = "Hand hygiene prevents infection.") -> Document:
    return Document(
        doc_id=doc_id, title="T", year=2020, collection="c", sections=[Section("S", [Paragraph(text)])]
    )


def _put(catalogue: Catalogue, doc: Document) -> None:
    chunks = chunk_document(doc, ChunkingConfig())
    catalogue.put_document(doc, chunks, doc.content_hash(), "sig")


def test_migrations_run_once_and_are_recorded(tmp_path):
    path = tmp_path / "cat.sqlite3"
    with Catalogue(path) as catalogue:
        assert catalogue.index_version == 0
    with Catalogue(path):
        pass
    rows = sqlite3.connect(path).execute("SELECT number FROM _migrations").fetchall()
    assert rows == [(n,) for n in range(1, len(MIGRATIONS) + 1)]


def test_document_and_chunks_round_trip(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        doc = _doc()
        with catalogue.transaction():
            _put(catalogue, doc)
            catalogue.bump_version()
        assert catalogue.load_document("d1") == doc
        assert list(catalogue.chunks("d1")) == chunk_document(doc, ChunkingConfig())
        assert catalogue.document("d1").chunks == 2
        assert catalogue.summary() == [("c", 1, 2, 2020, 2020)]
        assert catalogue.changes_since(0) == [(1, "d1", "upsert")]


def test_metadata_is_read_without_the_full_text(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        doc = _doc()
        with catalogue.transaction():
            _put(catalogue, doc)
        found = catalogue.document_metadata(["d1", "d1", "missing"])
        assert list(found) == ["d1"]
        assert found["d1"].title == "T" and found["d1"].year == 2020 and found["d1"].sections == []


def test_each_collections_document_types_are_listed(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        with catalogue.transaction():
            for doc_id, collection, doc_type in [("a", "c", "guideline"), ("b", "c", "guideline"),
                                                 ("e", "c", "journal-article"), ("f", "x", "web-page")]:  # fmt: skip
                doc = _doc(doc_id)
                doc.collection, doc.doc_type = collection, doc_type
                _put(catalogue, doc)
        assert catalogue.doc_types() == {"c": ["guideline", "journal-article"], "x": ["web-page"]}


def test_a_failed_transaction_leaves_the_previous_state(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        with catalogue.transaction():
            _put(catalogue, _doc(text="old text."))
            catalogue.bump_version()
        with pytest.raises(RuntimeError), catalogue.transaction():
            _put(catalogue, _doc(text="new text."))
            catalogue.delete_document("d1")
            catalogue.bump_version()
            raise RuntimeError("crash in the middle")
        assert catalogue.load_document("d1").sections[0].paragraphs[0].text == "old text."
        assert catalogue.index_version == 1
        assert [c.body for c in catalogue.chunks("d1")][-1] == "old text."


def test_deleting_a_document_deletes_its_chunks(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        with catalogue.transaction():
            _put(catalogue, _doc("a"))
            _put(catalogue, _doc("b"))
            assert catalogue.delete_document("a") is True
            assert catalogue.delete_document("missing") is False
            catalogue.bump_version()
        assert {c.doc_id for c in catalogue.chunks()} == {"b"}
        assert [op for _, _, op in catalogue.changes_since(0)] == ["upsert", "upsert", "delete"]


def test_term_statistics_follow_every_put_replace_and_delete(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        with catalogue.transaction():
            _put(catalogue, _doc("a", "Chlorhexidine prevents infection."))
            _put(catalogue, _doc("b", "Hand hygiene prevents infection."))
        # The overview chunks are not counted: content search never ranks them.
        assert catalogue.term_frequencies(["infect", "chlorhexidin", "hand", "absent"]) == (
            2,
            {"infect": 2, "chlorhexidin": 1, "hand": 1},
        )
        with catalogue.transaction():
            _put(catalogue, _doc("a", "Povidone iodine prevents infection."))  # replaced
        assert catalogue.term_frequencies(["chlorhexidin", "povidon", "infect"]) == (
            2,
            {"povidon": 1, "infect": 2},
        )
        with catalogue.transaction():
            catalogue.delete_document("b")
        assert catalogue.term_frequencies(["hand", "infect"]) == (1, {"infect": 1})


def test_a_catalogue_from_before_term_statistics_gets_them_counted(tmp_path):
    path = tmp_path / "c.sqlite3"
    with Catalogue(path) as catalogue, catalogue.transaction():
        _put(catalogue, _doc("a", "Chlorhexidine prevents infection."))
    db = sqlite3.connect(path)  # back to the schema before the term statistics
    db.executescript(
        "DROP TABLE term_df; DELETE FROM state WHERE key = 'term_chunks'; DELETE FROM _migrations WHERE number IN (3, 4);"
    )
    db.close()
    with Catalogue(path) as catalogue:
        assert catalogue.term_frequencies(["chlorhexidin"]) == (1, {"chlorhexidin": 1})


def test_term_statistics_and_indexes_are_redone_when_the_text_analysis_changes(tmp_path):
    path = tmp_path / "c.sqlite3"
    with Catalogue(path) as catalogue, catalogue.transaction():
        _put(catalogue, _doc("a", "The anaesthetic was given."))
        catalogue.bump_version()
    db = sqlite3.connect(path)  # as counted by the analysis before spellings were folded
    db.executescript(
        "UPDATE term_df SET term = 'anaesthet' WHERE term = 'anesthet';"
        "UPDATE state SET value = '1' WHERE key = 'term_analysis';"
    )
    db.close()
    with Catalogue(path) as catalogue:
        assert catalogue.term_frequencies(["anaesthet", "anesthet"]) == (1, {"anesthet": 1})
        # Every index must write the document's keyword terms the new way: it is pending again.
        assert catalogue.index_version == 2 and catalogue.pending_since(1) == {"a": "upsert"}
    with Catalogue(path) as catalogue:
        assert catalogue.index_version == 2  # once per version of the analysis


TEMPLATE = "Sometimes, no information on frequency is available."


def test_sentence_statistics_count_documents_and_follow_every_put_replace_and_delete(tmp_path):
    with Catalogue(tmp_path / "c.sqlite3") as catalogue:
        with catalogue.transaction():
            # Twice in one document (two paragraphs, chunked apart) is still one document.
            _put(catalogue, _doc("a", f"Clipping is preferred. {TEMPLATE}\n\n{TEMPLATE}"))
            _put(catalogue, _doc("b", f"Shaving raises infection rates. {TEMPLATE}"))
        assert catalogue.sentence_documents([TEMPLATE, "Clipping is preferred.", "Never stored."]) == {
            TEMPLATE: 2,
            "Clipping is preferred.": 1,
        }
        # Case and spacing aside: the same words are the same sentence.
        assert catalogue.sentence_documents(["sometimes,  no information on frequency is available."]) == {
            "sometimes,  no information on frequency is available.": 2
        }
        with catalogue.transaction():
            _put(catalogue, _doc("a", "Clipping is preferred."))  # replaced, without the template
        assert catalogue.sentence_documents([TEMPLATE]) == {TEMPLATE: 1}
        with catalogue.transaction():
            catalogue.delete_document("b")
        assert catalogue.sentence_documents([TEMPLATE, "Clipping is preferred."]) == {
            "Clipping is preferred.": 1
        }


@pytest.mark.parametrize("before", ["the table", "other sentence rules"])
def test_sentence_statistics_are_counted_afresh_for_a_catalogue_from_before_them(tmp_path, before):
    path = tmp_path / "c.sqlite3"
    with Catalogue(path) as catalogue, catalogue.transaction():
        _put(catalogue, _doc("a", TEMPLATE))
        _put(catalogue, _doc("b", TEMPLATE))
        catalogue.bump_version()
    db = sqlite3.connect(path)
    if before == "the table":
        db.executescript(
            f"DROP TABLE sentence_df; DELETE FROM _migrations WHERE number = {len(MIGRATIONS)};"
            "DELETE FROM state WHERE key = 'sentence_rules';"
        )
    else:  # counted by rules that cut the bodies otherwise
        db.executescript(
            "UPDATE sentence_df SET df = 7; UPDATE state SET value = '0' WHERE key = 'sentence_rules';"
        )
    db.close()
    with Catalogue(path) as catalogue:
        assert catalogue.sentence_documents([TEMPLATE]) == {TEMPLATE: 2}
        assert catalogue.index_version == 1  # no index holds them: nothing to re-sync


def _trial(doc_id: str = "t") -> Document:
    text = "Patients were randomly assigned to chlorhexidine or povidone-iodine before surgery."
    return _doc(doc_id, text)


def test_a_catalogue_from_before_evidence_types_labels_and_reindexes_its_documents(tmp_path):
    path = tmp_path / "c.sqlite3"
    with Catalogue(path) as catalogue, catalogue.transaction():
        _put(catalogue, _trial())
        catalogue.bump_version()
    db = sqlite3.connect(path)  # back to the schema before evidence types
    db.executescript(
        "DROP INDEX documents_evidence; ALTER TABLE documents DROP COLUMN evidence_type;"
        "ALTER TABLE chunks DROP COLUMN evidence_type; DELETE FROM _migrations WHERE number = 5;"
        "DELETE FROM state WHERE key = 'evidence_rules';"
    )
    db.close()
    with Catalogue(path) as catalogue:
        assert catalogue.document("t").evidence_type == "rct"
        assert {c.evidence_type for c in catalogue.chunks("t")} == {"rct"}
        assert catalogue.load_document("t").evidence_reason == "rules: 'randomly assigned'"
        # The index must learn the new field: the document is pending again.
        assert catalogue.index_version == 2 and catalogue.pending_since(1) == {"t": "upsert"}
    with Catalogue(path) as catalogue:
        assert catalogue.index_version == 2  # once per version of the rules


def test_new_rules_relabel_what_the_rules_gave_and_keep_what_a_source_stated(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite3"
    stated = _trial("s")
    stated.evidence_type = "guideline"
    with Catalogue(path) as catalogue, catalogue.transaction():
        for doc in (_trial(), stated):
            evidence_types.label(doc)
            _put(catalogue, doc)
        catalogue.bump_version()
    monkeypatch.setattr(evidence_types, "RULES_VERSION", evidence_types.RULES_VERSION + 1)
    monkeypatch.setattr(evidence_types, "_TEXT_RULES", ())  # the new rules find no design
    with Catalogue(path) as catalogue:
        assert catalogue.document("t").evidence_type == "other"
        assert catalogue.document("s").evidence_type == "guideline"
        assert catalogue.pending_since(1) == {"t": "upsert"}
