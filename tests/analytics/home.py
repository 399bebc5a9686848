"""A small real data home for the analytics (real LanceDB, the real MiniLM ONNX embedder) with a
hand-set abstention calibration, so questions on topics the library lacks are abstained on; and a
simulated pilot over it through the real app."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from evidenceqa.answer.abstain import FEATURES, Abstainer
from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from evidenceqa.web import simulate

DOCS = [
    ("shave", "Hair removal before spinal surgery", 2007,
     "Shaving the incision site immediately before spinal surgery increased the rate of postoperative "
     "infection compared with clipping. Clipping hair with electric clippers did not increase infection."),
    ("chg", "Chlorhexidine and mucous membranes", 2015,
     "Chlorhexidine gluconate should not be used on mucous membranes. It is safe on intact skin before "
     "surgery."),
    ("txa", "Tranexamic acid in knee arthroplasty", 2019,
     "Tranexamic acid reduced blood loss after total knee arthroplasty without more thrombosis."),
    ("cefazolin", "Cefazolin prophylaxis in hip replacement", 2020,
     "Cefazolin given within sixty minutes before incision reduced surgical site infection after hip "
     "replacement."),
    ("warming", "Perioperative warming and wound infection", 2012,
     "Active warming of patients during colorectal surgery reduced surgical wound infection and shortened "
     "hospital stay."),
]  # fmt: skip
# On topics the library holds, and on ones it lacks entirely.
SHAVE = "Does shaving the incision site increase infection after spinal surgery?"
TXA = "Does tranexamic acid reduce blood loss after knee arthroplasty?"
TXA_SINCE = "Does tranexamic acid reduce blood loss after knee arthroplasty, in studies since 2021?"
OTITIS = "What is the first-line antibiotic for acute otitis media in toddlers?"
# p(answerable) = σ(12·dense_top + 4·coverage − 8), the other signals weighing nothing: on-topic
# questions score ~0.9, absent ones ~0.
CALIBRATION = Abstainer(
    weights=[{"dense_top": 12.0, "coverage": 4.0}.get(name, 0.0) for name in FEATURES],
    bias=-8.0,
    threshold=0.5,
    fitted_on="by hand, for tests",
)
START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)  # a Monday


def write_library(path: Path) -> Path:
    rows = [
        {"doc_id": d, "title": t, "year": y, "sections": [{"heading": "Results", "paragraphs": [text]}]}
        for d, t, y, text in DOCS
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


CEFAZOLIN = "Does cefazolin before incision reduce surgical site infection after hip replacement?"
MELATONIN = "What dose of melatonin prevents delirium in elderly surgical patients?"
# The pilot's questions, with the documents that answer them (none: the library lacks the topic).
PILOT = [
    (SHAVE, ("shave",)),
    (TXA, ("txa",)),
    (OTITIS, ()),
    (CEFAZOLIN, ("cefazolin",)),
    (TXA_SINCE, ("txa",)),  # the 2019 paper is older than the question allows
    ("Does active warming during colorectal surgery reduce wound infection?", ("warming",)),
    (MELATONIN, ()),
    ("Can chlorhexidine gluconate be used on mucous membranes?", ("chg",)),
    ("Does melatonin prevent postoperative delirium in older adults?", ()),
    # A deliberately wrong gold document: the scripted clinician rates the answer Very poor.
    ("Is clipping better than shaving before spinal surgery?", ("chg",)),
]


def build_home(root: Path, models_dir: Path) -> Settings:
    """A data home holding DOCS, indexed and calibrated (closed again: each user opens it)."""
    settings = Settings(home=root / "data", models_dir=models_dir)
    with Engine.open(settings) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(write_library(root / "lib.jsonl"))
        engine.sync()
    CALIBRATION.save(settings.home)
    return settings


def run_pilot(settings: Settings, database: Path) -> tuple[Settings, simulate.Simulation]:
    """PILOT replayed by two clinicians over two weeks through the app, into a new SQLite database."""
    pilot = settings.model_copy(update={"database_url": f"sqlite:///{database}"})
    questions = [simulate.PilotQuestion(q, None, gold) for q, gold in PILOT]
    with simulate.in_process(pilot, "test", START) as (admin, factory, clock):
        result = simulate.replay(
            admin, factory, questions, users=2, tag="test", per_conversation=2, repeat_every=4,
            script=simulate.Script(skip_every=3), before_turn=simulate.spread(clock, START, 14),
        )  # fmt: skip
    return pilot, result
