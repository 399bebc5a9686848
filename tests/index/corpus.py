"""A small synthetic corpus for the backend contract tests.

Real analysed terms (evidenceqa.text.tokens.analyze of short clinical sentences), deterministic unit
vectors of dimension 8, years 1995–2022 and unknown, several collections, document types and
topics, awkward ids, and one overview record (hierarchy level "document") per document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evidenceqa.evidence_types import KEYS
from evidenceqa.index.base import Filters, IndexRecord
from evidenceqa.text.tokens import analyze

DIM = 8
ALL_LEVELS = Filters(levels=("document", "section", "paragraph"))
AWKWARD = 'it\'s "quoted" #1 ~x:y\\back'  # quotes, '#', '~', ':' and a backslash


@dataclass(frozen=True)
class Doc:
    doc_id: str
    title: str
    year: int | None
    collection: str
    doc_type: str
    topics: tuple[str, ...]
    chunks: tuple[str, ...]


DOCS: tuple[Doc, ...] = (
    Doc(
        "who:guideline#2016~ssi",
        "Global guidelines for the prevention of surgical site infection",
        2016,
        "guidelines",
        "guideline",
        ("surgical site infection", "antisepsis"),
        (
            "Alcohol-based chlorhexidine gluconate solutions are recommended for surgical site skin preparation.",
            "Hair should not be removed; if absolutely necessary, remove it only with clippers, never razors.",
            "Surgical hand preparation is performed by scrubbing with antimicrobial soap or an alcohol handrub.",
        ),
    ),
    Doc(
        "cochrane'shaving",
        "Preoperative hair removal to reduce surgical site infection",
        2011,
        "reviews",
        "systematic-review",
        ("hair removal", "surgical site infection"),
        (
            "Shaving with razors before surgery increased surgical site infections compared with clipping.",
            "No statistically significant difference was found between clipping and depilatory cream.",
            "The timing of hair removal, on the day of surgery or the day before, did not change outcomes.",
        ),
    ),
    Doc(
        "masks-1995",
        "Surgical face masks in the operating theatre",
        1995,
        "trials",
        "rct",
        ("masks", "operating room"),
        (
            "Surgeons who did not wear face masks had no increase in wound infection after clean surgery.",
            "Unmasked staff shed bacteria but the droplets rarely reached the operative field.",
        ),
    ),
    Doc(
        "hand-hygiene:2009",
        "Guidelines on hand hygiene in health care",
        2009,
        "guidelines",
        "guideline",
        ("hand hygiene",),
        (
            "Hand hygiene with alcohol handrub is more effective than washing with plain soap.",
            "Artificial nails are associated with colonisation by gram-negative bacilli.",
            "Compliance with hand hygiene improved after feedback and education programmes.",
        ),
    ),
    Doc(
        "nurse-notes",
        "Perioperative nursing notes",
        None,
        "textbooks",
        "textbook",
        ("antisepsis", "nursing"),
        (
            "Povidone-iodine scrub is an alternative when patients are allergic to chlorhexidine.",
            "Allow the antiseptic to dry completely before draping to reduce the risk of fire.",
        ),
    ),
    Doc(
        "nice-ng125",
        "Surgical site infections: prevention and treatment",
        2019,
        "guidelines",
        "guideline",
        ("surgical site infection",),
        (
            "Offer nasal mupirocin decolonisation to patients carrying Staphylococcus aureus.",
            "Do not routinely use antimicrobial triclosan-coated sutures.",
            "Give antibiotic prophylaxis before incision for clean-contaminated surgery.",
        ),
    ),
    Doc(
        "covid~masks",
        "Masks and respirators for health workers",
        2022,
        "reviews",
        "systematic-review",
        ("masks", "covid-19"),
        (
            "N95 respirators and surgical masks offered similar protection against influenza in health workers.",
            "During the COVID-19 pandemic, universal masking reduced transmission in hospitals.",
        ),
    ),
    Doc(
        "darouiche-2010",
        "Chlorhexidine-alcohol versus povidone-iodine for surgical-site antisepsis",
        2010,
        "trials",
        "rct",
        ("antisepsis", "surgical site infection"),
        (
            "Chlorhexidine-alcohol was superior to povidone-iodine for preventing surgical site infection.",
            "Patients infected after surgery stayed longer in hospital.",
        ),
    ),
    Doc(
        "ortho#kb",
        "Infection control in orthopaedic theatres",
        1998,
        "textbooks",
        "textbook",
        ("orthopaedics", "operating room"),
        (
            "Laminar airflow theatres did not reduce deep infection after joint replacement.",
            "Body exhaust suits are worn during arthroplasty.",
            "Prophylactic cefazolin is given within sixty minutes of the skin incision.",
        ),
    ),
    Doc(
        AWKWARD,
        "Preoperative bathing with antiseptic soap",
        2014,
        "trials",
        "cohort",
        ("preoperative bathing",),
        (
            "Preoperative showering with chlorhexidine soap did not reduce surgical site infection.",
            "Bathing the night before surgery is common practice.",
            "Cloths impregnated with chlorhexidine leave a residue on skin.",
        ),
    ),
    Doc(
        "gloves",
        "Gloves in surgery",
        2001,
        "reviews",
        "narrative-review",
        ("gloves", "hand hygiene"),
        (
            "Double gloving reduces perforations of the inner glove.",
            "Glove perforation is detected more often with indicator gloves.",
        ),
    ),
    Doc(
        "wound-dressing",
        "Postoperative wound dressings",
        None,
        "textbooks",
        "textbook",
        (),
        (
            "Occlusive dressings keep the wound moist and were not associated with more infection.",
            "Remove the dressing after forty-eight hours.",
        ),
    ),
)


def unit_vector(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def build_records() -> list[IndexRecord]:
    records: list[IndexRecord] = []
    seed = 1000
    for doc in DOCS:
        common = {
            "doc_id": doc.doc_id,
            "year": doc.year,
            "collection": doc.collection,
            "doc_type": doc.doc_type,
            "topics": list(doc.topics),
            # A textbook has no evidence type here: unlabelled records must match no type filter.
            "evidence_type": "observational"
            if doc.doc_type == "cohort"
            else doc.doc_type
            if doc.doc_type in KEYS
            else None,
        }
        overview = doc.title + ". " + " ".join(doc.chunks)
        records.append(
            IndexRecord(
                chunk_id=f"{doc.doc_id}#overview",
                hierarchy_level="document",
                terms=analyze(overview),
                vector=unit_vector(seed),
                **common,
            )
        )
        seed += 1
        for n, text in enumerate(doc.chunks, start=1):
            records.append(
                IndexRecord(
                    chunk_id=f"{doc.doc_id}#c{n}",
                    hierarchy_level="section" if n == 1 else "paragraph",
                    terms=analyze(doc.title + ". " + text) if n == 1 else analyze(text),
                    vector=unit_vector(seed),
                    **common,
                )
            )
            seed += 1
    return records


RECORDS: list[IndexRecord] = build_records()
BY_ID: dict[str, IndexRecord] = {r.chunk_id: r for r in RECORDS}


def record_with(text: str) -> IndexRecord:
    """The content record whose sentence contains `text`."""
    for doc in DOCS:
        for n, chunk in enumerate(doc.chunks, start=1):
            if text in chunk:
                return BY_ID[f"{doc.doc_id}#c{n}"]
    raise KeyError(text)


def matches(record: IndexRecord, filters: Filters) -> bool:
    """The reference semantics of `Filters`, evaluated in Python."""
    if filters.levels and record.hierarchy_level not in filters.levels:
        return False
    if filters.year_min is not None and (record.year is None or record.year < filters.year_min):
        return False
    if filters.year_max is not None and (record.year is None or record.year > filters.year_max):
        return False
    if filters.collections and record.collection not in filters.collections:
        return False
    if filters.readable and record.collection not in filters.readable:
        return False
    if filters.doc_types and record.doc_type not in filters.doc_types:
        return False
    if filters.evidence_types and record.evidence_type not in filters.evidence_types:
        return False
    if filters.topics and not set(filters.topics) & set(record.topics):
        return False
    if filters.doc_ids and record.doc_id not in filters.doc_ids:
        return False
    return record.doc_id not in filters.exclude_doc_ids


def keyword_matches(records: list[IndexRecord], terms: str, filters: Filters) -> set[str]:
    """Chunk ids sharing at least one term with `terms` and passing `filters`."""
    wanted = set(terms.split())
    return {r.chunk_id for r in records if matches(r, filters) and wanted & set(r.terms.split())}
