"""Evidence a clinician weighs, in a real Chromium against `evidenceqa serve`: a cited table drawn as
rows and columns with the quoted row marked, and a yes/no answer whose sources disagree naming each
side's kind of evidence and year. Screenshots for docs/evidence.md (`make screenshots`).

The table is Table 1 of a real case report (the bundled sample's Hindawi JATS file). The two
studies that disagree are constructed, clearly: the shared library has no such pair on one
question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from tests.answer.openai_server import OpenAIServer, answer
from tests.web.test_browser import (  # noqa: F401 — fixtures, found by name
    Server,
    _keep,
    _logged_in,
    artifacts,
    browser,
    serve,
)

pytestmark = pytest.mark.slow
CASE_REPORT = (
    Path(__file__).resolve().parents[2] / "data/sample/files/jats_xml/hindawi_epmc/PMC4745277/fulltext.xml"
)
STUDIES = [
    {"doc_id": "carb-trial-2019", "year": 2019, "title": "Carbohydrate loading before colorectal surgery (constructed)",
     "sections": [{"heading": "Results", "paragraphs": [
         "Patients were randomly assigned to a carbohydrate drink or overnight fasting. Carbohydrate loading "
         "significantly reduced postoperative insulin resistance compared with fasting."]}]},
    {"doc_id": "carb-cohort-2015", "year": 2015, "title": "Carbohydrate loading before hip replacement (constructed)",
     "sections": [{"heading": "Results", "paragraphs": [
         "We retrospectively reviewed 412 patients who had a hip replacement. Carbohydrate loading did not "
         "reduce postoperative insulin resistance after hip replacement."]}]},
]  # fmt: skip
DISAGREED = "Does preoperative carbohydrate loading reduce postoperative insulin resistance?"
TABLE_QUESTION = "Which bacteria grew at culture from the infected hip arthroplasties?"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    root = tmp_path_factory.mktemp("evidence-browser")
    studies = root / "studies.jsonl"
    studies.write_text("".join(json.dumps(row) + "\n" for row in STUDIES), encoding="utf-8")
    settings = Settings(home=root / "data", models_dir=models_dir)
    with Engine.open(settings) as engine:
        ingestor = Ingestor(engine.catalogue, ChunkingConfig())
        for source in (studies, CASE_REPORT):
            ingestor.ingest_file(source)
        engine.sync()
    return settings


def _own_database(settings: Settings, tmp_path: Path) -> Settings:
    """Each server its own database: `serve` prints the first administrator's password only once."""
    return settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'app.sqlite3'}"})


def _ask(server: Server, chromium: Any, question: str) -> tuple[Any, Any]:
    context, page = _logged_in(server, chromium)
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    answer_card = page.locator("article.answer[data-answer-id]").first
    answer_card.wait_for()
    return context, page


def test_a_mixed_answer_names_each_sides_kind_of_evidence_and_year(
    settings: Settings,
    browser: Any,  # noqa: F811 — the imported fixtures
    artifacts: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    with serve(_own_database(settings, tmp_path)) as server:
        context, page = _ask(server, browser, DISAGREED)
        text = page.locator("article.answer .answer-text").first.inner_text()
        assert "In short: the evidence found is mixed." in text
        assert "Saying yes: Randomised controlled trial, 2019." in text
        assert "Saying no: Cohort, case-control or other non-randomised study, 2015." in text
        kinds = page.locator("article.answer .citations .evidence-type").all_inner_texts()
        assert set(kinds) == {
            "Randomised controlled trial",
            "Cohort, case-control or other non-randomised study",
        }
        shot = artifacts / "disagreement.png"
        page.screenshot(path=str(shot), full_page=True)
        _keep(shot)
        context.close()


def test_a_cited_table_is_drawn_as_rows_and_columns_with_the_quoted_row_marked(
    settings: Settings,
    browser: Any,  # noqa: F811 — the imported fixtures
    artifacts: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    # What is drawn is under test, not where a table chunk ranks among one paper's paragraphs (in a
    # three-document library it sits near the evidence budget's edge): the answer gets more evidence.
    settings = settings.model_copy(update={"evidence_k": 2 * settings.evidence_k})
    with Engine.open(settings) as engine:  # which evidence number the table will have
        results = engine.retriever().search(TABLE_QUESTION, k=settings.evidence_k).results
    # Table 1 is long, so cut between rows into chunks that each repeat its caption and header.
    table_n = next((r.rank for r in results if "| Bacteria at culture |" in r.chunk.body), None)
    assert table_n is not None, [r.chunk.body[:60] for r in results]
    with OpenAIServer() as llm:
        llm.script(
            answer(
                "The bacteria at culture were Staphylococcus caprae sensitive to methicillin in case 1 "
                f"and methicillin-sensitive Staphylococcus aureus (MSSA) in case 2 [{table_n}]."
            )
        )
        environment = {"EVIDENCEQA_GENERATOR": "llm", "EVIDENCEQA_LLM_MODEL": "gpt-4o-mini",
                       "EVIDENCEQA_LLM_API_BASE": f"{llm.url}/v1", "EVIDENCEQA_LLM_API_KEY": "sk-test",
                       "EVIDENCEQA_EVIDENCE_K": str(settings.evidence_k)}  # fmt: skip
        with serve(_own_database(settings, tmp_path), **environment) as server:
            context, page = _ask(server, browser, TABLE_QUESTION)
            page.locator("article.answer .cite-ref").first.click()
            source = page.locator("article.answer .citations li").first
            table = source.locator("figure.table-passage table")
            table.wait_for()
            assert "Table 1. Demographic, microbiological, and therapeutic data." in source.inner_text()
            assert table.locator("thead th").count() == 5  # the row's label and the four hips
            cited = table.locator("tbody tr.cited")
            assert cited.count() == 1 and cited.locator("td").first.inner_text() == "Bacteria at culture"
            assert cited.locator("mark").count() == 5
            shot = artifacts / "table-source.png"
            source.screenshot(path=str(shot))
            _keep(shot)
            context.close()
