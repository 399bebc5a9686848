"""Fine-tune a sentence-transformers model on triplets, on CPU, within a time budget.

MultipleNegativesRankingLoss: each query must pick its own passage out of every passage in the
batch plus every hard negative. A plain loop rather than the library's Trainer, which would
need `datasets` and `accelerate` for nothing this needs. The model is written to a staging folder
and renamed into place, so an interrupted run never leaves something that looks like a model.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evidenceqa.adapt.dataset import Triplet, batches
from evidenceqa.embeddings.base import force_offline

MANIFEST = "adapt.json"


@dataclass(frozen=True)
class TrainConfig:
    batch_size: int = 32
    epochs: int = 1
    learning_rate: float = 2e-5
    warmup: float = 0.1  # share of the steps over which the learning rate rises
    max_seq_length: int = 128  # chunks average ~130 words; longer costs time for little
    max_minutes: float = 25.0  # the model trained so far is kept when the budget runs out
    threads: int | None = None
    seed: int = 13


@dataclass
class TrainReport:
    steps: int
    planned_steps: int
    minutes: float
    first_loss: float
    last_loss: float  # mean over the last 20 steps
    stopped_by_budget: bool


def train(
    base: Path,
    triplets: list[Triplet],
    out: Path,
    config: TrainConfig,
    about: dict[str, Any],
    on_step: Callable[[int, int, float], None] | None = None,
) -> TrainReport:
    """Trains from the model folder `base` and writes the result, with a manifest, to `out`."""
    import torch

    model, loss = _model_and_loss(base, config)
    window, model.max_seq_length = model.max_seq_length, config.max_seq_length
    report = run_plan(model, triplets, config, lambda batch: loss(
        [model.preprocess([t.query for t in batch]), model.preprocess([t.positive for t in batch]),
         model.preprocess([t.negative for t in batch])], torch.zeros(0)), on_step)  # fmt: skip
    model.max_seq_length = window  # searching embeds up to the base model's window
    _save(model, out, {**about, "config": asdict(config), "training": asdict(report)})
    return report


def run_plan(model: Any, triplets: list[Triplet], config: TrainConfig, step_loss: Callable[[list[Triplet]], Any],
             on_step: Callable[[int, int, float], None] | None) -> TrainReport:  # fmt: skip
    """The training loop both trainers share: shuffled document-distinct batches for `config.epochs`,
    AdamW with warm-up then linear decay, stopped (and reported so) when the time budget runs out."""
    import torch

    rng = random.Random(config.seed)
    plan = [b for _ in range(config.epochs) for b in batches(triplets, config.batch_size, rng)]
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, warmup_then_decay(len(plan), config.warmup))
    started, losses = time.monotonic(), []
    model.train()
    for step, batch in enumerate(plan, start=1):
        value = step_loss(batch)
        value.backward()
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(value.item())
        if on_step:
            on_step(step, len(plan), losses[-1])
        if time.monotonic() - started > config.max_minutes * 60:
            break
    return TrainReport(len(losses), len(plan), (time.monotonic() - started) / 60, losses[0] if losses else 0.0,
                       sum(losses[-20:]) / max(1, len(losses[-20:])), len(losses) < len(plan))  # fmt: skip


def warmup_then_decay(steps: int, warmup_share: float) -> Callable[[int], float]:
    """Learning-rate factor: rising linearly over the warm-up, then falling linearly to zero."""
    warmup = max(1, int(warmup_share * steps))

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return factor


def _model_and_loss(base: Path, config: TrainConfig) -> tuple[Any, Any]:
    force_offline()
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    model = SentenceTransformer(str(base), device="cpu", local_files_only=True)
    return model, MultipleNegativesRankingLoss(model)


def _save(model: Any, out: Path, manifest: dict[str, Any]) -> None:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save(str(staging))
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        shutil.rmtree(out, ignore_errors=True)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
