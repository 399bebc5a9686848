"""The one `evidenceqa` command group; sub-command modules register on it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from evidenceqa import DISCLAIMER
from evidenceqa.cli.common import fail
from evidenceqa.settings import load_settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub at run time
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


app = typer.Typer(
    help=f"Evidence-based answers from your own medical library, with citations. {DISCLAIMER}",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks on real questions.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


@app.callback()
def main(
    ctx: typer.Context,
    home: Annotated[
        Path | None, typer.Option(help="Data home (default ./.evidenceqa or $EVIDENCEQA_HOME).")
    ] = None,
    embedder: Annotated[
        str | None, typer.Option(help="Embedder: minilm-onnx, minilm, a model folder, or openai:<model>.")
    ] = None,
    backend: Annotated[str | None, typer.Option(help="Search backend: lancedb or milvus.")] = None,
) -> None:
    try:
        ctx.obj = load_settings(home=home, embedder=embedder, backend=backend)
    except ValidationError as exc:
        first = exc.errors()[0]
        fail(f"invalid setting {'.'.join(map(str, first['loc']))}: {first['msg']}")
