"""The performance benchmarks' plumbing: scale copies, a build's record, and the targets read from records."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evidenceqa.text.sentences import split_sentences
from tests.conftest import REPO, SAMPLE

BENCHMARKS = REPO / "benchmarks"


def script(name: str, *args: str, env: dict[str, str] | None = None) -> str:
    command = [sys.executable, str(BENCHMARKS / name), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def benchmark_files(folder: Path, sets: dict[str, list[dict[str, object]]]) -> list[str]:
    """Each set's rows written as a benchmark JSONL file named after it; the files' paths."""
    paths = []
    for name, rows in sets.items():
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_scale_copies_keep_the_text_and_move_ids_and_years(tmp_path: Path) -> None:
    script("scale_library.py", "--library", str(SAMPLE / "library"), "--copies", "3", "--out", str(tmp_path))
    texts = [gzip.decompress((tmp_path / f"copy-{n}.jsonl.gz").read_bytes()).decode() for n in range(3)]
    copies = [[json.loads(line) for line in text.splitlines()] for text in texts]
    originals, second = copies[0], copies[2]
    assert len(originals) == len(second) > 0
    for doc, copy in zip(originals, second, strict=True):
        assert copy["doc_id"] == f"{doc['doc_id']}-copy2"
        assert copy["sections"] == doc["sections"] and copy["title"] == doc["title"]
        assert copy["year"] == (doc["year"] - 2 if isinstance(doc["year"], int) else doc["year"])


def test_distinct_copies_are_new_paragraphs_of_real_sentences_from_the_same_collection(
    tmp_path: Path,
) -> None:
    out = script("scale_library.py", "--library", str(SAMPLE / "library"), "--copies", "3", "--distinct",
                 "--out", str(tmp_path))  # fmt: skip
    copies = [[json.loads(line) for line in gzip.decompress((tmp_path / f"copy-{n}.jsonl.gz").read_bytes()).decode().splitlines()]
              for n in range(3)]  # fmt: skip
    real = {}  # sentence -> collection
    for doc in copies[0]:
        for p in (p for section in doc["sections"] for p in section["paragraphs"]):
            real.update(dict.fromkeys(split_sentences(p), doc["collection"]))
    seen = {p for doc in copies[0] for section in doc["sections"] for p in section["paragraphs"]}
    new = [
        p for docs in copies[1:] for doc in docs for section in doc["sections"] for p in section["paragraphs"]
    ]
    again = 0
    for paragraph in new:
        again += paragraph in seen
        seen.add(paragraph)
    repeated = int(re.search(r"([\d,]+) of them repeat", out).group(1).replace(",", ""))
    assert again == repeated < len(new) // 50  # the count it prints is what it wrote; few repeat
    found = []  # the collection of each sentence of copy 2 (None: not a sentence of the library)
    for original, copy in zip(copies[0], copies[2], strict=True):
        assert copy["doc_id"] == f"{original['doc_id']}-copy2"
        assert [len(s["paragraphs"]) for s in copy["sections"]] == [
            len(s["paragraphs"]) for s in original["sections"]
        ]
        for old, new in zip(
            original["sections"][0]["paragraphs"], copy["sections"][0]["paragraphs"], strict=True
        ):
            sentences = split_sentences(new)
            assert any(own in new for own in split_sentences(old))  # keeps part of its own topic
            found.extend((real.get(s), original["collection"]) for s in sentences)
    # Joined sentences can split differently (a trailing "nan" or reference number runs on), so a few
    # are not found; none comes from another collection.
    assert sum(f is None for f, _ in found) < len(found) // 10
    assert all(f == collection for f, collection in found if f is not None)


def test_a_build_record_decides_its_target_and_missing_records_are_not_met(
    tmp_path: Path, models_dir: Path
) -> None:
    records = tmp_path / "records"
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir)}
    home = tmp_path / "home"
    home.mkdir()
    refused = subprocess.run([sys.executable, str(BENCHMARKS / "build_speed.py"), "--home", str(home),
                              str(SAMPLE / "library")], capture_output=True, text=True, env=env)  # fmt: skip
    assert refused.returncode != 0 and "pass --fresh" in refused.stderr
    out = script("build_speed.py", "--home", str(home), "--fresh", str(SAMPLE / "library"),
                 "--record", str(records / "build-speed.json"), env=env)  # fmt: skip
    record = json.loads((records / "build-speed.json").read_text())
    assert 0 < record["embedded"] <= record["chunks"]  # an empty cache: every distinct text embedded
    assert f"{record['chunks']:,} chunks" in out
    # A fabricated fast record for the scale library: met; everything else was never measured.
    (records / "build-distinct.json").write_text(json.dumps({"chunks": 300_001}))
    table = script("targets.py", "--records", str(records))
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:] if line.startswith("|")}
    size = rows["Scale library size, distinct text"]
    assert "| met |" in size
    throughput = rows["Ingest throughput, default embedder, cold cache"]
    assert f"{record['index_chunks_per_s']:,.1f} chunks/s" in throughput
    assert "not measured" in rows["Offline ask, end to end, replicated library: p95"]
    assert "| met |" not in rows["Offline ask, end to end, replicated library: p95"]
    # Each verdict names its record's machine: the build's own, and none for the fabricated record.
    assert size.rstrip().endswith("| A |") and throughput.rstrip().endswith("| B |")
    assert "- A: machine not recorded" in table and f"- B: {record['machine']['cpu']}" in table
    assert "come from 2 machines" in table


@pytest.mark.slow
def test_the_token_window_benchmark_cuts_more_at_a_shorter_length_and_chooses_leaving_one_out(
    tmp_path: Path, models_dir: Path
) -> None:
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir)}
    home = tmp_path / "home"
    script("build_speed.py", "--home", str(home), "--fresh", str(SAMPLE / "library"), env=env)
    benchmarks = []
    for name in ("pubmedqa_periop", "medquad_periop"):  # a question from each document's opening words
        rows = []
        for line in (SAMPLE / "library" / f"{name}.jsonl").read_text().splitlines()[:5]:
            doc = json.loads(line)
            words = " ".join(doc["sections"][0]["paragraphs"][0].split()[:12])
            rows.append({"query_id": doc["doc_id"], "question": words, "gold_doc_ids": [doc["doc_id"]],
                         "gold_passages": [words]})  # fmt: skip
        benchmarks.append(tmp_path / f"{name}.jsonl")
        benchmarks[-1].write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = script(
        "sequence_length.py", "--home", str(home), "--lengths", "32,256", *map(str, benchmarks), env=env
    )
    speed = {
        line.split("|")[1].strip(): line.split("|")
        for line in out.splitlines()
        if re.match(r"\| \d+ \|", line)
    }
    assert float(speed["32"][3].strip(" %")) > float(speed["256"][3].strip(" %"))  # more chunks cut
    left_out = [
        line for line in out.splitlines() if line.startswith(("| pubmedqa_periop |", "| medquad_periop |"))
    ]
    assert len(left_out) == 2 and all(row.split("|")[2].strip() in ("32", "256") for row in left_out)
    assert "Measured on " in out


def test_the_embedding_server_benchmark_splits_backs_off_and_builds_through_the_server(
    tmp_path: Path,
) -> None:
    library = SAMPLE / "library" / "covidqa_infection_control.jsonl"
    out = script("embedding_server.py", "--library", str(library), "--count", "40", "--texts", "256",
                 "--concurrency", "1", "4", "--client-batch", "16", "--queue", "1", "--step-ms", "40",
                 "--ingest", str(SAMPLE / "library" / "pubmedqa_periop.jsonl"))  # fmt: skip
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): [c.strip() for c in line.split("|")[3:-1]]
            for line in out.splitlines() if line.startswith(("| simulated", "| answers"))}  # fmt: skip
    one, four = rows[("simulated", "1")], rows[("simulated", "4")]
    assert one[0] == four[0] == "16"  # 64-text batches cut to the server's limit after its 413
    _, _, requests, overloaded, retries, peak = four
    assert one[-1] == "1" and int(peak) <= 4 and int(overloaded) > 0  # in flight; 429s from a full queue
    assert int(requests) == 256 // 16 + int(retries)  # every batch answered once, plus one request per retry
    assert ("answers at once", "4") in rows
    assert "openai:minilm" in out and "Carried linearly to 10,000,000 chunks: ingest " in out


def test_simulated_vectors_fill_every_chunk_close_to_its_true_vector(
    tmp_path: Path, models_dir: Path
) -> None:
    env = {**os.environ, "EVIDENCEQA_MODELS_DIR": str(models_dir)}  # one ONNX export for both homes
    library = str(SAMPLE / "library" / "covidqa_infection_control.jsonl")
    simulated = script(
        "build_speed.py", "--home", str(tmp_path / "sim"), library, "--simulate-vectors", env=env
    )
    chunks = int(re.search(r"· ([\d,]+) chunks ·", simulated)[1].replace(",", ""))  # type: ignore[index]
    assert f"{chunks:,} chunk vectors simulated from " in simulated and "| simulate vectors" in simulated
    script("build_speed.py", "--home", str(tmp_path / "true"), library, env=env)
    questions = tmp_path / "questions.jsonl"
    asked = ["hand hygiene", "surgical masks", "disinfection of surfaces", "ventilation", "gloves"]
    questions.write_text(
        "".join(json.dumps({"query_id": q, "question": q, "gold_doc_ids": []}) + "\n" for q in asked)
    )
    out = script("simulated_vectors.py", "--true", str(tmp_path / "true"), "--simulated", str(tmp_path / "sim"),
                 "--questions", str(questions), "--limit", "5", env=env)  # fmt: skip
    values = dict(re.findall(r"^\| (.+?) \| ([\d.]+) \|$", out, re.M))
    assert f"{chunks:,} chunks in both homes" in out  # every chunk had both a true and a simulated vector
    # Close to the model's own vectors, yet not them: multi-sentence chunks are averaged.
    assert 0.8 < float(values["cosine, simulated vs true vector (mean)"]) < 0.99
    assert 0.0 < float(values["exact top-10 shared by both spaces (5 questions)"]) <= 1.0
