"""Build the bundled sample library under data/sample/ from the shared data folder.

Usage (from the repository root; stdlib only, re-runnable, deterministic):

    .venv/bin/python scripts/build_sample_library.py [--shared ../shared/data] [--out data/sample]

The sample lets a newcomer try evidenceqa on a fresh machine without the shared data folder. It is
small (about 1.6 MB), real and redistributable. Nothing is edited: library records are copied as the
exact lines of the source JSONL, files byte-for-byte (each checked against the git blob hash recorded
in formats/SOURCES.md). Every output keeps the order of its source, so a re-run over the same shared
data gives byte-identical output. The script rewrites `library/`, `files/` and `licenses/` under
--out from scratch (stale files there are removed) and regenerates ATTRIBUTION.md and README.md.

Selection rules
---------------
library/pubmedqa_periop.jsonl
    Every abstract of library/pubmedqa_abstracts.jsonl that is a gold document of a question in
    benchmarks/pubmedqa.jsonl with `meta.periop_surgical == true` (the data set's own flag).
library/medquad_periop.jsonl
    MedQuAD pages (library/medquad_nih.jsonl.gz) whose title contains, as whole words and ignoring
    case, one of the terms in MEDQUAD_TERMS (infection prevention, surgery and anaesthesia, wounds
    and trauma, blood clots and bleeding, perioperative risk). Only titles are matched: MedQuAD
    section headings are question types (Symptoms, Treatment, ...) and say nothing about the topic.
    Left out: GHR pages (a catalogue of genetic conditions), titles containing a term of
    MEDQUAD_EXCLUDE (rare syndromes whose names happen to contain a keyword), and the pages that are
    bundled as raw MedQuAD XML under files/ (so ingesting library/ and files/ together gives no
    duplicates).
library/covidqa_infection_control.jsonl
    COVID-QA full-text articles whose title and text mention at least COVIDQA_MIN_TERMS distinct
    infection-control terms of COVIDQA_TERMS (hand hygiene, masks, PPE, isolation, nosocomial
    spread, ...); at most COVIDQA_MAX of them, the highest-scoring first to be kept, ties broken by
    source order, written in source order.
files/
    The files in FILES, at the same relative path as under formats/: two JATS XML case reports on
    surgical infections, the smallest real article PDF, one publisher HTML article page (surgical
    wound dressing) and three MedQuAD XML pages (CDC, NHLBI). No edge cases, no licence texts
    (the ingest step would read a .txt there as a document).
licenses/
    CC-BY-4.0.txt (copied from formats/medquad_xml/LICENSE.txt) and MIT-PubMedQA.txt (the
    PubMedQA licence, https://github.com/pubmedqa/pubmedqa/blob/master/LICENSE).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = Path(os.environ.get("EVIDENCEQA_SHARED_DATA", REPO.parent / "shared" / "data"))
DEFAULT_OUT = REPO / "data" / "sample"
GENERATED_DIRS = ("library", "files", "licenses")

# fmt: off
MEDQUAD_TERMS: dict[str, tuple[str, ...]] = {
    "infection prevention": (
        "infection control", "germs and hygiene", "healthcare settings", "healthcare providers",
        "acinetobacter", "mrsa", "staphylococcal", "streptococcal", "clostridium difficile", "antibiotic",
        "antibiotics", "bacterial infections", "klebsiella", "sepsis", "septic", "cellulitis", "abscess",
        "gangrene", "necrotizing fasciitis", "tetanus", "tuberculosis", "pneumonia", "pneumococcal",
        "legionnaires", "endocarditis", "bone infections", "infectious arthritis",
        "prosthetic joint infection", "urinary tract infection", "urinary tract infections",
        "kidney infection", "skin infections",
    ),
    "surgery and anaesthesia": (
        "surgery", "surgical", "anesthesia", "anaesthesia", "malignant hyperthermia", "angioplasty",
        "bone grafts", "breast reconstruction", "cesarean section", "hysterectomy", "mastectomy",
        "tubal ligation", "vasectomy", "circumcision", "hip replacement", "knee replacement",
        "transplantation", "organ donation", "ostomy", "hernia", "appendicitis", "adhesions",
        "intestinal obstruction", "gallstones", "aortic aneurysm", "biopsy", "endoscopy", "colonoscopy",
        "critical care", "delirium", "shock", "respiratory failure", "ards", "pain relievers",
        "latex allergy", "anaphylaxis", "limb loss", "artificial limbs", "medical device safety",
        "medication errors",
    ),
    "wounds and trauma": (
        "wounds", "burns", "pressure sores", "scars", "fractures", "dislocations", "head injuries",
        "traumatic brain injury", "spinal cord injuries", "first aid", "perineal injury",
    ),
    "blood clots and bleeding": (
        "blood clots", "thrombosis", "embolism", "blood thinners", "bleeding", "blood transfusion",
        "hemophilia", "von willebrand", "disseminated intravascular coagulation",
        "heparin-induced thrombocytopenia", "thrombophilia", "antiphospholipid",
    ),
    "perioperative risk": (
        "sleep apnea", "nutritional support", "malnutrition", "nausea and vomiting",
        "fluid and electrolyte balance", "dehydration", "hypothermia", "oxygen therapy",
        "quitting smoking",
    ),
}
MEDQUAD_EXCLUDE = (
    "dysplasia", "chondrodysplasia", "muscular atrophy", "encephalopathy", "arthrogryposis",
    "organizing pneumonia", "eosinophilic pneumonia", "glaucoma",
)
MEDQUAD_EXCLUDED_SOURCES = ("GHR",)

COVIDQA_TERMS = (  # regular expressions; each counts once however often it matches
    "hand hygiene", "hand[- ]?washing", "masks?", "infection control", "infection prevention",
    "personal protective equipment", "nosocomial", "healthcare-associated", "hospital-acquired",
    "isolation rooms?", "negative pressure", "quarantine", "droplets?", "airborne", "contact precautions",
    r"disinfect\w*", "cross-infection",
)
# fmt: on
COVIDQA_MIN_TERMS = 3
COVIDQA_MAX = 10
MAX_BYTES = 5_000_000  # the whole sample must stay below this


@dataclass(frozen=True)
class BundledFile:
    """A file copied from formats/ into files/, with the credit line its licence asks for."""

    path: str  # relative to formats/ and to files/
    what: str
    credit: str
    licence_text: str = "licenses/CC-BY-4.0.txt"


FILES: tuple[BundledFile, ...] = (
    BundledFile(
        "jats_xml/hindawi_epmc/PMC4739218/fulltext.xml",
        "JATS 1.1 XML (Europe PMC) of a surgical case report: an infected abdominal aortic aneurysm",
        "Nishida K, Iwasawa T, Tamura A, Lefor AT. Infected Abdominal Aortic Aneurysm with "
        "Helicobacter cinaedi. Case Reports in Surgery. 2016;2016:1396568. "
        "doi:10.1155/2016/1396568. Licensed under the Creative Commons Attribution License.",
    ),
    BundledFile(
        "jats_xml/hindawi_epmc/PMC4745277/fulltext.xml",
        "JATS 1.1 XML (Europe PMC) of an orthopaedic case report: one-stage revision of infected "
        "total hip arthroplasties and their antibiotic therapy",
        "Pommepuy T, Lons A, Benad K, Beltrand E, Senneville E, Migaud H. Bilateral One-Stage "
        "Revision of Infected Total Hip Arthroplasties: Report of Two Cases and Management of "
        "Antibiotic Therapy. Case Reports in Orthopedics. 2016;2016:3621749. "
        "doi:10.1155/2016/3621749. Licensed under the Creative Commons Attribution License.",
    ),
    BundledFile(
        "pdf/bmc_trials/trials_16_1_2/fulltext.pdf",
        "publisher PDF (text layer, two columns) of a trial protocol on detecting and preventing "
        "adverse drug events (patient safety); the smallest real article PDF in the shared data",
        "Forster AJ, Erlanger TE, Jennings A, Auger C, Buckeridge D, van Walraven C, Tamblyn R. "
        "Effectiveness of a computerized drug-monitoring program to detect and prevent adverse drug "
        "events and medication non-adherence in outpatient ambulatory care: study protocol of a "
        "randomized controlled trial. Trials. 2015;16:2. doi:10.1186/1745-6215-16-2. CC BY 4.0.",
    ),
    BundledFile(
        "html/bmc_trials/trials_16_1_19/fulltext.html",
        "publisher web page (XHTML that is not well-formed XML, parse as HTML) of a trial protocol "
        "on postoperative wound dressing after breast augmentation",
        "Mendes DA, Veiga DF, Veiga-Filho J, Fonseca FEM, de Paiva LF, Novo NF, Loyola ABAT, "
        "Ferreira LM. Application time for postoperative wound dressing following breast "
        "augmentation with implants: study protocol for a randomized controlled trial. Trials. "
        "2015;16:19. doi:10.1186/s13063-014-0529-5. Article text CC BY 4.0; page template and "
        "scripts are BioMed Central's.",
    ),
    BundledFile(
        "medquad_xml/9_CDC_QA/0000003.xml",
        'MedQuAD XML page (CDC): "Acinetobacter in Healthcare Settings", 5 question-answer pairs',
        "MedQuAD (Ben Abacha & Demner-Fushman 2019), CC BY 4.0; content from the CDC web page "
        '"Acinetobacter in Healthcare Settings".',
    ),
    BundledFile(
        "medquad_xml/9_CDC_QA/0000399.xml",
        'MedQuAD XML page (CDC): "Tuberculosis (TB)", 5 question-answer pairs',
        "MedQuAD (Ben Abacha & Demner-Fushman 2019), CC BY 4.0; content from the CDC web page "
        '"Tuberculosis (TB)".',
    ),
    BundledFile(
        "medquad_xml/8_NHLBI_QA_XML/0000051.xml",
        'MedQuAD XML page (NHLBI): "Deep Vein Thrombosis", 7 question-answer pairs',
        "MedQuAD (Ben Abacha & Demner-Fushman 2019), CC BY 4.0; content from the NHLBI web page "
        '"Deep Vein Thrombosis".',
    ),
)

MEDQUAD_CITATION = (
    "Ben Abacha A, Demner-Fushman D. A question-entailment approach to question answering. "
    "BMC Bioinformatics. 2019;20:511. https://github.com/abachaa/MedQuAD"
)
PUBMEDQA_CITATION = (
    "Jin Q, Dhingra B, Liu Z, Cohen WW, Lu X. PubMedQA: A Dataset for Biomedical Research Question "
    "Answering. EMNLP-IJCNLP 2019. https://github.com/pubmedqa/pubmedqa"
)
COVIDQA_CITATION = (
    "Möller T, Reina A, Jayakumar R, Pietsch M. COVID-QA: A Question Answering Dataset for COVID-19. "
    "Proceedings of the 1st Workshop on NLP for COVID-19 at ACL 2020. "
    "https://github.com/deepset-ai/COVID-QA"
)
# LICENSE of https://github.com/pubmedqa/pubmedqa (blob at commit 43bc82ee83892812d1be2355b984fe34cf063f40).
MIT_PUBMEDQA = """MIT License

Copyright (c) 2019 pubmedqa

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


@dataclass
class Collection:
    """One output JSONL file: the selected source lines and what ATTRIBUTION.md says about them."""

    out_name: str
    source: str
    what: str
    rule: str
    licence: str
    attribution: str
    lines: list[bytes] = field(default_factory=list)

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]


# --- reading the shared data -------------------------------------------------------------------


def read_lines(path: Path) -> Iterator[bytes]:
    """The raw lines of a JSONL file (gzipped or not), each ending in a newline."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield line if line.endswith(b"\n") else line + b"\n"


def word_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """Whole-word, case-insensitive alternation of the terms (terms may hold tiny regexes)."""
    return re.compile(r"\b(?:" + "|".join(terms) + r")\b", re.IGNORECASE)


def bundled_medquad_ids() -> set[str]:
    """Library doc_ids of the MedQuAD XML pages in FILES (9_CDC_QA/0000003.xml -> medquad-9_0000003)."""
    ids = set()
    for item in FILES:
        parts = Path(item.path).parts
        if parts[0] == "medquad_xml":
            ids.add(f"medquad-{parts[1].split('_')[0]}_{Path(parts[2]).stem}")
    return ids


# --- selection ---------------------------------------------------------------------------------


def periop_pubmed_ids(shared: Path) -> set[str]:
    ids: set[str] = set()
    for line in read_lines(shared / "benchmarks" / "pubmedqa.jsonl"):
        row = json.loads(line)
        if row.get("meta", {}).get("periop_surgical") is True:
            ids.update(row["gold_doc_ids"])
    return ids


def select_pubmedqa(shared: Path) -> Collection:
    wanted = periop_pubmed_ids(shared)
    lines = [x for x in read_lines(shared / "library" / "pubmedqa_abstracts.jsonl") if _doc_id(x) in wanted]
    return Collection(
        out_name="pubmedqa_periop.jsonl",
        source="library/pubmedqa_abstracts.jsonl",
        what="structured PubMed abstracts of surgical and perioperative studies, with MeSH topics "
        "and years; without titles, as in the data set",
        rule="every abstract that is a gold document of a benchmarks/pubmedqa.jsonl question with "
        "meta.periop_surgical == true",
        licence="MIT (PubMedQA), see licenses/MIT-PubMedQA.txt. Each record's `url` points to its "
        "PubMed entry; the abstracts remain the work of their authors and journals.",
        attribution=PUBMEDQA_CITATION + ". Copyright (c) 2019 pubmedqa, MIT License.",
        lines=lines,
    )


def medquad_matches(record: dict, include: re.Pattern[str], exclude: re.Pattern[str]) -> bool:
    title = record.get("title") or ""
    if set(record.get("authors") or []) & set(MEDQUAD_EXCLUDED_SOURCES):
        return False
    return bool(include.search(title)) and not exclude.search(title)


def select_medquad(shared: Path) -> Collection:
    include = word_pattern(tuple(re.escape(t) for terms in MEDQUAD_TERMS.values() for t in terms))
    exclude = word_pattern(tuple(re.escape(t) for t in MEDQUAD_EXCLUDE))
    skip = bundled_medquad_ids()
    lines = []
    for line in read_lines(shared / "library" / "medquad_nih.jsonl.gz"):
        record = json.loads(line)
        if record["doc_id"] not in skip and medquad_matches(record, include, exclude):
            lines.append(line)
    return Collection(
        out_name="medquad_periop.jsonl",
        source="library/medquad_nih.jsonl.gz",
        what="NIH and CDC patient-information pages on infection prevention, surgery and "
        "anaesthesia, wounds and trauma, blood clots and bleeding, and perioperative risk; one "
        "section per question type",
        rule="title matches a MEDQUAD_TERMS term (whole words, any case); not GHR; title has no "
        "MEDQUAD_EXCLUDE term; not one of the pages bundled as XML under files/",
        licence="CC BY 4.0 (MedQuAD), see licenses/CC-BY-4.0.txt. Content drawn from US NIH and CDC "
        "websites (each record's `url`).",
        attribution=MEDQUAD_CITATION + ". Licensed under CC BY 4.0.",
        lines=lines,
    )


def covidqa_score(record: dict, patterns: list[re.Pattern[str]]) -> int:
    """Number of distinct infection-control terms found in the title and all paragraphs."""
    parts = [record.get("title") or ""]
    parts += [p for section in record.get("sections", []) for p in section.get("paragraphs", [])]
    text = " ".join(parts)
    return sum(1 for pattern in patterns if pattern.search(text))


def select_covidqa(shared: Path) -> Collection:
    patterns = [word_pattern((term,)) for term in COVIDQA_TERMS]
    lines = list(read_lines(shared / "library" / "covidqa_articles.jsonl"))
    scores = [covidqa_score(json.loads(line), patterns) for line in lines]
    ranked = sorted((i for i, s in enumerate(scores) if s >= COVIDQA_MIN_TERMS), key=lambda i: -scores[i])
    keep = sorted(ranked[:COVIDQA_MAX])
    return Collection(
        out_name="covidqa_infection_control.jsonl",
        source="library/covidqa_articles.jsonl",
        what="full-text journal articles from CORD-19 / PubMed Central on infection control, "
        "transmission in healthcare settings, hand hygiene, masks and PPE",
        rule=f"at least {COVIDQA_MIN_TERMS} distinct COVIDQA_TERMS in title + text; the "
        f"{COVIDQA_MAX} highest-scoring at most, written in source order",
        licence="Articles: CC BY (record `license` field), authors credited below. Collection and "
        "annotations: COVID-QA, Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0).",
        attribution=COVIDQA_CITATION + ". COVID-QA is licensed under the Apache License, Version 2.0.",
        lines=[lines[i] for i in keep],
    )


def _doc_id(line: bytes) -> str:
    return json.loads(line)["doc_id"]


# --- files -------------------------------------------------------------------------------------


def parse_sources(sources_md: Path) -> dict[str, dict[str, str]]:
    """The rows of formats/SOURCES.md, keyed by local path."""
    keys = ("repo", "source_path", "commits", "blob", "size", "licence", "description")
    rows: dict[str, dict[str, str]] = {}
    for line in sources_md.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 8 and "/" in cells[0] and cells[1] != "source repo":
            rows[cells[0]] = dict(zip(keys, cells[1:], strict=True))
    return rows


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def copy_verified(src: Path, dest: Path, blob: str | None) -> None:
    """Copy byte-for-byte, refusing a file whose git blob hash differs from SOURCES.md."""
    data = src.read_bytes()
    if blob is not None and git_blob_sha1(data) != blob:
        raise SystemExit(f"{src}: git blob hash differs from SOURCES.md ({blob})")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)


def copy_files(formats: Path, out: Path, sources: dict[str, dict[str, str]]) -> None:
    for item in FILES:
        if item.path not in sources:
            raise SystemExit(f"{item.path} is not listed in formats/SOURCES.md")
        copy_verified(formats / item.path, out / "files" / item.path, sources[item.path]["blob"])


def write_licences(formats: Path, out: Path, sources: dict[str, dict[str, str]]) -> None:
    licence = "medquad_xml/LICENSE.txt"
    copy_verified(formats / licence, out / "licenses" / "CC-BY-4.0.txt", sources[licence]["blob"])
    write_text(out / "licenses" / "MIT-PubMedQA.txt", MIT_PUBMEDQA)


# --- documentation -----------------------------------------------------------------------------


def write_text(path: Path, text: str) -> None:
    """UTF-8 with LF line ends on every platform, so the output is byte-identical everywhere."""
    path.write_text(text, encoding="utf-8", newline="\n")


def md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def short_authors(authors: list[str]) -> str:
    if not authors:
        return "n.a."
    return "; ".join(authors[:3]) + ("; et al." if len(authors) > 3 else "")


def selection_rules_md() -> list[str]:
    lines = ["## Selection rules", "", "Records and files are copied verbatim, never edited.", ""]
    lines.append("MedQuAD title terms (whole words, any case), by theme:")
    lines.append("")
    for theme, terms in MEDQUAD_TERMS.items():
        lines.append(f"- {theme}: {', '.join(terms)}")
    lines += ["", f"MedQuAD exclusions: source {', '.join(MEDQUAD_EXCLUDED_SOURCES)}; title terms "]
    lines[-1] += ", ".join(MEDQUAD_EXCLUDE) + "; the pages bundled as XML under files/."
    lines += ["", "COVID-QA infection-control terms (regular expressions, whole words, any case): "]
    lines[-1] += ", ".join(f"`{t}`" for t in COVIDQA_TERMS) + "."
    return [*lines, ""]


def collection_md(coll: Collection) -> list[str]:
    lines = [
        f"### library/{coll.out_name}",
        "",
        f"- What: {coll.what}.",
        f"- Documents: {len(coll.lines)}",
        f"- Source: shared data `{coll.source}` (library JSONL).",
        f"- Selection: {coll.rule}.",
        f"- Licence: {coll.licence}",
        f"- Attribution: {coll.attribution}",
        "",
    ]
    return lines + collection_details_md(coll)


def collection_details_md(coll: Collection) -> list[str]:
    if coll.out_name.startswith("covidqa"):
        rows = [
            f"| {r['doc_id']} | {md_cell(short_authors(r['authors']))} | {r['year']} | "
            f"{md_cell(r['title'])} | {r['doi']} | {r['license']} |"
            for r in coll.records()
        ]
        return ["| doc_id | authors | year | title | DOI | licence |", "|---|---|---|---|---|---|", *rows, ""]
    if coll.out_name.startswith("medquad"):
        rows = [
            f"| {r['doc_id']} | {md_cell(r['title'])} | {md_cell(', '.join(r['authors']))} | {r['url']} |"
            for r in coll.records()
        ]
        return ["| doc_id | title | source | url |", "|---|---|---|---|", *rows, ""]
    return []


def file_md(item: BundledFile, row: dict[str, str]) -> list[str]:
    return [
        f"### files/{item.path}",
        "",
        f"- What: {item.what}.",
        "- Documents: 1",
        f"- Notes (formats/SOURCES.md): {row['description']}",
        f"- Source: GitHub `{row['repo']}`, path `{row['source_path']}`, snapshot commit / last "
        f"commit touching the path {row['commits']}, git blob {row['blob']}, {row['size']} bytes "
        f"(shared data `formats/{item.path}`).",
        f"- Licence: {row['licence']} Licence text: `{item.licence_text}`.",
        f"- Attribution: {item.credit}",
        "",
    ]


def licences_md() -> list[str]:
    return [
        "## Licence texts",
        "",
        "- `licenses/CC-BY-4.0.txt`: Creative Commons Attribution 4.0 International, full text, "
        "copied from MedQuAD's LICENSE.txt (shared data `formats/medquad_xml/LICENSE.txt`). It covers "
        "the MedQuAD pages and files and the articles under CC BY 4.0. The Hindawi articles state "
        '"Creative Commons Attribution License" without a version and the COVID-QA records say '
        '"CC-BY"; see each article\'s own licence statement.',
        "- `licenses/MIT-PubMedQA.txt`: the PubMedQA licence (MIT, Copyright (c) 2019 pubmedqa).",
        "- Apache License 2.0 (COVID-QA annotations and collection; ContentMine and other hosting "
        "repositories' code licences, which cover code, not the articles): full text at "
        "https://www.apache.org/licenses/LICENSE-2.0. Notice: COVID-QA (deepset), licensed under "
        "the Apache License, Version 2.0.",
        "",
    ]


def attribution_md(collections: list[Collection], sources: dict[str, dict[str, str]]) -> str:
    lines = [
        "# Sample library: attribution and licences",
        "",
        "Generated by `scripts/build_sample_library.py`; do not edit by hand. Everything here is "
        "public data whose licence allows redistribution, copied verbatim from the project's shared "
        "data folder, which took it from the sources named below.",
        "",
        *selection_rules_md(),
        "## Library JSONL (`library/`)",
        "",
    ]
    for coll in collections:
        lines += collection_md(coll)
    lines += ["## Files in other formats (`files/`)", ""]
    for item in FILES:
        lines += file_md(item, sources[item.path])
    return "\n".join(lines + licences_md())


def tree_size(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def readme_md(collections: list[Collection], size: int) -> str:
    counts = "\n".join(f"- `library/{c.out_name}`: {len(c.lines)} documents ({c.what})" for c in collections)
    files = "\n".join(f"- `files/{item.path}`" for item in FILES)
    total = sum(len(c.lines) for c in collections) + len(FILES)
    return f"""# Sample library

A small real library ({total} documents, about {size / 1_000_000:.1f} MB) on surgery, perioperative care
and infection prevention, bundled so that evidenceqa can be tried without the shared data folder.

Library JSONL (one document per line, the neutral library format), copied verbatim:

{counts}

Files in other formats, copied byte-for-byte, to show multi-format ingest (JATS XML, PDF, HTML,
MedQuAD XML):

{files}

Ingest `library/` and `files/` (not this folder as a whole: its Markdown files are not documents).
Licence texts are in `licenses/`; sources, licences, attribution and the selection rules are in
`ATTRIBUTION.md`.

Regenerate (needs the shared data folder; output is byte-identical for the same shared data):

    .venv/bin/python scripts/build_sample_library.py --shared ../shared/data --out data/sample
"""


# --- main --------------------------------------------------------------------------------------


def build(shared: Path, out: Path) -> list[Collection]:
    formats = shared / "formats"
    sources = parse_sources(formats / "SOURCES.md")
    for name in GENERATED_DIRS:
        shutil.rmtree(out / name, ignore_errors=True)
    (out / "library").mkdir(parents=True)
    collections = [select_pubmedqa(shared), select_medquad(shared), select_covidqa(shared)]
    for coll in collections:
        (out / "library" / coll.out_name).write_bytes(b"".join(coll.lines))
    copy_files(formats, out, sources)
    write_licences(formats, out, sources)
    write_text(out / "ATTRIBUTION.md", attribution_md(collections, sources))
    size = sum(tree_size(out / name) for name in GENERATED_DIRS) + (out / "ATTRIBUTION.md").stat().st_size
    write_text(out / "README.md", readme_md(collections, size))
    if size > MAX_BYTES:
        raise SystemExit(f"the sample is {size:,} bytes, over the {MAX_BYTES:,} limit: select less")
    return collections


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the sample")
    args = parser.parse_args(argv)
    collections = build(args.shared, args.out)
    for coll in collections:
        print(f"library/{coll.out_name}: {len(coll.lines)} documents")
    print(f"files/: {len(FILES)} files; total {tree_size(args.out):,} bytes in {args.out}")


if __name__ == "__main__":
    main()
