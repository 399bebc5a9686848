"""The shapes of answering: evidence in, a draft out of a generator, a checked and cited answer.

evidence (numbered retrieved chunks) ─▶ Generator.generate ─▶ Draft (text with [n] markers,
split into sentences) ─▶ citation check ─▶ Answer (what the CLI, the web app and the cache hold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from evidenceqa.documents import Chunk
from evidenceqa.records import Sentence, Usage

# The seed's words, exactly: clinicians and the analytics recognise an abstention by them.
ABSTAIN_MESSAGE = "I don't have adequate information to answer this question."
# Above an abstention's closest passages (Answer.nearest), wherever they are shown.
NEAREST_NOTE = "The closest passages the library holds. They do not answer the question."


# Sent through `on_delta` when a generator gives up after streaming part of an answer and a stand-in
# answers instead: what was streamed is void. NUL never occurs in an answer (evidence, questions and
# stored text are free of control characters), so it cannot be mistaken for text.
DISCARD_STREAMED = "\x00"


class GenerationError(RuntimeError):
    """A generator could not produce an answer (API down, refused, timed out); the message says why."""


@dataclass(frozen=True)
class Evidence:
    """One retrieved chunk as the generator sees it: `n` is the number an answer cites it by."""

    n: int
    chunk: Chunk
    score: float
    # How many documents of the library carry a sentence of the evidence word for word, for each
    # that more than one does (`Catalogue.sentence_documents`): a template, not what this source says.
    shared: Mapping[str, int] = field(default_factory=dict, compare=False)

    @property
    def section(self) -> str | None:
        return " › ".join(self.chunk.section_path) or None


@dataclass
class Draft:
    """What a generator returns: the answer text with [n] markers, and the same split into sentences."""

    text: str
    sentences: list[Sentence]
    abstained: bool
    model: str
    usage: Usage = field(default_factory=Usage)
    fallback_from: str | None = None  # the generator that failed, when this draft stands in for it


class Generator(Protocol):
    """Turns a question and numbered evidence into a draft. `on_delta` receives text as it is produced
    (token by token from an LLM, all at once from the extractive generator)."""

    name: str

    def generate(
        self, question: str, evidence: Sequence[Evidence], on_delta: Callable[[str], None] | None = None
    ) -> Draft: ...


# What the search added to a question: (the question's form, the library's other form), as
# ("CVP", "central venous pressure") or ("pulmonary embolism", "PE").
Expansions = Sequence[tuple[str, str]]


@runtime_checkable
class ReadsExpansions(Protocol):
    """A generator that also weighs the other forms the search looked for: a sentence naming the
    central venous pressure speaks to a question about the CVP. Subclassed, it answers `generate`
    as given no expansions."""

    name: str

    def generate(
        self, question: str, evidence: Sequence[Evidence], on_delta: Callable[[str], None] | None = None
    ) -> Draft:
        return self.generate_expanded(question, evidence, (), on_delta)

    def generate_expanded(
        self,
        question: str,
        evidence: Sequence[Evidence],
        expansions: Expansions,
        on_delta: Callable[[str], None] | None = None,
    ) -> Draft: ...


def generate(
    generator: Generator,
    question: str,
    evidence: Sequence[Evidence],
    expansions: Expansions = (),
    on_delta: Callable[[str], None] | None = None,
) -> Draft:
    """The generator's draft, given the search's expansions where it reads them."""
    if isinstance(generator, ReadsExpansions):
        return generator.generate_expanded(question, evidence, expansions, on_delta)
    return generator.generate(question, evidence, on_delta)


@runtime_checkable
class Rewriter(Protocol):
    """A generator that can also rewrite a follow-up question to stand alone (an LLM); the
    Answerer asks it first and falls back on the offline rules (`retrieval.followup`)."""

    def rewrite_followup(self, question: str, previous: Sequence[str]) -> str: ...


def abstention(model: str, unknown_names: Sequence[str] = ()) -> Draft:
    """The abstention; with the question's words the library never mentions, a second sentence that
    names them (what to rephrase, or what the library lacks)."""
    sentences = [Sentence(ABSTAIN_MESSAGE)]
    if unknown_names:
        quoted = [f"“{name}”" for name in unknown_names]
        names = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        sentences.append(Sentence(f"No passage of the library mentions {names}."))
    return Draft(" ".join(s.text for s in sentences), sentences, abstained=True, model=model)
