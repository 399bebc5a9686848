"""Reading one file has a time limit in every format (setting max_read_seconds): the clock counts the
loader's own work, not the caller's storing, and a file past it costs one clear error, not the batch."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from evidenceqa.chunking import ChunkingConfig
from evidenceqa.documents import Document
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import LoadError, limits, load
from evidenceqa.loaders.limits import LimitExceeded, timed
from evidenceqa.settings import Settings

TEXT = "Clipping hair before surgery lowered the surgical site infection rate in every trial. " * 3


class FakeTime:
    """The clock `limits` reads: seconds pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_only_the_loaders_own_time_counts_not_the_callers(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTime()
    monkeypatch.setattr(limits, "time", fake)

    def loader() -> Iterator[int]:
        for number in range(1, 5):
            fake.now += 0.4  # reading one record
            limits.check("record", number)
            yield number

    read = []
    with pytest.raises(LimitExceeded) as stopped:
        for number in timed(loader(), limit_s=1.0):
            read.append(number)
            fake.now += 100.0  # the caller storing it: never counted
    # 0.4 + 0.4 s are within the second; the third record's reading passes it.
    assert read == [1, 2]
    assert str(stopped.value) == (
        "reading took longer than 1 s (setting max_read_seconds; stopped at record 3)"
    )


def test_a_loader_that_never_checks_still_stops_at_its_next_document(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTime()
    monkeypatch.setattr(limits, "time", fake)

    def plugin_loader() -> Iterator[str]:
        for name in ("a", "b", "c"):
            fake.now += 0.6
            yield name

    read = []
    with pytest.raises(LimitExceeded, match=r"stopped at document 2\)$"):
        read.extend(timed(plugin_loader(), limit_s=1.0))
    assert read == ["a"]


def test_outside_a_timed_read_check_never_stops_anything() -> None:
    limits.check("line", 1)  # a loader called on its own (tests, tools) reads without a clock


def _jats(sections: int) -> str:
    body = "".join(f"<sec><title>Part {i}</title><p>{TEXT}</p></sec>" for i in range(sections))
    return (
        "<article><front><article-meta><title-group><article-title>Hair removal</article-title>"
        f"</title-group></article-meta></front><body>{body}</body></article>"
    )


FILES = {
    "jats.xml": _jats(3),
    "bmc.xml": f"<art><fm><bibl><title><p>Hair removal</p></title></bibl></fm><bdy><sec><st><p>Methods</p></st><p>{TEXT}</p></sec></bdy></art>",
    "page.html": f"<html><head><title>Hair removal</title></head><body><main><h2>Methods</h2><p>{TEXT}</p><p>{TEXT}</p></main></body></html>",
    "medquad.xml": '<Document id="0001" source="GARD"><Focus>Hair removal</Focus><QAPairs><QAPair pid="1">'
    f'<Question qid="1" qtype="information">What is hair removal?</Question><Answer>{TEXT}</Answer>'
    "</QAPair></QAPairs></Document>",
    "notes.md": f"# Hair removal\n\n{TEXT}\n\n## Methods\n\n{TEXT}\n",
    "records.jsonl": "".join(
        json.dumps({"doc_id": f"d{i}", "title": "Hair removal", "sections": [{"paragraphs": [TEXT]}]}) + "\n"
        for i in range(3)
    ),
}


@pytest.mark.parametrize("name", FILES)
def test_every_format_is_read_within_the_limit_and_refused_past_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(FILES[name])
    read = list(load(path))
    assert read and all(isinstance(item, Document) for item in read), read
    # With no time at all the loader stops at its first check, and says where in the file it was.
    [error] = list(load(path, max_seconds=1e-9))
    assert isinstance(error, LoadError) and error.path == str(path)
    assert re.fullmatch(
        r"refused: reading took longer than 1e-09 s \(setting max_read_seconds; stopped at line \d+\)",
        error.reason,
    ), error.reason


def test_a_file_past_the_limit_costs_only_itself_in_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loaders' clock ticks 10 ms at each reading, so the outcome is the same on any machine.
    ticks = itertools.count()
    monkeypatch.setattr(limits, "time", SimpleNamespace(monotonic=lambda: next(ticks) * 0.01))
    slow = tmp_path / "a-slow.xml"
    slow.write_text(_jats(2_000))  # thousands of sections: seconds on that clock
    good = tmp_path / "b-good.xml"
    good.write_text(_jats(2))  # a few readings
    with Catalogue(tmp_path / "home" / "catalogue.sqlite3") as catalogue:
        ingestor = Ingestor(catalogue, ChunkingConfig(), max_read_seconds=0.5)
        refused, ingested = ingestor.ingest_file(slow), ingestor.ingest_file(good)
        assert [d.source for d in catalogue.iter_documents()] == [str(good)]
    assert refused.status == "failed"
    assert "refused: reading took longer than 0.5 s (setting max_read_seconds" in str(refused.errors[0])
    assert ingested.status == "ingested" and ingested.added == 1


def test_the_limit_is_a_setting_with_a_sane_default() -> None:
    assert Settings().max_read_seconds == 300
    with pytest.raises(ValueError, match="max_read_seconds"):
        Settings(max_read_seconds=0)


def test_documents_read_before_the_limit_of_a_jsonl_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeTime()
    monkeypatch.setattr(limits, "time", fake)
    path = tmp_path / "records.jsonl"
    path.write_text(FILES["records.jsonl"])
    parse = Document.from_dict

    def slow_parse(data: dict[str, object]) -> Document:
        fake.now += 0.4  # each record takes 0.4 s to read
        return parse(data)

    monkeypatch.setattr(Document, "from_dict", staticmethod(slow_parse))
    read = list(load(path, max_seconds=1.0))
    assert [d.doc_id for d in read if isinstance(d, Document)] == ["d0", "d1"]
    assert str(read[-1]) == (
        f"{path}: refused: reading took longer than 1 s (setting max_read_seconds; stopped at line 3)"
    )
