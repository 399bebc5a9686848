"""Evidence the search did not rank but an answer must hear, read from the catalogue beside it.

Whatever the generator (extractive or an LLM), it sees these chunks after the ranked evidence. The
rules are digested into the answer cache's key (`answer.cache`): a release that adds other context
misses the answers cached before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evidenceqa.answer.extractive import answerable_sentences
from evidenceqa.answer.findings import AIM_OR_METHOD, finding_weight, is_conclusion, is_preamble
from evidenceqa.documents import Chunk
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.retrieval.retriever import SearchResult

# A chunk that announces a list or table it may not hold: an NIH page's lead-in ("… provides the
# following list of signs and symptoms for …"), "the table below", or a body that ends on a colon
# ("Symptoms include the following:").
_ANNOUNCES_LIST = re.compile(r"\bthe following list of\b|\bthe table below\b|:\s*$", re.IGNORECASE)


def first_conclusion(results: Sequence[SearchResult], catalogue: Catalogue, yes_or_no: bool) -> list[Chunk]:
    """The first source's conclusion when the search found none of it, where the answer needs it:
    - for a yes/no question (a Results chunk can match the question's words better than the
      Conclusions that say what the study found as a whole, and the yes/no line must hear those);
    - for any question when the search found that source only by what it set out to do: its
      background, aim or methods ("Eighty-seven patients … were randomised to …"), so the source
      retrieval ranked first would otherwise go unheard, or be heard by its background alone, and
      lesser ones answer instead.
    Its first chunk in a section named as a conclusion; none when the document has no such section."""
    if not results:
        return []
    first = results[0].chunk.doc_id
    found = [r.chunk for r in results if r.chunk.doc_id == first]
    if any(is_conclusion(chunk.section_path) for chunk in found):
        return []
    if not yes_or_no and any(_may_answer(chunk) for chunk in found):
        return []
    return next(([c] for c in catalogue.chunks(first) if is_conclusion(c.section_path)), [])


def _may_answer(chunk: Chunk) -> bool:
    """Whether the chunk may say what its source found: not a section named for its background, aim
    or methods, and with a sentence that could stand in an answer and is not an aim or a method."""
    if is_preamble(chunk.section_path):
        return False
    sentences = answerable_sentences(chunk.body)
    return any(finding_weight(s.text, chunk.section_path) > AIM_OR_METHOD for s in sentences)


def announced_list(results: Sequence[SearchResult], catalogue: Catalogue) -> list[Chunk]:
    """The chunk after the first-ranked one when that one announces a list or table it does not hold
    ("The Human Phenotype Ontology provides the following list of signs and symptoms for …", "…
    include the following:") and the search did not rank the next: the list is what answers, and it
    shares fewer of the question's words than its announcement does. None when the next chunk is of
    another section."""
    if not results or not _ANNOUNCES_LIST.search(results[0].chunk.body.strip()):
        return []
    top = results[0].chunk
    after = catalogue.next_chunk(top)
    if (
        after is None
        or after.section_path != top.section_path
        or any(r.chunk.chunk_id == after.chunk_id for r in results)
    ):
        return []
    return [after]
