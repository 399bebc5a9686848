from pathlib import Path

import pytest

from evidenceqa.chunking import (
    STRATEGIES,
    ChunkingConfig,
    chunk_document,
    chunk_stats,
    context_loss,
    pack_paragraphs,
    stats_of_chunks,
)
from evidenceqa.documents import Document, Paragraph, Section
from evidenceqa.loaders import load
from evidenceqa.settings import Settings

SENTENCE = "Surgical site infection is reduced by chlorhexidine skin preparation before incision."


def _para(n_sentences: int, page: int | None = None) -> Paragraph:
    """Eleven words a sentence; each sentence distinct, so paragraph ends can be told apart."""
    sentences = [SENTENCE] + [
        f"Trial {i} found fewer wound infections after chlorhexidine use." for i in range(1, n_sentences)
    ]
    return Paragraph(text=" ".join(sentences), page=page)


def _doc() -> Document:
    return Document(
        doc_id="d1",
        title="Skin antisepsis in surgery",
        authors=["Doe, Jane", "Roe, Rick"],
        year=2021,
        journal="Case Reports in Surgery",
        topics=["Surgical Wound Infection"],
        sections=[
            Section("Abstract", [_para(3)], kind="abstract"),
            Section(
                "Methods",
                [_para(2, page=2)],
                sections=[Section("Patients", [_para(20, page=2), _para(25, page=3), _para(2, page=3)])],
            ),
            Section("Results", [_para(1, page=4)]),
        ],
    )


def test_default_strategy_has_one_overview_chunk_then_content():
    chunks = chunk_document(_doc(), ChunkingConfig(max_words=180))
    assert [c.hierarchy_level for c in chunks].count("document") == 1
    assert chunks[0].hierarchy_level == "document"
    overview = chunks[0].body
    assert "Skin antisepsis in surgery" in overview
    assert "Doe, Jane; Roe, Rick" in overview and "Year: 2021" in overview
    assert "Journal: Case Reports in Surgery" in overview
    assert SENTENCE in overview  # the abstract
    assert [c.position for c in chunks] == list(range(len(chunks)))


def test_content_chunks_carry_title_and_section_path():
    chunks = chunk_document(_doc(), ChunkingConfig(max_words=180))
    patients = [c for c in chunks if c.section_path == ["Methods", "Patients"]]
    assert patients
    for chunk in patients:
        assert chunk.text.startswith("Skin antisepsis in surgery\nMethods > Patients\n\n")
        assert chunk.text.endswith(chunk.body)
        assert chunk.year == 2021 and chunk.topics == ["Surgical Wound Infection"]


def test_paragraphs_never_cut_when_they_fit():
    # Patients: paragraphs of 20, 25 and 2 sentences (220, 275, 22 words) with max 300 words.
    chunks = chunk_document(_doc(), ChunkingConfig(max_words=300))
    bodies = [c.body for c in chunks if c.section_path == ["Methods", "Patients"]]
    assert bodies == [_para(20).text, _para(25).text + "\n\n" + _para(2).text]
    levels = {c.section_path[-1]: c.hierarchy_level for c in chunks if c.section_path}
    assert levels == {
        "Abstract": "section",
        "Methods": "section",
        "Patients": "paragraph",
        "Results": "section",
    }


def test_long_paragraph_is_split_at_sentences_not_mid_sentence():
    chunks = chunk_document(_doc(), ChunkingConfig(max_words=100))
    content = [c for c in chunks if c.hierarchy_level != "document"]
    assert all(len(c.body.split()) <= 100 for c in content)
    for chunk in content:
        assert chunk.body.endswith(("incision.", "use.")), chunk.body[-40:]
    # Nothing lost or duplicated: the section text is the concatenation of its chunks.
    patients = " ".join(c.body for c in content if c.section_path == ["Methods", "Patients"])
    assert patients.split() == " ".join(p.text for p in _doc().sections[1].sections[0].paragraphs).split()


def test_pages_follow_the_first_paragraph_of_each_chunk():
    chunks = chunk_document(_doc(), ChunkingConfig(max_words=300))
    pages = [(c.section_path[-1], c.page) for c in chunks if c.section_path]
    assert pages == [("Abstract", None), ("Methods", 2), ("Patients", 2), ("Patients", 3), ("Results", 4)]


def test_chunk_ids_are_stable_and_change_with_content():
    config = ChunkingConfig()
    first = [c.chunk_id for c in chunk_document(_doc(), config)]
    assert first == [c.chunk_id for c in chunk_document(_doc(), config)]
    assert len(set(first)) == len(first)
    changed = _doc()
    changed.sections[2].paragraphs[0].text += " More."
    second = [c.chunk_id for c in chunk_document(changed, config)]
    assert second[:-1] == first[:-1] and second[-1] != first[-1]
    assert all(cid.startswith("d1#") for cid in first)


@pytest.mark.parametrize(
    ("strategy", "levels"),
    [
        ("fixed-size", {"paragraph"}),
        ("section", {"section"}),
        ("hybrid", {"section", "paragraph"}),
        ("hierarchical", {"document", "section"}),
        ("hierarchical-paragraphs", {"document", "section", "paragraph"}),
    ],
)
def test_each_strategy_by_name(strategy, levels):
    chunks = chunk_document(_doc(), ChunkingConfig(strategy=strategy, max_words=150, fixed_words=300))
    assert {c.hierarchy_level for c in chunks} == levels


def test_fixed_size_windows_cover_all_words():
    doc = _doc()
    chunks = chunk_document(doc, ChunkingConfig(strategy="fixed-size", fixed_words=100))
    assert all(len(c.body.split()) == 100 for c in chunks[:-1])
    assert " ".join(c.body for c in chunks).split() == [w for p in doc.paragraphs() for w in p.text.split()]
    assert chunks[1].section_path == ["Methods", "Patients"]  # where the window starts


def test_hybrid_falls_back_to_windows_for_long_sections():
    chunks = chunk_document(_doc(), ChunkingConfig(strategy="hybrid", fixed_words=200))
    patients = [c for c in chunks if c.section_path == ["Methods", "Patients"]]
    assert len(patients) == 3 and all(c.hierarchy_level == "paragraph" for c in patients)


def test_unknown_strategy_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown chunking strategy 'nope'"):
        chunk_document(_doc(), ChunkingConfig(strategy="nope"))


def test_overview_respects_its_word_limit_and_has_no_abstract_fallback():
    doc = _doc()
    doc.sections = doc.sections[1:]  # no abstract: the overview leads with the first paragraphs
    overview = chunk_document(doc, ChunkingConfig(overview_max_words=120))[0]
    assert len(overview.body.split()) <= 120
    assert "Contents: Methods; Patients; Results" in overview.body
    assert SENTENCE in overview.body


def test_pack_paragraphs_groups_whole_paragraphs():
    paragraphs = [Paragraph(text="a " * 40), Paragraph(text="b " * 40), Paragraph(text="c " * 90)]
    groups = pack_paragraphs(paragraphs, 100)
    assert [[p.text[0] for p in g] for g in groups] == [["a", "b"], ["c"]]


def test_context_loss_counts_chunks_ending_inside_sentences_or_paragraphs():
    doc = _doc()
    paragraph_cut = chunk_document(doc, ChunkingConfig(strategy="hierarchical-paragraphs", max_words=1000))
    assert context_loss([doc], paragraph_cut).context_loss == 0.0
    sentence_cut = chunk_document(doc, ChunkingConfig(max_words=100))
    loss = context_loss([doc], sentence_cut)
    assert loss.mid_sentence == 0.0 and 0 < loss.mid_paragraph < 1
    windows = chunk_document(doc, ChunkingConfig(strategy="fixed-size", fixed_words=37))
    window_loss = context_loss([doc], windows)
    assert window_loss.mid_sentence > 0.5 and window_loss.chunks == len(windows)


def test_chunk_stats_row():
    stats = chunk_stats([_doc()], ChunkingConfig(max_words=100))
    assert stats.documents == 1 and stats.chunks > 5
    assert stats.over_limit == 0.0
    assert stats.max_words >= stats.avg_words > 0


def test_stats_of_stored_chunks_match_cutting_again():
    config = ChunkingConfig(strategy="hybrid", fixed_words=60)
    chunks = chunk_document(_doc(), config)
    assert stats_of_chunks([_doc()], chunks, config) == chunk_stats([_doc()], config)
    assert stats_of_chunks([_doc()], chunks[:2], config).chunks == 2


def test_chunking_config_from_settings():
    settings = Settings(
        chunk_strategy="section", chunk_max_words=90, fixed_chunk_words=300, overview_max_words=500
    )
    assert ChunkingConfig.of(settings) == ChunkingConfig("section", 90, 300, 500)
    assert ChunkingConfig.of(settings, "fixed-size").strategy == "fixed-size"


def test_default_strategy_on_real_articles(library_dir: Path):
    docs = [d for d in load(library_dir / "covidqa_articles.jsonl") if isinstance(d, Document)][:20]
    config = ChunkingConfig()
    for doc in docs:
        chunks = chunk_document(doc, config)
        assert chunks[0].hierarchy_level == "document"
        assert len(chunks[0].body.split()) <= config.overview_max_words
        body_words = [w for c in chunks[1:] for w in c.body.split()]
        assert body_words == [w for p in doc.paragraphs() for w in p.text.split()]
        assert all(len(c.body.split()) <= config.max_words for c in chunks[1:])
    rows = {name: chunk_stats(docs, ChunkingConfig(strategy=name)) for name in STRATEGIES}
    assert rows["section"].loss.context_loss == 0.0
    assert rows["fixed-size"].loss.context_loss > rows["hierarchical-paragraphs"].loss.context_loss
    assert rows["hierarchical-paragraphs"].loss.mid_sentence < 0.01


def _table(rows: int) -> Paragraph:
    lines = ["Table 1. Antiemetic doses.", "| Drug | Dose | Timing |", "| --- | --- | --- |"]
    lines += [f"| Drug {i} | {i} mg | at the end of surgery |" for i in range(rows)]
    return Paragraph("\n".join([*lines, "Note: doses for adults."]), kind="table")


def test_a_table_is_a_chunk_of_its_own_in_its_section():
    doc = Document(
        doc_id="t",
        title="PONV",
        sections=[Section("Results", [Paragraph("Nausea was common."), _table(3), Paragraph("It fell.")])],
    )
    chunks = [c for c in chunk_document(doc, ChunkingConfig()) if c.hierarchy_level != "document"]
    assert [c.body for c in chunks] == ["Nausea was common.", _table(3).text, "It fell."]
    assert all(c.section_path == ["Results"] for c in chunks)


def test_a_long_table_is_cut_between_rows_and_each_part_names_its_columns():
    doc = Document(doc_id="t", title="PONV", sections=[Section("Results", [_table(60)])])
    parts = [
        c.body for c in chunk_document(doc, ChunkingConfig(max_words=120)) if c.hierarchy_level != "document"
    ]
    assert len(parts) > 2
    for part in parts:
        assert part.startswith(
            "Table 1. Antiemetic doses.\n| Drug | Dose | Timing |\n| --- | --- | --- |\n| Drug "
        )
        assert len(part.split()) <= 120 or part.endswith("Note: doses for adults.")
    rows = [line for part in parts for line in part.split("\n") if line.endswith("surgery |")]
    assert rows == [f"| Drug {i} | {i} mg | at the end of surgery |" for i in range(60)]  # each row once
    assert parts[-1].endswith("Note: doses for adults.") and not parts[0].endswith("adults.")
