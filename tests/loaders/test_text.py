from evidenceqa.documents import Document
from evidenceqa.loaders import LoadError, load

MARKDOWN = """---
title: Preoperative skin antisepsis
year: 2022
doi: https://doi.org/10.1000/XYZ.1
authors: Doe, J.; Roe, R.
topics: antisepsis, surgery
---
# Ignored because front matter gives the title

Opening paragraph
over two lines.

## Methods

- chlorhexidine 2%
- povidone-iodine

### Outcomes

Surgical site infection at 30 days.

```
code block

kept whole
```

## Results
Fewer infections.
"""


def test_markdown_headings_nest_and_front_matter_gives_metadata(tmp_path):
    path = tmp_path / "guide.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    [doc] = load(path)
    assert isinstance(doc, Document)
    assert doc.title == "Preoperative skin antisepsis"
    assert (doc.year, doc.doi, doc.doc_id) == (2022, "10.1000/XYZ.1", "doi:10.1000/xyz.1")
    assert doc.authors == ["Doe, J.", "Roe, R."] and doc.topics == ["antisepsis", "surgery"]
    assert doc.sections[0].heading is None
    assert [p.text for p in doc.sections[0].paragraphs] == ["Opening paragraph over two lines."]
    methods = doc.sections[1]
    assert methods.heading == "Methods"
    assert [p.kind for p in methods.paragraphs] == ["list"]
    assert methods.sections[0].heading == "Outcomes"
    assert methods.sections[0].paragraphs[1].text == "``` code block kept whole ```"
    assert doc.sections[2].paragraphs[0].text == "Fewer infections."


def test_first_h1_becomes_the_title_without_front_matter(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("# Hand hygiene\n\nWash hands.\n\n# Second top heading\n\nMore.\n", encoding="utf-8")
    [doc] = load(path)
    assert doc.title == "Hand hygiene"
    assert [s.heading for s in doc.sections] == [None, "Second top heading"]
    assert doc.doc_id == "file:note"


def test_plain_text_paragraphs(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("First paragraph.\r\n\r\nSecond\r\nparagraph.\r\n", encoding="utf-8")
    [doc] = load(path)
    assert [p.text for p in doc.paragraphs()] == ["First paragraph.", "Second paragraph."]


def test_non_utf8_and_empty_text_are_clear_errors(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Caf\xe9 notes".encode("latin-1"))
    blank = tmp_path / "blank.md"
    blank.write_text("# Only a title\n", encoding="utf-8")
    assert [str(e) for e in load(latin)] == [f"{latin}: not UTF-8 text (invalid byte at offset 3)"]
    assert [str(e) for e in load(blank)] == [f"{blank}: no text"]
    assert all(isinstance(e, LoadError) for e in [*load(latin), *load(blank)])
