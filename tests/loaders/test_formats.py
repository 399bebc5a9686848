"""Across formats: the same article read from JATS, BMC XML, HTML and PDF agrees with itself.

The file-by-file results for every real file are the table in docs/formats.md, which
tests/test_docs.py regenerates and compares.
"""

import pytest

from evidenceqa.documents import Document
from evidenceqa.loaders import load

SAME_ARTICLE = {
    "doi:10.1186/s13063-014-0529-5": [
        "edge_cases/non_jats_bmc_xml/trials_16_1_19/fulltext.xml",
        "html/bmc_trials/trials_16_1_19/fulltext.html",
        "pdf/bmc_trials/trials_16_1_19/fulltext.pdf",
    ],
    "doi:10.1155/2016/1396568": [
        "jats_xml/hindawi_epmc/PMC4739218/fulltext.xml",
        "pdf/hindawi_epmc/PMC4739218/fulltext.pdf",
    ],
}


@pytest.mark.parametrize("doc_id", SAME_ARTICLE)
def test_one_article_in_several_formats_gets_one_id_title_and_year(formats_dir, doc_id):
    docs = [next(iter(load(formats_dir / relative))) for relative in SAME_ARTICLE[doc_id]]
    assert all(isinstance(d, Document) for d in docs), docs
    assert {d.doc_id for d in docs} == {doc_id}
    assert len({d.title.lower() for d in docs}) == 1
    assert len({d.year for d in docs}) == 1


@pytest.mark.parametrize(
    ("relative", "journal"),
    [
        ("jats_xml/hindawi_epmc/PMC4739218/fulltext.xml", "Case Reports in Surgery"),
        ("jats_xml/allofplos/journal.pmed.0020007.xml", "PLoS Medicine"),
        ("edge_cases/non_jats_bmc_xml/trials_16_1_2/fulltext.xml", "Trials"),
        ("html/bmc_trials/trials_16_1_19/fulltext.html", "Trials"),
    ],
)
def test_journal_is_kept_for_citations(formats_dir, relative, journal):
    [doc] = load(formats_dir / relative)
    assert doc.journal == journal
