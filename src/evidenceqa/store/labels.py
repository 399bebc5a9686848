"""Failure labels: the automatic category of a poorly rated or abstained answer, with its evidence, and
an administrator's correction of it.

Re-labelling (the analytics compute labels again after the library changed) refreshes the automatic
category and its evidence but never the label in force once an administrator has corrected it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select

from evidenceqa.store.conversations import NotFound
from evidenceqa.store.db import Store
from evidenceqa.store.models import FAILURE_CATEGORIES, AnswerRecord, FailureLabel, User


class InvalidCategory(ValueError):
    """A category other than the four of FAILURE_CATEGORIES."""


def _checked(category: str) -> str:
    if category not in FAILURE_CATEGORIES:
        raise InvalidCategory(f"category must be one of {', '.join(FAILURE_CATEGORIES)}, not {category!r}")
    return category


def failure_labels(store: Store, answer_ids: Collection[int] | None = None) -> dict[int, FailureLabel]:
    """Stored labels by answer id: all of them, or those of `answer_ids`."""
    query = select(FailureLabel)
    if answer_ids is not None:
        query = query.where(FailureLabel.answer_id.in_(list(answer_ids)))
    with store.read() as session:
        return {label.answer_id: label for label in session.scalars(query)}


def save_automatic_label(
    store: Store, answer_id: int, category: str, evidence: dict[str, Any]
) -> FailureLabel:
    """Store what the analytics found; the label in force follows it unless it was corrected."""
    _checked(category)
    with store.transaction() as session:
        label = session.get(FailureLabel, answer_id)
        if label is None:
            label = FailureLabel(answer_id=answer_id)
            session.add(label)
        label.automatic_category, label.evidence, label.labelled_at = category, evidence, store.now()
        if label.corrected_at is None:
            label.category = category
        session.flush()
        return label


def correct_label(store: Store, answer_id: int, category: str, admin: User) -> FailureLabel:
    """An administrator's category for an answer the analytics labelled; kept from now on."""
    _checked(category)
    if not admin.is_admin:
        raise PermissionError("only administrators correct failure labels")
    with store.transaction() as session:
        label = session.get(FailureLabel, answer_id)
        if label is None or session.get(AnswerRecord, answer_id) is None:
            raise NotFound(f"no failure label for answer {answer_id}")
        label.category, label.corrected_by, label.corrected_at = category, admin.id, store.now()
        session.flush()
        return label
