"""Follow-up questions resolved against the previous turn, on a small real home (its term statistics
and the MiniLM embedder), and through the Answerer: what is searched, shown, stored and cached."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.retrieval.followup import MAX_PHRASES, FollowUps, _spans, catalogue_rarity
from tests.answer.openai_server import OpenAIServer, answer, failure, llm_settings
from tests.conftest import indexed_engine

DOCS = [
    ("acromegaly", None, "Acromegaly is a hormonal disorder from too much growth hormone. Acromegaly is "
     "treated by surgery to remove the pituitary tumour, medicines or radiation."),
    ("asthma-adults", None, "Asthma in adults narrows the airways; symptoms are wheezing, cough and "
     "shortness of breath."),
    ("asthma-children", None, "Asthma in children often starts before age five; children wheeze with colds "
     "and need a spacer for their inhaler."),
    ("hyper", None, "Hyperthyroidism symptoms include weight loss, a fast heartbeat and tremor."),
    ("hypo", None, "Hypothyroidism symptoms include tiredness, weight gain and feeling cold."),
    ("stones", None, "Kidney stones cause severe flank pain; drinking more water prevents new stones."),
    ("txa", 2019, "Tranexamic acid reduced blood loss after total knee arthroplasty without more "
     "thrombosis."),
    ("shave", 2007, "Shaving the incision site before spinal surgery increased postoperative infection."),
]  # fmt: skip


SCENARIO = (
    "A 64-year-old man with long-standing type 2 diabetes, chronic kidney disease, atrial fibrillation "
    "on warfarin, obesity and sleep apnoea is listed for an elective knee replacement next month; his "
    "surgeon asks what the symptoms of hyperthyroidism would be, since his last thyroid tests were odd"
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    with indexed_engine(tmp_path_factory.mktemp("home"), DOCS, models_dir) as opened:
        yield opened


@pytest.fixture(scope="module")
def followups(engine: Engine) -> FollowUps:
    return FollowUps(engine.embedder, catalogue_rarity(engine.catalogue))


def test_a_question_with_no_conversation_or_a_new_topic_is_searched_as_asked(followups: FollowUps) -> None:
    alone = followups.resolve("How is it treated?", [])
    assert alone.question == "How is it treated?" and not alone.changed
    switched = followups.resolve("What causes kidney stones?", ["What is acromegaly?"])
    assert switched.question == "What causes kidney stones?" and switched.how == "standalone"


def test_a_pronoun_becomes_the_previous_questions_topic(followups: FollowUps) -> None:
    resolved = followups.resolve("How is it treated?", ["What is acromegaly?"])
    assert resolved.question == "How is acromegaly treated?" and resolved.how == "pronoun"
    # "they" are the doctors here; "it" is the topic.
    assert followups.resolve("how do they treat it", ["What is acromegaly?"]).question == (
        "how do they treat acromegaly"
    )


def test_a_demonstrative_before_a_noun_keeps_its_noun_and_the_topic_is_added(followups: FollowUps) -> None:
    resolved = followups.resolve("Does this drug help?", ["How is acromegaly treated?"])
    assert resolved.question == "Does this drug help (acromegaly)?" and resolved.how == "pronoun"
    # Before an aspect word, or at the end, it stands for the topic.
    assert followups.resolve("How is this treated?", ["What is acromegaly?"]).question == (
        "How is acromegaly treated?"
    )
    assert followups.resolve("How common are these?", ["What are kidney stones?"]).question == (
        "How common are kidney stones?"
    )


def test_a_population_replaces_the_previous_one(followups: FollowUps) -> None:
    resolved = followups.resolve("And in children?", ["What are the symptoms of asthma in adults?"])
    assert resolved.question == "What are the symptoms of asthma in children?"
    assert resolved.how == "population"
    assert followups.resolve("what about kids", ["What is asthma?"]).question == "What is asthma in kids?"


def test_what_about_x_replaces_the_phrase_it_is_most_like(followups: FollowUps) -> None:
    resolved = followups.resolve("What about hypothyroidism?", ["What are the symptoms of hyperthyroidism?"])
    assert resolved.question == "What are the symptoms of hypothyroidism?"
    assert resolved.how == "substitution"


def test_a_named_topic_replaces_the_topic_and_keeps_the_questions_frame(followups: FollowUps) -> None:
    # "treated" is the frame: only the topic is swapped, never the topic with its aspect word.
    resolved = followups.resolve("and kidney stones?", ["How is acromegaly treated?"])
    assert resolved.question == "How is kidney stones treated?" and resolved.how == "substitution"


def test_an_aspect_after_a_lead_is_asked_of_the_previous_topic(followups: FollowUps) -> None:
    # The previous question has no phrase but its topic: the aspect never replaces the topic.
    resolved = followups.resolve("And the treatment?", ["What is acromegaly?"])
    assert resolved.question == "treatment (acromegaly)?" and resolved.how == "substitution"
    # An aspect beside the topic is what it replaces.
    swapped = followups.resolve("and the symptoms?", ["How is asthma treated in adults?"])
    assert "asthma" in swapped.question and "symptoms" in swapped.question


def test_a_lead_before_a_whole_question_leaves_the_question_to_stand_or_lean_alone(
    followups: FollowUps,
) -> None:
    resolved = followups.resolve("And what are the treatments?", ["What is acromegaly?"])
    assert resolved.question == "what are the treatments (acromegaly)?" and resolved.how == "aspect"
    assert resolved.asked == "And what are the treatments?"
    assert followups.resolve("and how is it treated?", ["What is acromegaly?"]).question == (
        "how is acromegaly treated?"
    )
    switched = followups.resolve("And what causes kidney stones?", ["What is acromegaly?"])
    assert switched.question == "And what causes kidney stones?" and not switched.changed


def test_a_long_previous_question_is_searched_for_its_phrase_in_one_small_batch(followups: FollowUps) -> None:
    assert len(_spans(SCENARIO)) <= MAX_PHRASES
    resolved = followups.resolve("What about hypothyroidism?", [SCENARIO])
    assert "symptoms of hypothyroidism" in resolved.question and resolved.how == "substitution"


def test_the_library_is_asked_the_rarity_of_a_long_questions_words_once(engine: Engine) -> None:
    asked: list[list[str]] = []
    rarity = catalogue_rarity(engine.catalogue)

    def counted(words: Sequence[str]) -> Mapping[str, float]:
        asked.append(list(words))
        return rarity(words)

    resolver = FollowUps(engine.embedder, counted)
    assert resolver.resolve("How is it treated?", [SCENARIO]).how == "pronoun"
    assert len(asked) == 1 and "diabet" in " ".join(asked[0])  # every word of the scenario at once
    asked.clear()
    assert resolver.resolve("who is at risk", [SCENARIO]).how == "aspect"
    assert len(asked) == 2  # the follow-up's own words, then the previous question's


def test_a_setting_is_added_to_the_previous_question(followups: FollowUps) -> None:
    resolved = followups.resolve("What about after spinal surgery?", ["Is tranexamic acid safe?"])
    assert resolved.question == "Is tranexamic acid safe after spinal surgery?" and resolved.how == "setting"


def test_a_bare_aspect_gets_the_previous_topic(followups: FollowUps) -> None:
    resolved = followups.resolve("what are the treatments", ["What is acromegaly?"])
    assert resolved.question == "what are the treatments (acromegaly)?" and resolved.how == "aspect"


def test_a_follow_up_is_searched_resolved_shown_and_cached_by_what_was_searched(engine: Engine) -> None:
    answerer = engine.answerer(MemoryCache(16))
    first = answerer.ask("What are the symptoms of asthma in adults?")
    follow = answerer.ask("And in children?", previous=[first.question])
    assert follow.question == "And in children?"
    assert follow.searched_for == "What are the symptoms of asthma in children?"
    assert follow.citations and follow.citations[0].doc_id == "asthma-children"
    # The same words after another question are another search, never the cached answer.
    other = answerer.ask("And in children?", previous=["What causes kidney stones?"])
    assert not other.cache_hit and other.searched_for != follow.searched_for
    # The same search asked outright is the cached answer, under the new asker's words.
    direct = answerer.ask("What are the symptoms of asthma in children?")
    assert direct.cache_hit and direct.searched_for is None and direct.answer == follow.answer
    # An answer's dict keeps what was searched.
    assert follow.to_row()["searched_for"] == follow.searched_for


def test_a_history_as_asked_is_resolved_turn_by_turn(engine: Engine) -> None:
    answerer = engine.answerer(MemoryCache(16))
    searched = answerer.searched_forms(
        ["What is asthma in adults?", "And in children?", "How is it treated?"]
    )
    assert searched[1] == "What is asthma in children?"
    assert searched[2].startswith("How is asthma") and "treated" in searched[2]
    # A pasted page in the history is not a question that was asked: left out, never an error.
    assert answerer.searched_forms(["x " * 5000, "", "What is asthma?"]) == ["What is asthma?"]


def test_an_llm_rewrites_the_follow_up_and_the_rules_stand_in_when_it_fails(engine: Engine) -> None:
    with OpenAIServer() as server:
        server.script(
            answer("What are the symptoms of asthma in children?"),  # the rewrite
            answer("Children wheeze with colds [1]."),  # the answer
            failure(400, "bad request"),  # a rewrite that fails: the rules resolve it
            answer("Acromegaly is treated by surgery [1]."),
        )
        settings = llm_settings(engine.settings, f"{server.url}/v1")
        answerer = Engine(settings, engine.catalogue, engine.embedder, engine.backend).answerer(
            MemoryCache(16)
        )
        rewritten = answerer.ask("And in children?", previous=["What are the symptoms of asthma in adults?"])
        ruled = answerer.ask("How is it treated?", previous=["What is acromegaly?"])
        sent = [request.body["messages"] for request in server.requests]
    assert rewritten.searched_for == "What are the symptoms of asthma in children?"
    assert "What are the symptoms of asthma in adults?" in sent[0][1]["content"]
    assert "Follow-up: And in children?" in sent[0][1]["content"]
    assert ruled.searched_for == "How is acromegaly treated?"
