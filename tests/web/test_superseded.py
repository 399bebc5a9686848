"""A cited document that a newer edition replaces says so on its source card and to agents, as the
library stands when the answer is shown (an answer recorded before the newer edition arrived
included)."""

import pytest

from evidenceqa.records import Citation
from evidenceqa.web.agent_access import attributions
from evidenceqa.web.library import cited_passages
from tests.library.editions import TITLE, editions_engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory, models_dir):
    with editions_engine(tmp_path_factory.mktemp("home"), models_dir) as opened:
        yield opened


def citation(engine, doc_id: str, n: int) -> Citation:
    chunk = next(c for c in engine.catalogue.chunks(doc_id) if c.hierarchy_level != "document")
    return Citation(n, doc_id, chunk.chunk_id, chunk.title, chunk.year, "Recommendations", chunk.body)


def test_the_source_card_names_the_newer_edition(engine):
    old, new = cited_passages(engine.catalogue, [citation(engine, "cg74", 1), citation(engine, "ng125", 2)])
    assert old.superseded_by is not None and new.superseded_by is None
    assert (old.superseded_by.doc_id, old.superseded_by.stated) == ("ng125", False)
    assert old.superseded_by.label == f"{TITLE} (2019 update)"  # its year is in its title


def test_agents_are_told_to_cite_the_newer_edition(engine):
    found = attributions(engine.catalogue, ["leaflet-2012", "leaflet-2024"])
    assert found["leaflet-2012"]["superseded_by"] == {
        "doc_id": "leaflet-2024", "title": "Having an operation", "year": 2024, "stated": True,
        "label": "Having an operation (2024)",
    }  # fmt: skip
    assert found["leaflet-2024"]["superseded_by"] is None
