"""`evidenceqa calibrate`: abstention fitted on the library itself; `ingest` runs it when it is due."""

from __future__ import annotations

from typing import Annotated

import typer

from evidenceqa.answer.abstain import CALIBRATION_FILE, Abstainer
from evidenceqa.answer.calibration import PRIOR_STRENGTH, SelfCalibration, self_calibrate, stale, too_small
from evidenceqa.answer.engine import Engine
from evidenceqa.cli.app import app
from evidenceqa.cli.common import fail, out, progress_bar, settings_of
from evidenceqa.cli.search import open_engine
from evidenceqa.home import HomeOptions
from evidenceqa.text import markdown


def calibrate_library(
    engine: Engine, questions: int, max_false: float = 0.10, force: bool = False, report: bool = False
) -> None:
    """Fit abstention on `questions` of the library's own questions and save it in the data home,
    unless the calibration there still fits the library (`force`: fit anyway). `engine` is the
    caller's, already open: ingest has just indexed with it."""
    settings = engine.settings
    small = too_small(engine.catalogue)
    try:
        why = stale(Abstainer.load(settings.home), engine.catalogue)
    except ValueError as exc:  # an unreadable or outdated file: replaced by a fresh fit
        why = str(exc)
    if small:
        out.print(f"calibration: kept {_current(settings)} ({small})", highlight=False)
        return
    if why is None and not force:
        out.print("calibration: still fits the library (--force to refit)", highlight=False)
        return
    if not engine.is_current():
        fail(f"{engine.pending()} chunks are not indexed yet: run `evidenceqa index` first")
    with progress_bar(f"calibrate ({why or 'forced'})", questions) as bar:
        fitted = self_calibrate(engine.catalogue, engine.retriever(), settings.evidence_k, questions, max_false,
                                on_probe=lambda: bar.advance(bar.task_ids[0]))  # fmt: skip
    if fitted.model is None:
        out.print(f"calibration: kept {_current(settings)} ({fitted.reason})", highlight=False)
        return
    path = fitted.model.save(settings.home)
    counts = fitted.counts()
    out.print(
        f"calibration: {counts['questions']} questions from the library, {counts['adequate']} adequate and "
        f"{counts['gaps']} gaps verified · threshold {fitted.model.threshold:.3f} · {path}",
        highlight=False,
    )
    if report:
        out.print(_report(fitted))


def _current(settings: HomeOptions) -> str:
    return (
        "this home's calibration" if (settings.home / CALIBRATION_FILE).is_file() else "the shipped default"
    )


def _report(fitted: SelfCalibration) -> str:
    gaps, false, auc = fitted.cross_validated()
    styles = ", ".join(f"{n} {style}" for style, n in fitted.styles().items())
    prior = fitted.prior.fitted_on if fitted.prior else "none: the library's questions alone"
    rows = [["questions written (by style)", f"{len(fitted.probes)} ({styles})"],
            [f"refines the model fitted on (strength {PRIOR_STRENGTH:g})", prior],
            ["gaps abstained (cross-validated)", f"{gaps:.1%}"],
            ["false abstentions (cross-validated)", f"{false:.1%}"],
            ["AUC (cross-validated)", f"{auc:.3f}"]]  # fmt: skip
    return markdown.table(["Self-calibration", "Figure"], rows, [False, True])


@app.command()
def calibrate(
    ctx: typer.Context,
    questions: Annotated[
        int | None, typer.Option(help="Questions to write from the library (default from settings).")
    ] = None,
    max_false: Annotated[
        float,
        typer.Option(
            help="Share of answerable questions it may abstain on (the library's own, in its words, are held to less)."
        ),
    ] = 0.10,
    force: Annotated[
        bool, typer.Option(help="Refit even if the calibration still fits the library.")
    ] = False,
    report: Annotated[
        bool, typer.Option("--report", help="Refit and print the fit's cross-validated figures.")
    ] = False,
) -> None:
    """Calibrate abstention on the library itself: questions from its own sentences, answered and held out."""
    settings = settings_of(ctx)
    n = settings.calibration_questions if questions is None else questions
    if n < 1 or not 0 <= max_false < 1:
        fail("--questions is at least 1 (settings: calibration_questions), --max-false from 0 to below 1")
    if not (settings.catalogue_path.is_file()):
        fail(f"no library at {settings.home}: run `evidenceqa ingest` first")
    with open_engine(settings) as engine:
        calibrate_library(engine, n, max_false, force or report, report)
