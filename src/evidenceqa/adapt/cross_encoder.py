"""Train the second stage: a MiniLM cross-encoder that reads a query and a passage together.

No cross-encoder ships offline, so the library teaches one, from the same triplets as the adapted
embedder (`adapt.build`: heading, abstract and MedQuAD-question pairs, each with a BM25 hard
negative, every benchmark question refused by `leakage.Holdout`). Each step scores, for every
query of the batch, its positive, its hard negative and the other queries' positives, and a
softmax cross-entropy asks for the positive first (a listwise loss: the ranking is what is used).
The encoder starts from all-MiniLM-L6-v2 with a fresh one-logit head. The result is exported to
int8 ONNX (`evidenceqa.retrieval.rerank`), written beside a manifest that says what trained it.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evidenceqa.adapt.dataset import Triplet
from evidenceqa.adapt.train import TrainConfig, TrainReport, run_plan
from evidenceqa.embeddings.base import force_offline
from evidenceqa.embeddings.onnx import MANIFEST_FILE
from evidenceqa.retrieval.rerank import export_cross_encoder

# In-batch positives of other queries scored per query besides its own positive and hard negative.
OTHER_POSITIVES = 2


def train_cross_encoder(
    base: Path,
    triplets: list[Triplet],
    out: Path,
    config: TrainConfig,
    about: dict[str, Any],
    on_step: Callable[[int, int, float], None] | None = None,
) -> TrainReport:
    """Trains from the model folder `base`; writes the int8 ONNX cross-encoder and its manifest to `out`."""
    force_offline()
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    tokenizer = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1, local_files_only=True)
    rng = random.Random(config.seed)

    def step_loss(batch: list[Triplet]) -> Any:
        groups = candidate_groups(batch, rng)
        queries = [t.query for t, group in zip(batch, groups, strict=True) for _ in group]
        passages = [p for group in groups for p in group]
        encoded = encode_pairs(tokenizer, queries, passages, config.max_seq_length)
        logits = model(**encoded).logits.view(len(batch), len(groups[0]))
        return torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))

    report = run_plan(model, triplets, config, step_loss, on_step)
    model.eval()
    _save(model, tokenizer, out, {**about, "config": asdict(config), "training": asdict(report)},
          config.max_seq_length)  # fmt: skip
    return report


def encode_pairs(tokenizer: Any, queries: list[str], passages: list[str], max_length: int) -> Any:
    """(query, passage) pairs as the model reads them, at most `max_length` word pieces each. The
    longer side is cut first: a query longer than the window (a long heading, a pasted scenario) is
    cut too, where cutting only the passage would fail (as `retrieval.rerank` reads them at search time)."""
    return tokenizer(queries, passages, truncation="longest_first", max_length=max_length, padding=True,
                     return_tensors="pt")  # fmt: skip


def candidate_groups(batch: list[Triplet], rng: random.Random) -> list[list[str]]:
    """Per triplet: its positive first, its hard negative, then other triplets' positives (every
    triplet of a batch comes from another document, so they are negatives here)."""
    others = min(OTHER_POSITIVES, len(batch) - 1)
    groups = []
    for i, triplet in enumerate(batch):
        rest = [t.positive for j, t in enumerate(batch) if j != i]
        groups.append([triplet.positive, triplet.negative, *rng.sample(rest, others)])
    return groups


def _save(model: Any, tokenizer: Any, out: Path, manifest: dict[str, Any], max_length: int) -> None:
    """Saved in torch form to a staging folder, exported there, and renamed into place."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        trained = staging / "torch"
        model.save_pretrained(str(trained))
        tokenizer.save_pretrained(str(trained))
        export_cross_encoder(trained, staging, max_length)
        shutil.rmtree(trained)
        manifest_path = staging / MANIFEST_FILE
        manifest = {**json.loads(manifest_path.read_text(encoding="utf-8")), "trained": manifest}
        manifest_path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
