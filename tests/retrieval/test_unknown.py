"""Names a question uses that the library never mentions: found on a small real home's term
statistics, and abstained on however well the other words match."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from evidenceqa.answer import ABSTAIN_MESSAGE
from evidenceqa.answer.abstain import Abstainer
from evidenceqa.answer.base import abstention
from evidenceqa.answer.cache import MemoryCache
from evidenceqa.answer.engine import Engine
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.retrieval import unknown
from evidenceqa.retrieval.unknown import unknown_names
from tests.conftest import indexed_engine

DOCS = [
    ("reversal", 2016, "Neostigmine reversed a deep rocuronium block more slowly than expected; residual "
     "neuromuscular block was common after laparoscopic surgery; full recovery was out of reach."),
    ("eclampsia", 2012, "Magnesium sulphate prevents seizures in eclampsia and severe pre-eclampsia."),
    ("hip", 2018, "Trochanteric fractures of the hip were fixed with a nail; arthroplasty was kept for "
     "displaced femoral neck fractures."),
    ("txa", 2019, "Tranexamic acid reduced blood loss after total knee arthroplasty without more thrombosis."),
    ("torsion", 2015, "Detorsion preserved the ovary in most girls with adnexal torsion."),
]  # fmt: skip


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Iterator[Engine]:
    with indexed_engine(tmp_path_factory.mktemp("home"), DOCS, models_dir) as opened:
        yield opened


@pytest.fixture(scope="module")
def catalogue(engine: Engine) -> Catalogue:
    return engine.catalogue


def test_a_name_the_library_never_mentions_is_found(catalogue: Catalogue) -> None:
    assert unknown_names("Is sugammadex better than neostigmine for a deep rocuronium block?", catalogue) == [
        "sugammadex"
    ]
    assert unknown_names("Remimazolam or propofol before a rocuronium block?", catalogue) == [
        "remimazolam",
        "propofol",
    ]
    # Six letters: still a name where no library word begins with five of them.
    assert unknown_names("Does Keppra interact with rocuronium?", catalogue) == ["keppra"]


@pytest.mark.parametrize(
    "question",
    [
        "Does neostigmine reverse a rocuronium block?",  # every word known
        "Is the operation still on for tomorrow?",  # common English, however absent from the library
        "Does tranexamic acid reduce blood loss after knee arthroplsty?",  # a slip of the keyboard
        "Eclamptic at 36 weeks - magnesium?",  # a form of "eclampsia"
        "Nail for an intertrochanteric fracture?",  # ends in "trochanteric"
        "Is full recovery reachable with neostigmine?",  # begins with "reach"
        "Black ovary at laparoscopy - detort or remove it?",  # six letters, five of "detorsion"
        "TXA dose for a TKA?",  # abbreviations are left to the adequacy model
        pytest.param("zq" * 900, id="1800 letters"),  # longer than any name: checking it would cost seconds
    ],
)
def test_known_words_typos_forms_and_shorthand_are_not_names(catalogue: Catalogue, question: str) -> None:
    assert unknown_names(question, catalogue) == []


def test_an_abbreviation_the_vocabulary_expanded_is_not_a_name(engine: Engine) -> None:
    question = "Does rFVIIa reduce blood loss after knee arthroplasty?"  # the library says it in full
    assert unknown_names(question, engine.catalogue) == ["rfviia"]
    assert unknown_names(question, engine.catalogue, ["rFVIIa"]) == []
    response = engine.retriever().search(question)
    assert response.expansions == [("rFVIIa", "recombinant activated factor VII")]
    assert response.unknown_names == []


def test_without_an_english_word_list_nothing_is_called_a_name(
    catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unknown, "common_words", frozenset)
    assert unknown_names("Is sugammadex better than neostigmine?", catalogue) == []


def test_a_question_naming_what_the_library_lacks_is_abstained_on(engine: Engine) -> None:
    # The floor alone answers anything the search finds: here the neostigmine study.
    answerer = replace(engine.answerer(MemoryCache(8)), abstainer=Abstainer())
    lacking = answerer.ask("What dose of sugammadex reverses a deep rocuronium block?", use_cache=False)
    assert lacking.abstained and lacking.nearest  # the closest passages are still shown
    assert lacking.answer == f"{ABSTAIN_MESSAGE} No passage of the library mentions “sugammadex”."
    held = answerer.ask("How well does neostigmine reverse a deep rocuronium block?", use_cache=False)
    assert not held.abstained and held.citations[0].doc_id.endswith("reversal")
    response = engine.retriever().search("What dose of sugammadex reverses a deep rocuronium block?")
    assert response.unknown_names == ["sugammadex"] and response.results


def test_an_abstention_names_every_word_the_library_lacks() -> None:
    assert abstention("extractive").text == ABSTAIN_MESSAGE
    named = abstention("extractive", ["ryanodex", "dantrium", "remimazolam"])
    assert named.abstained and [s.text for s in named.sentences] == [
        ABSTAIN_MESSAGE,
        "No passage of the library mentions “ryanodex”, “dantrium” or “remimazolam”.",
    ]
