"""Documents in, candidate pairs out: extract, label, map to gold sources."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from evidenceqa.curation.candidates import Candidate, candidate_id
from evidenceqa.curation.extract import extract_pairs
from evidenceqa.curation.mapping import Mapper, source_only
from evidenceqa.curation.metadata import metadata_of
from evidenceqa.documents import Document


def build_candidates(
    documents: Iterable[Document],
    mapper: Mapper | None = None,
    on_document: Callable[[Document, int], None] | None = None,
) -> Iterator[Candidate]:
    """Every pair of every document, once: the same article from a second file (its PDF after its
    JATS) has the same doc_id and questions, so it adds nothing. Without a mapper, a pair's only gold
    source is its own document."""
    seen: set[str] = set()
    for doc in documents:
        added = 0
        for pair in extract_pairs(doc):
            cid = candidate_id(doc.doc_id, pair.question)
            if cid in seen:
                continue
            seen.add(cid)
            added += 1
            sources = mapper.sources(pair, doc) if mapper else [source_only(pair, doc)]
            yield Candidate(
                candidate_id=cid,
                question=pair.question,
                answer=pair.answer,
                doc_id=doc.doc_id,
                title=doc.title,
                pattern=pair.pattern,
                location=pair.location,
                metadata=metadata_of(pair.question, pair.answer, doc),
                sources=sources,
            )
        if on_document:
            on_document(doc, added)
