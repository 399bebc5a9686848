"""Domain adaptation: fine-tune the general MiniLM on pairs the ingested library provides.

No biomedical embedder can be downloaded here, so the library teaches one: `pairs` mines
(query, passage) pairs from its structure, `leakage` refuses any query that a benchmark holds,
`negatives` adds a BM25 hard negative to each, `dataset` balances and batches them, and `train`
runs MultipleNegativesRankingLoss on CPU within a time budget. The result is a model folder that
`--embedder onnx:PATH` (or `--embedder PATH`) searches with.
"""

from evidenceqa.adapt.dataset import TrainingSet, Triplet, build
from evidenceqa.adapt.leakage import Holdout
from evidenceqa.adapt.train import MANIFEST, TrainConfig, TrainReport, train

__all__ = ["MANIFEST", "Holdout", "TrainConfig", "TrainReport", "TrainingSet", "Triplet", "build", "train"]
