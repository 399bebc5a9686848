"""Query-adaptive fusion: each question's dense weight from signals its own search gives.

No single fixed blend of BM25 and dense search wins for every way a question is asked: expert
questions written from the passage share its rare words (BM25 wins), clinicians paraphrase (dense
wins). Both lists say which case a question is, before fusing:

- `dense_top`, `dense_margin`: the best cosine, and how far it stands above the tenth;
- `keyword_margin`, `keyword_gap12`: log of BM25's best score over its tenth and over its second;
- `keyword_strength`: BM25's best score over the sum of the question terms' idf — how much of
  the question its best chunk matched, comparable between questions and libraries;
- `coverage_gap`: the idf-weighted share of the question's terms in BM25's best chunk minus that
  share in dense's best chunk (a paraphrase match covers few of them; a lexical one all);
- `agreement`: whether each list's best document is in the other's top ten.

`AdaptiveAlpha` maps them to a weight, alpha = sigmoid(intercept + Σ w · standardised signal),
each standardised signal clipped to ±CLIP so that one freak value (a tiny library's margins)
cannot decide alone. The weight is for the fusion the model was fitted with (`fusion`: "weighted"
min-max, or "softmax" score distributions at its `temperatures`; evidenceqa.retrieval.fusion).
Its coefficients are fitted by benchmarks/fusion_grid.py on the development benchmarks with a
leave-one-benchmark-out check and ship with the package (`adaptive_alpha.json`): every signal is a
ratio, share or cosine, so nothing in it depends on the library it was fitted on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast, get_args

from evidenceqa.index.base import Hit
from evidenceqa.jsonl import json_fingerprint
from evidenceqa.retrieval.fusion import UNIT_TEMPERATURES, Fusion, FusionMethod

SIGNALS = (
    "dense_top",
    "dense_margin",
    "keyword_margin",
    "keyword_gap12",
    "keyword_strength",
    "coverage_gap",
    "agreement",
)
PACKAGED = Path(__file__).with_name("adaptive_alpha.json")
_DEPTH = 10  # the "tenth" of the margins and the top ten of agreement
CLIP = 3.0


def idf(df: int, chunks: int) -> float:
    """BM25's idf of a term held by `df` of `chunks` chunks (a term the library lacks: the highest)."""
    return math.log(1 + (chunks - df + 0.5) / (df + 0.5))


def term_idfs(query_terms: Sequence[str], term_df: tuple[int, Mapping[str, int]]) -> dict[str, float]:
    """Each distinct analysed term of the question → its idf in the library."""
    chunks, df = term_df
    return {t: idf(df.get(t, 0), max(chunks, 1)) for t in set(query_terms)}


def idf_mass(query_terms: Sequence[str], term_df: tuple[int, Mapping[str, int]]) -> float:
    """The summed idf of the question's distinct analysed terms: the most BM25 can score (before
    term-frequency saturation), so a score over it says how much of the question a chunk matched."""
    return sum(term_idfs(query_terms, term_df).values())


def query_signals(
    lists: Mapping[str, Sequence[Hit]],
    query_terms: Sequence[str],
    term_df: tuple[int, Mapping[str, int]],
    top_terms: Mapping[str, set[str]],
) -> dict[str, float]:
    """The signals of one question. `lists`: "keyword" and "dense" hits, best first; `query_terms`:
    the analysed terms BM25 searched; `term_df`: (content chunks, term → chunks holding it) from
    the catalogue; `top_terms`: the analysed terms of each list's best chunk, by chunk id."""
    keyword, dense = list(lists.get("keyword", ())), list(lists.get("dense", ()))
    weights = term_idfs(query_terms, term_df)
    total = sum(weights.values())

    def covered(hits: list[Hit]) -> float:
        if not hits or not total:
            return 0.0
        held = top_terms.get(hits[0].chunk_id, set())
        return sum(w for t, w in weights.items() if t in held) / total

    def tenth(hits: list[Hit]) -> float:
        return hits[:_DEPTH][-1].score

    return {
        "dense_top": dense[0].score if dense else 0.0,
        "dense_margin": dense[0].score - tenth(dense) if dense else 0.0,
        "keyword_margin": _log_ratio(keyword[0].score, tenth(keyword)) if keyword else 0.0,
        "keyword_gap12": _log_ratio(keyword[0].score, keyword[1].score) if len(keyword) > 1 else 0.0,
        "keyword_strength": keyword[0].score / total if keyword and total else 0.0,
        "coverage_gap": covered(keyword) - covered(dense),
        "agreement": _agreement(keyword, dense),
    }


def _fusion_method(value: object) -> FusionMethod:
    if value not in get_args(FusionMethod):
        raise ValueError(f"unknown fusion {value!r} (known: {', '.join(get_args(FusionMethod))})")
    return cast(FusionMethod, value)


def _log_ratio(top: float, other: float) -> float:
    return math.log(top / other) if top > 0 and other > 0 else 0.0


def _agreement(keyword: list[Hit], dense: list[Hit]) -> float:
    if not keyword or not dense:
        return 0.0
    keyword_docs = {h.doc_id for h in keyword[:_DEPTH]}
    dense_docs = {h.doc_id for h in dense[:_DEPTH]}
    return ((dense[0].doc_id in keyword_docs) + (keyword[0].doc_id in dense_docs)) / 2


@dataclass(frozen=True)
class AdaptiveAlpha:
    """alpha = sigmoid(intercept + Σ weight · clip((signal − mean) / scale)), within [low, high]."""

    signals: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    low: float = 0.0
    high: float = 1.0
    fitted_on: tuple[str, ...] = ()  # the benchmarks it was fitted on, for the record
    # The fusion its weights are for: a weight means something only for the fusion it was fitted on.
    fusion: FusionMethod = "weighted"
    temperatures: Mapping[str, float] = field(default_factory=lambda: dict(UNIT_TEMPERATURES))

    def fusion_of(self, alpha: float, depth: int, rrf_k: int = 60) -> Fusion:
        """How to fuse a question given this model's weight for it."""
        return Fusion(self.fusion, alpha, rrf_k, depth, dict(self.temperatures))

    def alpha(self, signals: Mapping[str, float]) -> float:
        z = self.intercept + sum(
            w * min(CLIP, max(-CLIP, (signals[name] - m) / s))
            for name, m, s, w in zip(self.signals, self.mean, self.scale, self.weights, strict=True)
        )
        value = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
        return min(self.high, max(self.low, value))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def fingerprint(self) -> str:
        """A digest of the model: what another model ranked (a cached answer) is not this one's."""
        return json_fingerprint(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AdaptiveAlpha:
        names = tuple(str(n) for n in data["signals"])
        unknown = set(names) - set(SIGNALS)
        if unknown:
            raise ValueError(f"unknown signals {sorted(unknown)} (known: {', '.join(SIGNALS)})")
        model = cls(
            signals=names,
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) for v in data["scale"]),
            weights=tuple(float(v) for v in data["weights"]),
            intercept=float(data["intercept"]),
            low=float(data.get("low", 0.0)),
            high=float(data.get("high", 1.0)),
            fitted_on=tuple(str(b) for b in data.get("fitted_on", ())),
            fusion=_fusion_method(data.get("fusion", "weighted")),
            temperatures={str(k): float(v) for k, v in data.get("temperatures", UNIT_TEMPERATURES).items()},
        )
        if not len(model.mean) == len(model.scale) == len(model.weights) == len(names):
            raise ValueError("signals, mean, scale and weights differ in length")
        if any(s <= 0 for s in model.scale) or not 0.0 <= model.low <= model.high <= 1.0:
            raise ValueError("every scale must be positive and 0 ≤ low ≤ high ≤ 1")
        if any(t <= 0 for t in model.temperatures.values()):
            raise ValueError("every temperature must be positive")
        return model

    @classmethod
    def load(cls, path: Path = PACKAGED) -> AdaptiveAlpha:
        """The fitted model in `path` (default: the one shipped with the package)."""
        try:
            return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            raise ValueError(
                f"alpha = 'adaptive' needs its model {path}: fit one with benchmarks/fusion_grid.py --write-model"
            ) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not an adaptive fusion model ({exc})") from None

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
