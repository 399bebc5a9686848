"""Cut documents into chunks, by one of five strategies, and measure what the cut loses.

- fixed-size: windows of N words over the whole text, blind to structure.
- section: one chunk per section.
- hybrid: one chunk per section; a section longer than N words falls back to fixed windows.
- hierarchical: a document overview chunk plus one chunk per section.
- hierarchical-paragraphs (default): the overview plus section content packed at paragraph
  boundaries up to the embedder's size; only a paragraph too long for the embedder is split, and
  then at sentence boundaries. A table is a chunk of its own, in its section; a long one is cut
  between rows, each part with the caption and the header row.

Every content chunk's `text` carries the document title and section path, so it can be understood
(and embedded) on its own; `body` holds the source text alone, for display and citation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from typing import Literal

from pydantic import BaseModel, Field

from evidenceqa.documents import Chunk, Document, HierarchyLevel, Paragraph, normalize_space, sha256_text
from evidenceqa.text.sentences import ends_sentence, split_sentences

# Bump when the cutting rules change, so re-ingest re-chunks documents made under the old rules.
CHUNKER_VERSION = 3
# An overview of a document without an abstract shows its first paragraphs, up to this many words.
_LEAD_WORDS = 300
_BULLET = re.compile(r"\s(?=[-•]\s)")
# Words compared at a chunk's end to decide whether it stops where a paragraph stops.
_TAIL_WORDS = 12


ChunkStrategy = Literal["fixed-size", "section", "hybrid", "hierarchical", "hierarchical-paragraphs"]


class ChunkingOptions(BaseModel):
    chunk_strategy: ChunkStrategy = "hierarchical-paragraphs"
    # ~180 words plus the title/section prefix stays within MiniLM's 256 word pieces.
    chunk_max_words: int = Field(180, ge=20, le=2000)
    fixed_chunk_words: int = Field(512, ge=20, le=4000)
    overview_max_words: int = Field(2000, ge=50, le=10000)


_DEFAULT = ChunkingOptions()


@dataclass(frozen=True)
class ChunkingConfig:
    strategy: str = _DEFAULT.chunk_strategy
    max_words: int = _DEFAULT.chunk_max_words
    fixed_words: int = _DEFAULT.fixed_chunk_words
    overview_max_words: int = _DEFAULT.overview_max_words

    @classmethod
    def of(cls, settings: ChunkingOptions, strategy: str | None = None) -> ChunkingConfig:
        """The chunking the settings describe, with `strategy` (if given) instead of theirs."""
        return cls(
            strategy=strategy or settings.chunk_strategy,
            max_words=settings.chunk_max_words,
            fixed_words=settings.fixed_chunk_words,
            overview_max_words=settings.overview_max_words,
        )

    def signature(self) -> str:
        """Identifies the chunks this config makes; stored with every ingested document."""
        return (
            f"v{CHUNKER_VERSION}:{self.strategy}:{self.max_words}:"
            f"{self.fixed_words}:{self.overview_max_words}"
        )


@dataclass
class _Piece:
    path: tuple[str, ...]
    body: str
    level: HierarchyLevel
    page: int | None


def chunk_document(doc: Document, config: ChunkingConfig) -> list[Chunk]:
    try:
        strategy = STRATEGIES[config.strategy]
    except KeyError:
        raise ValueError(
            f"unknown chunking strategy {config.strategy!r}; use one of {list(STRATEGIES)}"
        ) from None
    return _to_chunks(doc, strategy(doc, config))


def _sections(doc: Document) -> Iterator[tuple[tuple[str, ...], list[Paragraph]]]:
    for path, section in doc.walk():
        paragraphs = [p for p in section.paragraphs if p.text.strip()]
        if paragraphs:
            yield path, paragraphs


def _words(paragraphs: Iterable[Paragraph]) -> int:
    return sum(len(p.text.split()) for p in paragraphs)


def _join(paragraphs: list[Paragraph]) -> str:
    return "\n\n".join(p.text.strip() for p in paragraphs)


def _windows(paragraphs: list[Paragraph], size: int) -> Iterator[tuple[list[str], int | None]]:
    """Consecutive runs of `size` words, each with the page where it starts."""
    words: list[tuple[str, int | None]] = [(w, p.page) for p in paragraphs for w in p.text.split()]
    for start in range(0, len(words), size):
        window = words[start : start + size]
        yield [w for w, _ in window], window[0][1]


def fixed_size(doc: Document, config: ChunkingConfig) -> list[_Piece]:
    flat = [(path, p) for path, paragraphs in _sections(doc) for p in paragraphs]
    pieces: list[_Piece] = []
    offset = 0
    for words, page in _windows([p for _, p in flat], config.fixed_words):
        path = _path_at_word(flat, offset)
        pieces.append(_Piece(path, " ".join(words), "paragraph", page))
        offset += len(words)
    return pieces


def _path_at_word(flat: list[tuple[tuple[str, ...], Paragraph]], offset: int) -> tuple[str, ...]:
    seen = 0
    for path, paragraph in flat:
        seen += len(paragraph.text.split())
        if seen > offset:
            return path
    return flat[-1][0] if flat else ()


def section(doc: Document, config: ChunkingConfig) -> list[_Piece]:
    return [_Piece(path, _join(ps), "section", ps[0].page) for path, ps in _sections(doc)]


def hybrid(doc: Document, config: ChunkingConfig) -> list[_Piece]:
    pieces: list[_Piece] = []
    for path, paragraphs in _sections(doc):
        if _words(paragraphs) <= config.fixed_words:
            pieces.append(_Piece(path, _join(paragraphs), "section", paragraphs[0].page))
            continue
        for words, page in _windows(paragraphs, config.fixed_words):
            pieces.append(_Piece(path, " ".join(words), "paragraph", page))
    return pieces


def hierarchical(doc: Document, config: ChunkingConfig) -> list[_Piece]:
    return [overview(doc, config), *section(doc, config)]


def hierarchical_paragraphs(doc: Document, config: ChunkingConfig) -> list[_Piece]:
    pieces = [overview(doc, config)]
    for path, paragraphs in _sections(doc):
        has_table = any(p.kind == "table" for p in paragraphs)
        if _words(paragraphs) <= config.max_words and not has_table:
            pieces.append(_Piece(path, _join(paragraphs), "section", paragraphs[0].page))
            continue
        for is_table, run in groupby(paragraphs, key=lambda p: p.kind == "table"):
            items = list(run)
            groups = (
                [[part] for p in items for part in _fit(p, config.max_words)]
                if is_table
                else pack_paragraphs(items, config.max_words)
            )
            for group in groups:
                pieces.append(_Piece(path, _join(group), "paragraph", group[0].page))
    return pieces


def pack_paragraphs(paragraphs: list[Paragraph], max_words: int) -> list[list[Paragraph]]:
    """Greedy runs of whole paragraphs of at most `max_words` words.

    A paragraph longer than `max_words` is cut into sentence groups first; a single sentence
    longer than that (rare: tables flattened to text) is cut into word windows as a last resort.
    """
    groups: list[list[Paragraph]] = []
    current: list[Paragraph] = []
    size = 0
    for paragraph in (part for p in paragraphs for part in _fit(p, max_words)):
        words = len(paragraph.text.split())
        if current and size + words > max_words:
            groups.append(current)
            current, size = [], 0
        current.append(paragraph)
        size += words
    if current:
        groups.append(current)
    return groups


def _fit(paragraph: Paragraph, max_words: int) -> list[Paragraph]:
    if len(paragraph.text.split()) <= max_words:
        return [paragraph]
    if paragraph.kind == "table":
        return _table_parts(paragraph, max_words)
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in split_sentences(paragraph.text):
        for piece in _split_words(sentence, max_words):
            words = len(piece.split())
            if current and size + words > max_words:
                parts.append(" ".join(current))
                current, size = [], 0
            current.append(piece)
            size += words
    if current:
        parts.append(" ".join(current))
    return [Paragraph(text=part, page=paragraph.page, kind=paragraph.kind) for part in parts]


def _table_parts(table: Paragraph, max_words: int) -> list[Paragraph]:
    """A long table cut between rows; each part keeps the caption and the header row (and the
    last, the footnotes), so that every part names its columns."""
    lines = table.text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("|")]
    if len(starts) < 3:  # no rows below a header and its alignment row: cut as text
        return _fit(Paragraph(table.text, table.page), max_words)
    head, rows = lines[: starts[1] + 1], lines[starts[1] + 1 : starts[-1] + 1]
    notes = lines[starts[-1] + 1 :]
    budget = max(max_words - len(" ".join(head).split()), 1)
    groups: list[list[str]] = [[]]
    for row in rows:
        if groups[-1] and len(" ".join(groups[-1] + [row]).split()) > budget:
            groups.append([])
        groups[-1].append(row)
    groups[-1].extend(notes)
    return [Paragraph("\n".join(head + group), page=table.page, kind="table") for group in groups]


def _split_words(sentence: str, max_words: int) -> list[str]:
    """A "sentence" longer than `max_words`: cut at list bullets if it has them, else into windows."""
    parts: list[str] = []
    for item in _BULLET.split(sentence):
        words = item.split()
        if parts and len(parts[-1].split()) + len(words) <= max_words:
            parts[-1] += " " + item
        else:
            parts.extend(" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words))
    return parts


def overview(doc: Document, config: ChunkingConfig) -> _Piece:
    """The document-level chunk: title and metadata, then the abstract (or the opening paragraphs)."""
    lines = [doc.title or doc.doc_id]
    authors = "; ".join(doc.authors[:6]) + (" et al." if len(doc.authors) > 6 else "")
    for label, value in (
        ("Authors", authors),
        ("Journal", doc.journal),
        ("Year", doc.year),
        ("DOI", doc.doi),
        ("Type", doc.doc_type),
        ("Topics", "; ".join(doc.topics[:20])),
    ):
        if value:
            lines.append(f"{label}: {value}")
    headings = [path[-1] for path, _ in doc.walk() if path]
    if headings:
        lines.append("Contents: " + "; ".join(dict.fromkeys(headings)))
    budget = config.overview_max_words - _words(Paragraph(text=line) for line in lines)
    summary = _summary_paragraphs(doc)
    lines.extend(p.text for p in _take_words(summary, max(budget, 0)))
    return _Piece((), "\n\n".join(lines), "document", summary[0].page if summary else None)


def _summary_paragraphs(doc: Document) -> list[Paragraph]:
    abstract = [
        p
        for path, section in doc.walk()
        if section.kind in ("abstract", "summary") or (path and path[0].lower() == "abstract")
        for p in section.paragraphs
    ]
    if abstract:
        return abstract
    return _take_words(list(doc.paragraphs()), _LEAD_WORDS)


def _take_words(paragraphs: list[Paragraph], budget: int) -> list[Paragraph]:
    """Leading whole paragraphs within `budget` words; the first is cut at a sentence if it must be."""
    taken: list[Paragraph] = []
    used = 0
    for paragraph in paragraphs:
        words = len(paragraph.text.split())
        if used + words > budget:
            if not taken and budget > 0:
                taken.append(pack_paragraphs([paragraph], budget)[0][0])
            break
        taken.append(paragraph)
        used += words
    return taken


def _to_chunks(doc: Document, pieces: list[_Piece]) -> list[Chunk]:
    chunks = []
    for position, piece in enumerate(pieces):
        if piece.level == "document":
            text = piece.body
        else:
            header = [part for part in (doc.title, " > ".join(piece.path)) if part]
            text = "\n".join(header) + "\n\n" + piece.body if header else piece.body
        digest = sha256_text(text)
        chunks.append(
            Chunk(
                chunk_id=f"{doc.doc_id}#{position}-{digest[:10]}",
                doc_id=doc.doc_id,
                text=text,
                body=piece.body,
                hierarchy_level=piece.level,
                section_path=list(piece.path),
                position=position,
                title=doc.title,
                year=doc.year,
                collection=doc.collection,
                doc_type=doc.doc_type,
                topics=list(doc.topics),
                page=piece.page,
                content_hash=digest,
                evidence_type=doc.evidence_type,
            )
        )
    return chunks


STRATEGIES: dict[str, Callable[[Document, ChunkingConfig], list[_Piece]]] = {
    "fixed-size": fixed_size,
    "section": section,
    "hybrid": hybrid,
    "hierarchical": hierarchical,
    "hierarchical-paragraphs": hierarchical_paragraphs,
}


@dataclass(frozen=True)
class ContextLoss:
    chunks: int  # content chunks measured (overview chunks are composites by design, left out)
    mid_sentence: float  # share ending inside a sentence
    mid_paragraph: float  # share ending inside a paragraph; the "context loss" figure

    @property
    def context_loss(self) -> float:
        return self.mid_paragraph


def context_loss(documents: Iterable[Document], chunks: Iterable[Chunk]) -> ContextLoss:
    """The share of content chunks that end mid-sentence or mid-paragraph.

    A chunk ends on a paragraph boundary when its last words are the last words of a paragraph
    of its document; otherwise it ends mid-paragraph, and mid-sentence too unless its last word
    closes a sentence.
    """
    tails = {(doc.doc_id, _tail(p.text)) for doc in documents for p in doc.paragraphs()}
    total = mid_sentence = mid_paragraph = 0
    for chunk in chunks:
        if chunk.hierarchy_level == "document":
            continue
        total += 1
        words = normalize_space(chunk.body).split()
        # Short paragraphs have short tails, so try every tail length up to the full one.
        if any((chunk.doc_id, " ".join(words[-n:])) in tails for n in range(1, _TAIL_WORDS + 1)):
            continue
        mid_paragraph += 1
        mid_sentence += not ends_sentence(chunk.body)
    if total == 0:
        return ContextLoss(0, 0.0, 0.0)
    return ContextLoss(total, mid_sentence / total, mid_paragraph / total)


def _tail(text: str) -> str:
    return " ".join(normalize_space(text).split()[-_TAIL_WORDS:])


@dataclass(frozen=True)
class ChunkStats:
    strategy: str
    documents: int
    chunks: int
    avg_words: float
    max_words: int
    over_limit: float  # share of content chunks longer than the embedder takes (their tail is lost)
    loss: ContextLoss


def chunk_stats(documents: list[Document], config: ChunkingConfig) -> ChunkStats:
    """The seed's chunking table row for one strategy over `documents`."""
    chunks = [chunk for doc in documents for chunk in chunk_document(doc, config)]
    return stats_of_chunks(documents, chunks, config)


def stats_of_chunks(documents: list[Document], chunks: list[Chunk], config: ChunkingConfig) -> ChunkStats:
    """The same row for chunks already cut by `config` (a catalogue's, say), without cutting again."""
    sizes = [len(chunk.body.split()) for chunk in chunks]
    content = [size for size, chunk in zip(sizes, chunks, strict=True) if chunk.hierarchy_level != "document"]
    return ChunkStats(
        strategy=config.strategy,
        documents=len(documents),
        chunks=len(chunks),
        avg_words=sum(sizes) / len(sizes) if sizes else 0.0,
        max_words=max(sizes, default=0),
        over_limit=sum(size > config.max_words for size in content) / len(content) if content else 0.0,
        loss=context_loss(documents, chunks),
    )
