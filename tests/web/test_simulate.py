"""The simulated pilot's pieces: question files, the mix, the schedule and the feedback script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidenceqa.web.simulate import PilotQuestion, Script, mix, read_questions, schedule


def test_question_files_split_on_newlines_only(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"query_id": "a", "question": "Line\u2028separator inside?", "gold_doc_ids": ["d1"]},
        {"question": "b?"},
    ]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n", encoding="utf-8")
    assert read_questions(path) == [
        PilotQuestion("Line\u2028separator inside?", "a", ("d1",)), PilotQuestion("b?")
    ]  # fmt: skip
    assert len(read_questions(path, limit=1)) == 1
    path.write_text('{"question": "ok"}\n{"text": "no question"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"q\.jsonl:2"):
        read_questions(path)


def test_the_mix_spreads_gap_questions_among_answerable_ones() -> None:
    inside = [PilotQuestion(f"a{i}", None, (f"in{i}",)) for i in range(6)]
    outside = [PilotQuestion(f"g{i}", None, (f"out{i}",)) for i in range(3)]
    mixed = mix(outside + inside, lambda doc_id: doc_id.startswith("in"), answerable=4, gaps=2)
    # Answerable at 0, 1/4, 2/4, 3/4; gaps at 1/4 and 3/4 (after the answerable question on a tie).
    assert [q.question for q in mixed] == ["a0", "a1", "g0", "a2", "a3", "g1"]
    assert [q.gold_doc_ids for q in mixed if q.question.startswith("g")] == [(), ()]  # nothing answers them


def test_question_i_goes_to_user_i_mod_n_and_some_are_asked_twice() -> None:
    questions = [PilotQuestion(f"q{i}") for i in range(5)]
    order = [(user, q.question) for user, q in schedule(questions, users=2, repeat_every=3)]
    assert order == [(0, "q0"), (1, "q0"), (1, "q1"), (0, "q2"), (1, "q3"), (0, "q3"), (0, "q4")]
    assert len(schedule(questions, users=1, repeat_every=3)) == 5  # nobody else to ask it again


def _answer(*cited: str, abstained: bool = False) -> dict:
    return {"citations": [{"doc_id": d} for d in cited], "abstained": abstained}


def test_the_feedback_script() -> None:
    script, gold, gap = Script(skip_every=4), PilotQuestion("q", None, ("g",)), PilotQuestion("gap")
    assert script.rating(0, gold, _answer("g", "x")) == "excellent"
    assert script.rating(1, gold, _answer("x", "g")) == "acceptable"
    assert script.rating(2, gold, _answer("x")) == "very_poor"
    assert script.rating(3, gold, _answer("g")) is None  # every 4th answer is left unrated
    assert script.rating(4, gap, _answer(abstained=True)) == "acceptable"  # the honest "I don't know"
    assert script.rating(5, gold, _answer(abstained=True)) == "very_poor"
    assert script.rating(6, gap, _answer("x")) == "very_poor"
    assert Script(skip_every=0).rating(3, gold, _answer("g")) == "excellent"
