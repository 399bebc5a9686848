"""The question as it is searched and stored: control and invisible characters out, a length limit, a
clear error."""

from __future__ import annotations

from evidenceqa.text.characters import visible


class QuestionError(ValueError):
    """A question that cannot be searched: empty, or over the length limit. The message says which."""


def clean_question(question: str, max_chars: int) -> str:
    """The question as searched and stored: control characters replaced by spaces, invisible formatting
    characters removed (`text.characters.visible`), ends stripped.

    Raises QuestionError when nothing is left, or when it is longer than `max_chars` (the
    max_question_chars setting): a pasted document is not a question, and would only slow the search.
    """
    if len(question) > max_chars:
        raise QuestionError(
            f"the question is {len(question):,} characters long; the limit is {max_chars:,} "
            "(setting max_question_chars)"
        )
    cleaned = visible(question).strip()
    if not cleaned:
        raise QuestionError("the question is empty")
    return cleaned
