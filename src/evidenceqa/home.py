"""The data home: where a library's catalogue, index, caches and derived models live.

Every component that keeps files reads these options; `evidenceqa.settings.Settings` composes them
with the others.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class HomeOptions(BaseModel):
    home: Path = Field(Path(".evidenceqa"), description="Data home: catalogue, index, caches.")
    models_dir: Path | None = None  # derived models (ONNX export…); default: <home>/models

    @property
    def catalogue_path(self) -> Path:
        return self.home / "catalogue.sqlite3"

    @property
    def index_path(self) -> Path:
        return self.home / "index"

    @property
    def models_path(self) -> Path:
        """Models the project derives itself (ONNX exports, adapted models)."""
        return self.models_dir or self.home / "models"

    @property
    def shorthand_path(self) -> Path:
        """The library's own shorthand, over the shipped list (`evidenceqa.library.vocabulary`)."""
        return self.home / "shorthand.tsv"
