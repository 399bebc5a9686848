"""Realistic perioperative evidence for the answer tests: real Chunks, numbered as retrieval would,
and the real MiniLM ONNX embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidenceqa.answer.base import Evidence
from evidenceqa.answer.extractive import ExtractiveGenerator
from evidenceqa.documents import Chunk
from evidenceqa.embeddings import CachedEmbedder, load_embedder
from evidenceqa.settings import Settings

CHLORHEXIDINE = (
    "Preoperative skin antisepsis with chlorhexidine-alcohol was superior to povidone-iodine for "
    "preventing surgical site infection after clean-contaminated surgery. In a randomised trial of 849 "
    "patients, the overall rate of surgical site infection was 9.5% in the chlorhexidine-alcohol group "
    "and 16.1% in the povidone-iodine group. Chlorhexidine-alcohol was also associated with fewer "
    "superficial and deep incisional infections.\n\n"
    "Figure 2. Rates of surgical site infection by antiseptic group and type of infection.\n\n"
    "Alcohol-based solutions must be allowed to dry completely before drapes are applied, because "
    "pooled alcohol can ignite under surgical diathermy."
)
HAIR_REMOVAL = (
    "Hair removal before surgery and surgical site infection\n\n"
    "Hair should not be removed routinely before surgery. When hair must be removed, clipping rather "
    "than shaving with a razor reduces the risk of surgical site infection. Razors cause microscopic "
    "cuts in the skin that become colonised by bacteria. If hair has to be removed, it should be done "
    "on the day of surgery. See also Fig. 3.\n\n"
    "2. Tanner J. Preoperative hair removal to reduce surgical site infection. Cochrane Database Syst Rev 2021."
)
# A guideline that repeats the review's recommendation almost word for word.
HAIR_GUIDELINE = (
    "When hair must be removed, clipping rather than shaving with a razor reduces the risk of surgical "
    "site infection. Patients should be advised not to shave the operative site themselves in the week "
    "before surgery."
)
TRANEXAMIC = (
    "Tranexamic acid reduces blood loss and the need for allogeneic blood transfusion in patients "
    "undergoing major surgery. A meta-analysis of 129 trials found that tranexamic acid reduced the "
    "probability of receiving a blood transfusion by a third. The effect of tranexamic acid on "
    "thromboembolic events and mortality remains uncertain.\n\n"
    "Ker K, Edwards P, Perel P, Shakur H, Roberts I. Effect of tranexamic acid on surgical bleeding: "
    "systematic review and cumulative meta-analysis. BMJ 2012;344:e3054."
)


def chunk(chunk_id: str, body: str, title: str, year: int, section: list[str]) -> Chunk:
    prefix = "\n".join([title, " › ".join(section)])
    return Chunk(
        chunk_id=chunk_id,
        doc_id=chunk_id.split("#")[0],
        text=f"{prefix}\n\n{body}",
        body=body,
        hierarchy_level="paragraph",
        section_path=section,
        position=1,
        title=title,
        year=year,
    )


CHUNKS = {
    "chlorhexidine": chunk(
        "darouiche-2010#3",
        CHLORHEXIDINE,
        "Chlorhexidine-alcohol versus povidone-iodine for surgical-site antisepsis",
        2010,
        ["Results"],
    ),
    "hair": chunk(
        "tanner-2021#2",
        HAIR_REMOVAL,
        "Preoperative hair removal to reduce surgical site infection",
        2021,
        ["Main results"],
    ),
    "hair_guideline": chunk(
        "nice-ng125#7",
        HAIR_GUIDELINE,
        "Surgical site infections: prevention and treatment",
        2019,
        ["Recommendations", "Preoperative phase"],
    ),
    "tranexamic": chunk(
        "ker-2012#1",
        TRANEXAMIC,
        "Effect of tranexamic acid on surgical bleeding",
        2012,
        ["Abstract"],
    ),
}


def numbered(*names: str) -> list[Evidence]:
    """The named chunks as evidence [1], [2], … in the given order, with falling retrieval scores."""
    return [Evidence(n, CHUNKS[name], 1.0 - n / 10) for n, name in enumerate(names, start=1)]


def real_embedder(home: Path, models_dir: Path) -> CachedEmbedder:
    """The default embedder; `models_dir` is the session's, so MiniLM is exported once per session."""
    return load_embedder(Settings(home=home, models_dir=models_dir, embedder="minilm-onnx"))


def extractive_generator(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> ExtractiveGenerator:
    """The offline generator over the real embedder, in a home of its own."""
    return ExtractiveGenerator(real_embedder(tmp_path_factory.mktemp("extractive"), models_dir))
