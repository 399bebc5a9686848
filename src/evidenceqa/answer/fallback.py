"""The LLM with a stand-in: when it fails (down, timed out, refused), an extractive answer instead
(the llm_fallback_extractive setting). The draft says which generator it stands in for, so the answer
record is marked and the stand-in is never cached as the LLM's answer. Text the LLM had streamed before
it failed is withdrawn (`DISCARD_STREAMED`) before the stand-in's answer streams."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from evidenceqa.answer.base import (
    DISCARD_STREAMED,
    Draft,
    Evidence,
    Expansions,
    GenerationError,
    Generator,
    ReadsExpansions,
    Rewriter,
    generate,
)

log = logging.getLogger(__name__)


class FallbackGenerator(ReadsExpansions):
    def __init__(self, primary: Generator, fallback: Generator) -> None:
        self.primary = primary
        self.fallback = fallback
        self.name = primary.name  # the configured generator: cache keys and records name it

    def rewrite_followup(self, question: str, previous: Sequence[str]) -> str:
        if not isinstance(self.primary, Rewriter):
            raise GenerationError(f"{self.primary.name} does not rewrite questions")
        return self.primary.rewrite_followup(question, previous)

    def generate_expanded(
        self,
        question: str,
        evidence: Sequence[Evidence],
        expansions: Expansions,
        on_delta: Callable[[str], None] | None = None,
    ) -> Draft:
        streamed = False

        def relay(text: str) -> None:
            nonlocal streamed
            streamed = True
            if on_delta:
                on_delta(text)

        try:
            return generate(self.primary, question, evidence, expansions, relay)
        except GenerationError as exc:  # its message is one line, the API key masked
            log.warning("%s; answered extractively instead (llm_fallback_extractive)", exc)
            if streamed and on_delta:  # the reader must not take the failed text for part of the answer
                on_delta(DISCARD_STREAMED)
            return replace(
                generate(self.fallback, question, evidence, expansions, on_delta),
                fallback_from=self.primary.name,
            )
