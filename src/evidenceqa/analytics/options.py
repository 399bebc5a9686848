"""The pilot report's options: what counts as a successful answer, and the latency it is held to.

Apart from the report's modules (which need the web extra's store), so the core's Settings composes
them without it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

SuccessRule = Literal["feedback", "feedback_or_answered"]


class AnalyticsOptions(BaseModel):
    # An answer's success: "feedback" counts rated answers only (success: its mean rating >= 0.6, i.e.
    # Acceptable or Excellent); "feedback_or_answered" counts every answer (its mean rating >= 0.6
    # when rated, else: not abstained).
    success_rule: SuccessRule = "feedback_or_answered"
    latency_target_s: float = Field(5.0, gt=0)  # the report's "share of answers under" this
