"""Answering: numbered evidence → a cited answer (extractive offline, or any OpenAI-compatible LLM).

`pipeline.Answerer.ask` runs cache → retrieval → adequacy (`abstain`) → generator (`extractive`
or `llm`, with `prompt`, or a plugin's) → citation check (`citations`); `base` holds the shapes.
"""

from __future__ import annotations

from evidenceqa import registry
from evidenceqa.answer.base import ABSTAIN_MESSAGE, Draft, Evidence, GenerationError, Generator
from evidenceqa.answer.llm import LLMOptions
from evidenceqa.embeddings.base import Embedder

__all__ = [
    "ABSTAIN_MESSAGE",
    "Draft",
    "Evidence",
    "GenerationError",
    "Generator",
    "GeneratorOptions",
    "load_generator",
]


class GeneratorOptions(LLMOptions):
    # "extractive" (offline, verbatim evidence sentences), "llm" (the llm extra: any OpenAI-compatible
    # chat API: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server), or a plugin's.
    generator: str = "extractive"
    # When the LLM fails (down, timed out, refused): answer extractively, marked in the answer record.
    llm_fallback_extractive: bool = False


def load_generator(settings: GeneratorOptions, embedder: Embedder) -> Generator:
    """The generator the settings name, built by its registered factory `(settings, embedder)`:
    `extractive`, `llm` (the `llm` extra) or a plugin's. With `llm_fallback_extractive`, any
    generator but the extractive one falls back to it when it fails."""
    generator: Generator = registry.create("generator", settings.generator, settings, embedder)
    if settings.generator == "extractive" or not settings.llm_fallback_extractive:
        return generator
    from evidenceqa.answer.extractive import ExtractiveGenerator
    from evidenceqa.answer.fallback import FallbackGenerator

    return FallbackGenerator(generator, ExtractiveGenerator(embedder))
