"""Does abstention hold on questions it was not fitted on? Self-calibration against benchmark calibration.

Every development set is searched once as an answer would be (`evidenceqa.answer.calibration.Sample`):
- covidqa-dev, medquad-sample and pubmedqa as content-gap sets (a quarter of their gold documents
  held out of the search, `bench gaps`), covidqa-dev with its hand review;
- clinician-dev as it is: its answerable questions, and its unanswerable ones as gaps.
Then, on each set, these rules are scored (clinician-dev on its own labels, the gap sets on
verified labels: the odd half of covidqa-dev's, all of the others'):
- the uncalibrated floor;
- calibrated on covidqa-dev's reviewed gap set (even half), as `bench abstention --write` does;
- the shipped default, fitted on the other development sets (leave one benchmark out);
- self-calibrated on the library (`evidenceqa calibrate`): questions written from its own sentences,
  no benchmark question involved, the fit drawn towards the shipped default fitted on the other
  sets (as the packaged one is towards a default that never saw the user's library); the same
  without that prior, and with the library's questions held to the whole budget (what each
  choice adds); and the range of its figures over three other draws of those questions.
Then the self-calibrated model's AUC per set at each strength of the prior, and its figures at each
share of the budget for the library's questions, each with the choice every set gets left out.
`--write-default FILE` saves the default fitted on all four sets (the packaged one is
src/evidenceqa/answer/abstention_default.json). Searches are cached in the data home, so a rerun
only refits. Example:

    .venv/bin/python benchmarks/abstention_transfer.py --home .evidenceqa-bench --limit 300
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from evidenceqa.answer.abstain import FEATURES, Abstainer
from evidenceqa.answer.cache import settings_fingerprint
from evidenceqa.answer.calibration import (
    PRIOR_STRENGTH,
    PROBE_SHARE,
    Sample,
    SelfCalibration,
    calibrate,
    fit_on_probes,
    fit_towards,
    self_calibrate,
    verified_signals,
)
from evidenceqa.answer.engine import Engine
from evidenceqa.bench import gaps, machine
from evidenceqa.bench.answers import AbstentionScores, evaluate, halves, samples
from evidenceqa.bench.retrieval import read_questions
from evidenceqa.jsonl import read_rows
from evidenceqa.retrieval.retriever import FIXED_ALPHA
from evidenceqa.settings import load_settings
from evidenceqa.text import markdown

BENCHMARKS = Path("../shared/data/benchmarks")
REVIEW = Path("benchmarks/reviews/covidqa-dev-gaps.jsonl")
GAP_SETS = ("covidqa-dev", "medquad-sample", "pubmedqa")
NATIVE = "clinician-dev"  # answerable and unanswerable questions as written
MAX_FALSE = 0.10
# Other seeds of the library's question draw (the default is probes.probes' 13).
OTHER_DRAWS = (7, 21, 99)
STRENGTHS = (0.0, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
SHARES = (0.1, 0.2, 0.3, 0.5, 1.0)
HEADERS = [
    "Evaluated on",
    "Rule",
    "Gap questions",
    "Answerable",
    "Gaps abstained",
    "False abstentions",
    "AUC",
]


def cached(path: Path, version: int, searched: str, make: Callable[[], list[Sample]]) -> list[Sample]:
    """The samples stored at `path` for this index version, these signals and these search settings
    (`searched`: their fingerprint; another fusion finds other evidence), else made and stored."""
    key = {"index_version": version, "features": list(FEATURES), "settings": searched}
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        if all(data.get(name) == value for name, value in key.items()):
            return [Sample.from_dict(row) for row in data["samples"]]
    made = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**key, "samples": [s.to_dict() for s in made]}))
    return made


def row(name: str, rule: str, model: Abstainer, evaluated: list[Sample], verified: bool) -> list[str]:
    scores = evaluate(model, evaluated, verified)
    return [name, rule, f"{scores.gap_questions:,}", f"{scores.answerable_questions:,}",
            f"{scores.gaps_abstained:.1%}", f"{scores.false_abstentions:.1%}",
            "–" if scores.auc is None else f"{scores.auc:.3f}"]  # fmt: skip


def spread(name: str, models: list[Abstainer], evaluated: list[Sample], verified: bool) -> list[str]:
    """The self-calibration's range over other draws of the library's questions: how much its
    figures owe to which documents the questions were written from."""
    rule = f"the same, {len(models)} other draws of questions (range)"
    scores = [evaluate(model, evaluated, verified) for model in models]
    if not scores:
        return [name, rule, *"–" * 5]
    ranges = [
        sorted(getattr(s, field) or 0.0 for s in scores)
        for field in ("gaps_abstained", "false_abstentions", "auc")
    ]
    return [name, rule, f"{scores[0].gap_questions:,}", f"{scores[0].answerable_questions:,}",
            *(f"{low:{form}}–{high:{form}}" for (low, *_, high), form in zip(ranges, (".1%", ".1%", ".3f"), strict=True))]  # fmt: skip


def refit(own: SelfCalibration, prior: Abstainer | None, share: float = PROBE_SHARE) -> Abstainer:
    """The library's model from its questions as `self_calibrate` fits it, towards `prior`, its
    questions held to `share` of the budget."""
    return fit_on_probes(own.probes, own.samples, MAX_FALSE, prior, share)


def strength_auc(
    own: SelfCalibration, prior: Abstainer, strength: float, evaluated: list[Sample], verified: bool
) -> float:
    """The AUC on `evaluated` of the library's fit drawn towards `prior` at `strength` (0: none)."""
    weights, bias = fit_towards(*verified_signals(own.samples), prior, strength)
    return evaluate(Abstainer(weights, bias), evaluated, verified).auc or 0.0


def chosen_share(scores: list[list[AbstentionScores]]) -> int:
    """The share (an index of SHARES) that `scores` (per set, per share) favour: the most gaps
    abstained on average among those within the budget on every set, else the fewest false
    abstentions on the worst set."""
    within = [i for i in range(len(SHARES)) if all(s[i].false_abstentions <= MAX_FALSE for s in scores)]
    if within:
        return max(within, key=lambda i: sum(s[i].gaps_abstained for s in scores))
    return min(range(len(SHARES)), key=lambda i: max(s[i].false_abstentions for s in scores))


def print_shares(shares: dict[str, list[AbstentionScores]]) -> None:
    """What the budget's share for the library's own questions does on each set, and the share each
    set gets when it is left out of the choice."""
    print(f"**Share of the budget for the library's questions** (the default: {PROBE_SHARE:g}): "
          "gaps abstained / false abstentions\n")  # fmt: skip
    rows = [[name, *(f"{s.gaps_abstained:.1%} / {s.false_abstentions:.1%}" for s in scores)]
            for name, scores in shares.items()]  # fmt: skip
    print(markdown.table(["Evaluated on", *(f"{share:g}" for share in SHARES)], rows,
                         [False] + [True] * len(SHARES)))  # fmt: skip
    print(f"**Leave one benchmark out**: the share with the most gaps abstained on the other sets while "
          f"each stays within {MAX_FALSE:.0%} false abstentions\n")  # fmt: skip
    rows = []
    default = SHARES.index(PROBE_SHARE)
    for held, scores in shares.items():
        best = chosen_share([values for name, values in shares.items() if name != held])
        rows.append([held, f"{SHARES[best]:g}",
                     *(f"{scores[i].gaps_abstained:.1%} / {scores[i].false_abstentions:.1%}" for i in (best, default))])  # fmt: skip
    print(markdown.table(["Left out", "Chosen on the others", "There", "At the default share"], rows,
                         [False, True, True, True]))  # fmt: skip


def pooled(sets: dict[str, list[Sample]], left_out: str | None) -> Abstainer:
    """Fitted on every set but `left_out`, with the threshold that holds ≤ MAX_FALSE in each."""
    kept = {name: found for name, found in sets.items() if name != left_out}
    return calibrate([s for found in kept.values() for s in found], MAX_FALSE,
                     "the development sets: " + ", ".join(kept),
                     groups=[name for name, found in kept.items() for _ in found])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="questions of medquad-sample and pubmedqa")
    parser.add_argument("--questions", type=int, default=None, help="self-calibration questions")
    parser.add_argument("--write-default", type=Path, default=None)
    args = parser.parse_args()
    settings = load_settings(home=args.home)
    k = settings.evidence_k
    store = args.home / "calibration-samples"
    sets: dict[str, list[Sample]] = {}
    with Engine.open(settings) as engine:
        retriever = engine.retriever()
        version = engine.catalogue.index_version
        # With alpha = adaptive, a refitted packaged model ranks other evidence under the same
        # settings, and abstention reads the evidence at the fixed weight FIXED_ALPHA.
        adaptive = retriever.adaptive
        searched = f"{settings_fingerprint(settings)}/{retriever.vocabulary.shorthand_fingerprint}" + (
            f"/{adaptive.fingerprint()}/adequacy at {FIXED_ALPHA}" if adaptive else ""
        )
        for name in GAP_SETS:
            # covidqa-dev whole: its review covers the gap set `bench abstention` builds from all of it.
            limit = None if name == "covidqa-dev" else args.limit
            rows = gaps.build(read_questions(BENCHMARKS / f"{name}.jsonl", limit))
            review = gaps.read_review(REVIEW) if name == "covidqa-dev" else {}
            sets[name] = cached(store / f"{name}-{limit}.json", version, searched,
                                lambda rows=rows, review=review: samples(retriever, rows, k, review))  # fmt: skip
        # Its rows say themselves which are answerable (meta.answerable), and hold nothing out.
        native = list(read_rows(BENCHMARKS / f"{NATIVE}.jsonl", dict, "a benchmark row"))
        sets[NATIVE] = cached(
            store / f"{NATIVE}.json", version, searched, lambda: samples(retriever, native, k, {})
        )
        questions = args.questions or settings.calibration_questions
        own = self_calibrate(engine.catalogue, retriever, k, questions, MAX_FALSE)
        redrawn = [self_calibrate(engine.catalogue, retriever, k, questions, MAX_FALSE, seed=seed)
                   for seed in OTHER_DRAWS]  # fmt: skip
    if own.model is None:
        raise SystemExit(f"self-calibration did not fit: {own.reason}")
    redrawn = [draw for draw in redrawn if draw.model is not None]
    asked = {q.question.strip().lower() for name in (*GAP_SETS, NATIVE)
             for q in read_questions(BENCHMARKS / f"{name}.jsonl")}  # fmt: skip
    covid_fit, covid_report = halves(sets["covidqa-dev"])
    on_covidqa = calibrate(covid_fit, MAX_FALSE, "covidqa-dev (even questions), reviewed")
    table: list[list[str]] = []
    strengths: dict[str, list[float]] = {}
    shares: dict[str, list[AbstentionScores]] = {}
    for name, found in sets.items():
        verified = name != NATIVE
        evaluated = covid_report if name == "covidqa-dev" else found
        # The prior never saw the set it is scored on, as the packaged one never saw the user's library.
        prior = pooled(sets, name)
        table += [
            row(name, "uncalibrated floor", Abstainer(), evaluated, verified),
            row(name, "calibrated on covidqa-dev's reviewed gap set", on_covidqa, evaluated, verified),
            row(name, "shipped default, fitted on the other sets", prior, evaluated, verified),
            row(name, "self-calibrated without the shipped prior", refit(own, None), evaluated, verified),
            row(name, "self-calibrated, its questions held to the whole budget", refit(own, prior, 1.0),
                evaluated, verified),
            row(name, "self-calibrated (the default)", refit(own, prior), evaluated, verified),
            spread(name, [refit(draw, prior) for draw in redrawn], evaluated, verified),
        ]  # fmt: skip
        strengths[name] = [strength_auc(own, prior, st, evaluated, verified) for st in STRENGTHS]
        shares[name] = [evaluate(refit(own, prior, share), evaluated, verified) for share in SHARES]
    counts = own.counts()
    gaps_cv, false_cv, auc_cv = own.cross_validated()
    print(f"**Self-calibration**: {counts['questions']} questions written from the library "
          f"({', '.join(f'{n} {s}' for s, n in own.styles().items())}); {counts['adequate']} searched "
          f"with adequate evidence, {counts['gaps']} held-out gaps, {counts['unverified']} unverified; "
          f"{sum(p.question.strip().lower() in asked for p in own.probes)} identical to a benchmark question. "
          f"Cross-validated on its own questions: {gaps_cv:.1%} of gaps abstained, {false_cv:.1%} false "
          f"abstentions, AUC {auc_cv:.3f}.\n")  # fmt: skip
    print(markdown.table(HEADERS, table, [False, False] + [True] * 5))
    print(
        f"**Strength of the prior** (the default: {PRIOR_STRENGTH:g}): AUC of the self-calibrated model, "
        "drawn towards the shipped default fitted on the other sets (0: no prior)\n"
    )
    rows = [[name, *(f"{auc:.3f}" for auc in aucs)] for name, aucs in strengths.items()]
    print(
        markdown.table(
            ["Evaluated on", *(f"{st:g}" for st in STRENGTHS)], rows, [False] + [True] * len(STRENGTHS)
        )
    )
    print("**Leave one benchmark out**: the strength with the best mean AUC on the other sets\n")
    rows = []
    for held, aucs in strengths.items():
        others = [values for name, values in strengths.items() if name != held]
        best = max(range(len(STRENGTHS)), key=lambda i: sum(values[i] for values in others))
        rows.append([held, f"{STRENGTHS[best]:g}", f"{aucs[0]:.3f}", f"{aucs[best]:.3f}"])
    print(markdown.table(["Left out", "Chosen on the others", "AUC without a prior", "AUC at that strength"], rows,
                         [False, True, True, True]))  # fmt: skip
    print_shares(shares)
    print(machine.measured_on())
    if args.write_default:
        pooled(sets, None).write(args.write_default)


if __name__ == "__main__":
    main()
