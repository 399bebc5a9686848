"""Answering: numbered evidence → a cited answer (extractive offline, or any OpenAI-compatible LLM).

`pipeline.Answerer.ask` runs cache → retrieval → adequacy (`abstain`) → generator (`extractive`
or `llm`, with `prompt`) → citation check (`citations`); `base` holds the shapes.
"""

from __future__ import annotations

from evidenceqa.answer.base import ABSTAIN_MESSAGE, Draft, Evidence, GenerationError, Generator
from evidenceqa.config import Settings
from evidenceqa.embeddings.base import Embedder
from evidenceqa.records import Citation, Sentence

__all__ = [
    "ABSTAIN_MESSAGE",
    "Citation",
    "Draft",
    "Evidence",
    "GenerationError",
    "Generator",
    "Sentence",
    "load_generator",
]


def load_generator(settings: Settings, embedder: Embedder) -> Generator:
    """The generator the settings name; the LLM client is only imported when it is used."""
    from evidenceqa.answer.extractive import ExtractiveGenerator

    if settings.generator != "llm":
        return ExtractiveGenerator(embedder)
    from evidenceqa.answer.llm import build_llm_generator

    llm = build_llm_generator(settings)
    if settings.llm_fallback_extractive:
        from evidenceqa.answer.fallback import FallbackGenerator

        return FallbackGenerator(llm, ExtractiveGenerator(embedder))
    return llm
