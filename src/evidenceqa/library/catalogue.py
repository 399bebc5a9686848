"""The library catalogue: what was ingested, from where, and its chunks (SQLite, numbered migrations).

The catalogue is the source of truth; search indexes are built from it and can be rebuilt. Every
change is one transaction, so an interrupted ingest leaves the previous state. Each committed
change bumps `index_version` and logs which documents changed, so an index can catch up
incrementally and caches keyed by the version go stale at the right moment.

It also keeps, in the same transactions, how many content chunks hold each analysed term (the
document frequency BM25's idf is made of), so query-time signals can weigh a question's terms by
their rarity in this library without asking the engine (evidenceqa.retrieval.adaptive); and how
many documents carry each sentence word for word, so that an answer can tell a site's or a
publisher's template ("The frequency may also be listed as a fraction.", on 2,243 NIH pages) from
what one document says (evidenceqa.answer.extractive).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evidenceqa import evidence_types
from evidenceqa.documents import Chunk, Document
from evidenceqa.library import versions
from evidenceqa.library.versions import Successor
from evidenceqa.text.sentences import BODY_RULES_VERSION, body_sentences, sentence_key
from evidenceqa.text.tokens import ANALYSIS_VERSION, terms

# Chunks counted in the term statistics: the ones content search ranks (index.base.CONTENT_LEVELS).
_COUNTED_LEVELS = ("section", "paragraph")


def _count_all_terms(db: sqlite3.Connection) -> None:
    """Migration 3's data step: the term statistics of a catalogue ingested before they existed."""
    for (doc_id,) in db.execute("SELECT doc_id FROM documents").fetchall():
        _count_terms(db, doc_id, +1)


def _link_all_versions(db: sqlite3.Connection) -> None:
    """Migration 6: the tables that link versions of one document, filled for a catalogue ingested
    before they existed."""
    db.execute(
        "CREATE TABLE versions (doc_id TEXT PRIMARY KEY REFERENCES documents(doc_id) ON DELETE CASCADE, "
        "family TEXT NOT NULL, issuer TEXT NOT NULL, year INTEGER NOT NULL)"
    )
    db.execute("CREATE INDEX versions_family ON versions(family, issuer, year)")
    db.execute(
        "CREATE TABLE supersedes (newer TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE, "
        "older TEXT NOT NULL, PRIMARY KEY (older, newer)) WITHOUT ROWID"
    )
    for (data,) in db.execute("SELECT json_remove(data, '$.sections') FROM documents").fetchall():
        _put_versions(db, Document.from_dict(json.loads(data)))


def _put_versions(db: sqlite3.Connection, doc: Document) -> None:
    """One document's version links, replacing its earlier ones."""
    db.execute("DELETE FROM versions WHERE doc_id = ?", (doc.doc_id,))
    db.execute("DELETE FROM supersedes WHERE newer = ?", (doc.doc_id,))
    if key := versions.version_key(doc):
        db.execute("INSERT INTO versions VALUES (?, ?, ?, ?)", (doc.doc_id, *key, doc.year))
    db.executemany(
        "INSERT OR IGNORE INTO supersedes VALUES (?, ?)", [(doc.doc_id, old) for old in doc.supersedes]
    )


MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    """
    CREATE TABLE sources (
        path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, format TEXT,
        chunker TEXT NOT NULL, documents INTEGER NOT NULL, errors INTEGER NOT NULL,
        ingested_at TEXT NOT NULL);
    CREATE TABLE documents (
        doc_id TEXT PRIMARY KEY, source_path TEXT, title TEXT, year INTEGER, collection TEXT,
        doc_type TEXT, content_hash TEXT NOT NULL, chunker TEXT NOT NULL, chunks INTEGER NOT NULL,
        ingested_at TEXT NOT NULL, data TEXT NOT NULL);
    CREATE INDEX documents_source ON documents(source_path);
    CREATE INDEX documents_collection ON documents(collection);
    CREATE TABLE chunks (
        chunk_id TEXT PRIMARY KEY,
        doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
        position INTEGER NOT NULL, hierarchy_level TEXT NOT NULL, section_path TEXT NOT NULL,
        title TEXT, year INTEGER, collection TEXT, doc_type TEXT, topics TEXT NOT NULL,
        page INTEGER, text TEXT NOT NULL, body TEXT NOT NULL, content_hash TEXT NOT NULL);
    CREATE INDEX chunks_doc ON chunks(doc_id, position);
    CREATE TABLE changes (
        version INTEGER NOT NULL, doc_id TEXT NOT NULL, op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')));
    CREATE INDEX changes_version ON changes(version);
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO state VALUES ('index_version', '0');
    """,
    """
    CREATE TABLE abbreviations (
        doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
        abbr TEXT NOT NULL, long_form TEXT NOT NULL, PRIMARY KEY (doc_id, abbr, long_form));
    CREATE INDEX abbreviations_abbr ON abbreviations(abbr);
    """,
    """
    CREATE TABLE term_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO state VALUES ('term_chunks', '0');
    """,
    _count_all_terms,
    """
    ALTER TABLE documents ADD COLUMN evidence_type TEXT;
    ALTER TABLE chunks ADD COLUMN evidence_type TEXT;
    CREATE INDEX documents_evidence ON documents(evidence_type);
    """,
    _link_all_versions,
    """
    CREATE TABLE sentence_df (key INTEGER PRIMARY KEY, df INTEGER NOT NULL);
    """,
]
# The evidence-type rules the stored labels come from (`evidence_types.RULES_VERSION`).
_EVIDENCE_STATE = "evidence_rules"
# The text analysis the term statistics and the indexes' keyword terms were made with.
_ANALYSIS_STATE = "term_analysis"
# The rules the sentence statistics were cut with (`sentences.BODY_RULES_VERSION`).
_SENTENCE_STATE = "sentence_rules"

_DOC_COLUMNS = (
    "doc_id, source_path, title, year, collection, doc_type, content_hash, chunker, chunks, ingested_at, "
    "evidence_type"
)
_CHUNK_COLUMNS = (
    "chunk_id, doc_id, position, hierarchy_level, section_path, title, year, collection, doc_type, "
    "topics, page, text, body, content_hash, evidence_type"
)


@dataclass(frozen=True)
class SourceRecord:
    path: str
    sha256: str
    size: int
    chunker: str


@dataclass(frozen=True)
class DocumentRecord:
    doc_id: str
    source_path: str | None
    title: str | None
    year: int | None
    collection: str | None
    doc_type: str | None
    content_hash: str
    chunker: str
    chunks: int
    ingested_at: str
    evidence_type: str | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Catalogue:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)  # transactions are explicit
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("PRAGMA foreign_keys = ON")
        self._migrate()
        self._label_evidence()
        self._reanalyse()
        self._recount_sentences()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Catalogue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (number INTEGER PRIMARY KEY, applied_at TEXT)"
        )
        done = {row[0] for row in self.db.execute("SELECT number FROM _migrations")}
        for number, script in enumerate(MIGRATIONS, start=1):
            if number in done:
                continue
            with self.transaction():
                if callable(script):
                    script(self.db)
                else:
                    for statement in filter(str.strip, script.split(";")):
                        self.db.execute(statement)
                self.db.execute("INSERT INTO _migrations VALUES (?, ?)", (number, _now()))

    def _label_evidence(self) -> None:
        """Give every document the evidence type the current rules give it, once per version of the
        rules (a catalogue made before they existed included): a changed label is re-indexed."""
        if self.get_state(_EVIDENCE_STATE) == str(evidence_types.RULES_VERSION):
            return
        with self.transaction():
            for doc in list(self.iter_documents()):
                before = (doc.evidence_type, doc.evidence_reason)
                evidence_types.label(doc)
                if (doc.evidence_type, doc.evidence_reason) == before:
                    continue
                self.db.execute(
                    "UPDATE documents SET evidence_type = ?, content_hash = ?, data = ? WHERE doc_id = ?",
                    (doc.evidence_type, doc.content_hash(), json.dumps(doc.to_dict(), ensure_ascii=False),
                     doc.doc_id),
                )  # fmt: skip
                self.db.execute(
                    "UPDATE chunks SET evidence_type = ? WHERE doc_id = ?", (doc.evidence_type, doc.doc_id)
                )
                _put_versions(self.db, doc)  # only some kinds are linked by inference
                self._log(doc.doc_id, "upsert")
            self._redone(_EVIDENCE_STATE, evidence_types.RULES_VERSION)

    def _reanalyse(self) -> None:
        """Recount the term statistics when the text analysis has changed since they were counted
        (`tokens.ANALYSIS_VERSION`), and mark every document changed, so each index re-sync writes
        its keyword terms the new way and caches keyed by the index version go stale."""
        if self.get_state(_ANALYSIS_STATE) == str(ANALYSIS_VERSION):
            return
        with self.transaction():
            self.db.execute("DELETE FROM term_df")
            self.set_state("term_chunks", "0")
            _count_all_terms(self.db)
            self.db.execute("INSERT INTO changes SELECT 0, doc_id, 'upsert' FROM documents")
            self._redone(_ANALYSIS_STATE, ANALYSIS_VERSION)

    def _recount_sentences(self) -> None:
        """Count the sentence statistics afresh when the rules that cut chunk bodies into sentences
        have changed since they were counted (a catalogue made before they existed included); they
        change no index, only which sentences an answer finds templated."""
        if self.get_state(_SENTENCE_STATE) == str(BODY_RULES_VERSION):
            return
        with self.transaction():
            self.db.execute("DELETE FROM sentence_df")
            for (doc_id,) in self.db.execute("SELECT doc_id FROM documents").fetchall():
                _count_sentences(self.db, doc_id, +1)
            self.set_state(_SENTENCE_STATE, str(BODY_RULES_VERSION))

    def _redone(self, state: str, version: int) -> None:
        """After stored data was redone by `version` of some rules: the documents it changed become a
        new index version (indexes re-sync them), and the catalogue records the version."""
        if self.db.execute("SELECT 1 FROM changes WHERE version = 0 LIMIT 1").fetchone():
            self.bump_version()
        self.set_state(state, str(version))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: a crash or exception inside leaves the catalogue as it was before."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # Reads ------------------------------------------------------------------------------------

    @property
    def index_version(self) -> int:
        return int(self.db.execute("SELECT value FROM state WHERE key = 'index_version'").fetchone()[0])

    def get_state(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_state(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO state VALUES (?, ?)", (key, value))

    def source(self, path: str) -> SourceRecord | None:
        row = self.db.execute("SELECT path, sha256, size, chunker FROM sources WHERE path = ?", (path,))
        found = row.fetchone()
        return SourceRecord(**dict(found)) if found else None

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self.db.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return DocumentRecord(**dict(row)) if row else None

    def documents(self, collection: str | None = None) -> Iterator[DocumentRecord]:
        sql = f"SELECT {_DOC_COLUMNS} FROM documents"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection = ?", (collection,)
        for row in self.db.execute(sql + " ORDER BY doc_id", args):
            yield DocumentRecord(**dict(row))

    def doc_ids_from(self, source_path: str) -> set[str]:
        rows = self.db.execute("SELECT doc_id FROM documents WHERE source_path = ?", (source_path,))
        return {row[0] for row in rows}

    def load_document(self, doc_id: str) -> Document | None:
        row = self.db.execute("SELECT data FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return Document.from_dict(json.loads(row[0])) if row else None

    def document_metadata(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """Documents by id without their sections: what a citation needs, without parsing full text
        (a full-text article's JSON is hundreds of kB). Ids not in the catalogue are absent."""
        found: dict[str, Document] = {}
        for batch in _batches(sorted(set(doc_ids))):
            marks = ", ".join("?" * len(batch))
            sql = f"SELECT json_remove(data, '$.sections') FROM documents WHERE doc_id IN ({marks})"
            for (data,) in self.db.execute(sql, batch):
                document = Document.from_dict(json.loads(data))
                found[document.doc_id] = document
        return found

    def documents_as_found(self, found: Iterable[tuple[str, str | None]]) -> dict[str, Document]:
        """The (doc_id, title) pairs' documents by id, without sections; one gone from the library
        stands in as the title it was found with, so a citation is still named."""
        found = list(found)
        documents = self.document_metadata(doc_id for doc_id, _ in found)
        return {
            doc_id: documents.get(doc_id) or Document(doc_id=doc_id, title=title) for doc_id, title in found
        }

    def iter_documents(self, collection: str | None = None) -> Iterator[Document]:
        sql = "SELECT data FROM documents"
        args: tuple[str, ...] = ()
        if collection:
            sql, args = sql + " WHERE collection = ?", (collection,)
        for row in self.db.execute(sql + " ORDER BY doc_id", args):
            yield Document.from_dict(json.loads(row[0]))

    def chunks(self, doc_id: str | None = None) -> Iterator[Chunk]:
        sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks"
        args: tuple[str, ...] = ()
        if doc_id is not None:
            sql, args = sql + " WHERE doc_id = ?", (doc_id,)
        for row in self.db.execute(sql + " ORDER BY doc_id, position", args):
            yield _chunk_from_row(row)

    def next_chunk(self, chunk: Chunk) -> Chunk | None:
        """The chunk of the same document and level that follows `chunk`; None after its last."""
        row = self.db.execute(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE doc_id = ? AND hierarchy_level = ? AND position > ? "
            "ORDER BY position LIMIT 1",
            (chunk.doc_id, chunk.hierarchy_level, chunk.position),
        ).fetchone()
        return _chunk_from_row(row) if row else None

    def count_chunks(self, doc_ids: Iterable[str]) -> int:
        counts = dict(self.db.execute("SELECT doc_id, chunks FROM documents").fetchall())
        return sum(counts.get(doc_id, 0) for doc_id in doc_ids)

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]:
        """Chunks by id; ids not in the catalogue are absent from the result."""
        found: dict[str, Chunk] = {}
        for batch in _batches(chunk_ids):
            sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE chunk_id IN ({', '.join('?' * len(batch))})"
            found.update((row["chunk_id"], _chunk_from_row(row)) for row in self.db.execute(sql, batch))
        return found

    def chunk_years(self, chunk_ids: Sequence[str]) -> dict[str, int | None]:
        return self._chunk_column(chunk_ids, "year")

    def chunk_evidence_types(self, chunk_ids: Sequence[str]) -> dict[str, str | None]:
        return self._chunk_column(chunk_ids, "evidence_type")

    def _chunk_column(
        self, chunk_ids: Sequence[str], column: Literal["year", "evidence_type"]
    ) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for batch in _batches(chunk_ids):
            sql = f"SELECT chunk_id, {column} FROM chunks WHERE chunk_id IN ({', '.join('?' * len(batch))})"
            found.update(self.db.execute(sql, batch).fetchall())
        return found

    def superseded_by(self, doc_ids: Iterable[str]) -> dict[str, Successor]:
        """For each of `doc_ids` that a newer version replaces: the newest one. A stated link is
        followed to its end ("B replaces A", "C replaces B": A is superseded by C), also from the
        newest version by title family and issuer; a statement about a document wins over its
        title family."""
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, tuple[str, bool]] = {}
        for batch in _batches(wanted):
            marks = ", ".join("?" * len(batch))
            rows = self.db.execute(
                f"SELECT v.doc_id, n.doc_id FROM versions v JOIN versions n ON n.family = v.family "
                f"AND n.issuer = v.issuer AND n.year > v.year WHERE v.doc_id IN ({marks}) "
                f"ORDER BY v.doc_id, n.year, n.doc_id",
                batch,
            )
            for older, newest in rows.fetchall():  # the last row per document is its newest
                # The newest edition by title may itself be replaced by a stated successor.
                stated = self._stated_successor(newest)
                found[older] = (stated, True) if stated else (newest, False)
            replaced = self.db.execute(
                f"SELECT DISTINCT older FROM supersedes WHERE older IN ({marks})", batch
            )
            for (older,) in replaced.fetchall():
                if (stated := self._stated_successor(older)) is not None:
                    found[older] = (stated, True)
        records = self.document_metadata(newer for newer, _ in found.values())
        return {
            older: Successor(newer, records[newer].title, records[newer].year, stated)
            for older, (newer, stated) in found.items()
            if newer in records
        }

    def _stated_successor(self, doc_id: str) -> str | None:
        """The end of the chain of stated replacements that starts at `doc_id`, if any."""
        current, seen = doc_id, {doc_id}
        while row := self.db.execute(
            "SELECT s.newer FROM supersedes s JOIN documents d ON d.doc_id = s.newer WHERE s.older = ? "
            "ORDER BY d.year DESC, s.newer LIMIT 1",
            (current,),
        ).fetchone():
            if row[0] in seen:  # a cycle in the metadata: stop where it closes
                break
            current = row[0]
            seen.add(current)
        return None if current == doc_id else current

    def abbreviation_counts(self) -> dict[str, Counter[str]]:
        """Abbreviation → long form → number of documents that define it so."""
        mined: dict[str, Counter[str]] = {}
        rows = self.db.execute("SELECT abbr, long_form, COUNT(*) FROM abbreviations GROUP BY abbr, long_form")
        for abbr, long_form, count in rows:
            mined.setdefault(abbr, Counter())[long_form] = count
        return mined

    def term_frequencies(self, words: Iterable[str]) -> tuple[int, dict[str, int]]:
        """(content chunks in the library, analysed term → chunks holding it) for `words`; a term
        the library lacks is absent from the mapping."""
        wanted = sorted(set(words))
        found: dict[str, int] = {}
        for batch in _batches(wanted):
            marks = ", ".join("?" * len(batch))
            found.update(
                self.db.execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", batch).fetchall()
            )
        return int(self.get_state("term_chunks") or 0), found

    def sentence_documents(self, sentences: Iterable[str]) -> dict[str, int]:
        """How many documents carry each of `sentences` word for word (case and spacing aside); one
        no stored document carries is absent."""
        keys = {sentence_key(s): s for s in sentences}
        found: dict[str, int] = {}
        for batch in _batches(list(keys)):
            marks = ", ".join("?" * len(batch))
            rows = self.db.execute(f"SELECT key, df FROM sentence_df WHERE key IN ({marks})", batch)
            found.update((keys[key], df) for key, df in rows)
        return found

    def has_term_prefix(self, prefix: str) -> bool:
        """Whether any analysed term of the library starts with `prefix`."""
        row = self.db.execute(
            "SELECT 1 FROM term_df WHERE term >= ? AND term < ? LIMIT 1", (prefix, prefix + "\U0010ffff")
        ).fetchone()
        return row is not None

    def changes_since(self, version: int) -> list[tuple[int, str, str]]:
        rows = self.db.execute(
            "SELECT version, doc_id, op FROM changes WHERE version > ? ORDER BY version, rowid", (version,)
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def pending_since(self, version: int) -> dict[str, str]:
        """Each document changed after `version`, with its latest operation ('upsert' or 'delete')."""
        latest: dict[str, str] = {}
        for _, doc_id, op in self.changes_since(version):
            latest[doc_id] = op
        return latest

    def summary(self) -> list[tuple[str, int, int, int | None, int | None]]:
        """Per collection: documents, chunks, first year, last year."""
        rows = self.db.execute(
            "SELECT d.collection, COUNT(*), SUM(d.chunks), MIN(d.year), MAX(d.year) "
            "FROM documents d GROUP BY d.collection ORDER BY d.collection"
        )
        return [tuple(row) for row in rows]

    def doc_types(self) -> dict[str, list[str]]:
        """Per collection: the document types it holds."""
        return self._kinds("doc_type")

    def evidence_types(self) -> dict[str, list[str]]:
        """Per collection: the evidence types it holds."""
        return self._kinds("evidence_type")

    def _kinds(self, column: Literal["doc_type", "evidence_type"]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        rows = self.db.execute(
            f"SELECT DISTINCT collection, {column} FROM documents WHERE {column} IS NOT NULL "
            f"ORDER BY collection, {column}"
        )
        for collection, kind in rows:
            found.setdefault(collection, []).append(kind)
        return found

    def last_ingested(self) -> dict[str, str]:
        """Per collection: when a document of it was last ingested (ISO 8601, UTC)."""
        rows = self.db.execute("SELECT collection, MAX(ingested_at) FROM documents GROUP BY collection")
        return {row[0]: row[1] for row in rows}

    # Writes (call inside `transaction()`) -------------------------------------------------------

    def put_document(self, doc: Document, chunks: list[Chunk], content_hash: str, chunker: str) -> None:
        _count_terms(self.db, doc.doc_id, -1)
        _count_sentences(self.db, doc.doc_id, -1)
        self.db.execute("DELETE FROM documents WHERE doc_id = ?", (doc.doc_id,))
        self.db.execute(
            f"INSERT INTO documents ({_DOC_COLUMNS}, data) VALUES ({', '.join('?' * 12)})",
            (
                doc.doc_id, doc.source, doc.title, doc.year, doc.collection, doc.doc_type,
                content_hash, chunker, len(chunks), _now(), doc.evidence_type,
                json.dumps(doc.to_dict(), ensure_ascii=False),
            ),
        )  # fmt: skip
        self.db.executemany(
            f"INSERT INTO chunks ({_CHUNK_COLUMNS}) VALUES ({', '.join('?' * 15)})",
            [_chunk_row(chunk) for chunk in chunks],
        )
        _count_terms(self.db, doc.doc_id, +1)
        _count_sentences(self.db, doc.doc_id, +1)
        _put_versions(self.db, doc)
        self._log(doc.doc_id, "upsert")

    def put_abbreviations(self, doc_id: str, pairs: Iterable[tuple[str, str]]) -> None:
        """The (abbreviation, long form) definitions found in one document, replacing earlier ones."""
        self.db.execute("DELETE FROM abbreviations WHERE doc_id = ?", (doc_id,))
        self.db.executemany("INSERT OR IGNORE INTO abbreviations VALUES (?, ?, ?)",
                            [(doc_id, abbr, long_form) for abbr, long_form in pairs])  # fmt: skip

    def delete_document(self, doc_id: str) -> bool:
        _count_terms(self.db, doc_id, -1)
        _count_sentences(self.db, doc_id, -1)
        deleted = self.db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,)).rowcount > 0
        if deleted:
            self._log(doc_id, "delete")
        return deleted

    def put_source(self, path: str, sha256: str, size: int, fmt: str | None, chunker: str,
                   documents: int, errors: int) -> None:  # fmt: skip
        self.db.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (path, sha256, size, fmt, chunker, documents, errors, _now()),
        )

    def forget_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path = ?", (path,))

    def bump_version(self) -> int:
        """Close the pending change set: the logged changes belong to the new version."""
        version = self.index_version + 1
        self.db.execute("UPDATE state SET value = ? WHERE key = 'index_version'", (str(version),))
        self.db.execute("UPDATE changes SET version = ? WHERE version = 0", (version,))
        return version

    def _log(self, doc_id: str, op: str) -> None:
        self.db.execute("INSERT INTO changes VALUES (0, ?, ?)", (doc_id, op))


def _count_terms(db: sqlite3.Connection, doc_id: str, sign: int) -> None:
    """Add (+1) or take away (−1) the terms of one stored document's content chunks."""
    frequency: Counter[str] = Counter()
    marks = ", ".join("?" * len(_COUNTED_LEVELS))
    rows = db.execute(f"SELECT text FROM chunks WHERE doc_id = ? AND hierarchy_level IN ({marks})",
                      (doc_id, *_COUNTED_LEVELS)).fetchall()  # fmt: skip
    for (text,) in rows:
        frequency.update(set(terms(text)))
    if not rows:
        return
    db.executemany(
        "INSERT INTO term_df VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
        [(term, sign * n) for term, n in frequency.items()],
    )
    if sign < 0:
        db.execute("DELETE FROM term_df WHERE df <= 0")
    db.execute("UPDATE state SET value = CAST(value AS INTEGER) + ? WHERE key = 'term_chunks'",
               (sign * len(rows),))  # fmt: skip


def _count_sentences(db: sqlite3.Connection, doc_id: str, sign: int) -> None:
    """Add (+1) or take away (−1) one stored document's sentences: each once, however many of its
    content chunks hold it."""
    marks = ", ".join("?" * len(_COUNTED_LEVELS))
    rows = db.execute(f"SELECT body FROM chunks WHERE doc_id = ? AND hierarchy_level IN ({marks})",
                      (doc_id, *_COUNTED_LEVELS)).fetchall()  # fmt: skip
    keys = {sentence_key(s.text) for (body,) in rows for s in body_sentences(body)}
    db.executemany(
        "INSERT INTO sentence_df VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET df = df + excluded.df",
        [(key, sign) for key in keys],
    )
    if sign < 0:
        db.execute("DELETE FROM sentence_df WHERE df <= 0")


def _batches(items: Sequence[Any], size: int = 900) -> Iterator[list[Any]]:
    """SQLite caps bound parameters per statement; stay well under it."""
    for i in range(0, len(items), size):
        yield list(items[i : i + size])


def _chunk_row(chunk: Chunk) -> tuple[object, ...]:
    return (
        chunk.chunk_id, chunk.doc_id, chunk.position, chunk.hierarchy_level,
        json.dumps(chunk.section_path, ensure_ascii=False), chunk.title, chunk.year, chunk.collection,
        chunk.doc_type, json.dumps(chunk.topics, ensure_ascii=False), chunk.page, chunk.text,
        chunk.body, chunk.content_hash, chunk.evidence_type,
    )  # fmt: skip


def _chunk_from_row(row: sqlite3.Row) -> Chunk:
    data = dict(row)
    data["section_path"] = json.loads(data["section_path"])
    data["topics"] = json.loads(data["topics"])
    return Chunk.from_dict(data)
