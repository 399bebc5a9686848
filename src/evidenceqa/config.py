"""Settings: the one place defaults live.

Precedence, highest first: explicit arguments (CLI flags), `EVIDENCEQA_*` environment variables,
the TOML file (`EVIDENCEQA_CONFIG`, else `evidenceqa.toml` in the working directory, if present).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

ChunkStrategy = Literal["fixed-size", "section", "hybrid", "hierarchical", "hierarchical-paragraphs"]


def config_file() -> Path:
    return Path(os.environ.get("EVIDENCEQA_CONFIG", "evidenceqa.toml"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVIDENCEQA_", extra="ignore")

    home: Path = Field(Path(".evidenceqa"), description="Data home: catalogue, index, caches.")
    chunk_strategy: ChunkStrategy = "hierarchical-paragraphs"
    # ~180 words plus the title/section prefix stays within MiniLM's 256 word pieces.
    chunk_max_words: int = Field(180, ge=20, le=2000)
    fixed_chunk_words: int = Field(512, ge=20, le=4000)
    overview_max_words: int = Field(2000, ge=50, le=10000)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file()))

    @property
    def catalogue_path(self) -> Path:
        return self.home / "catalogue.sqlite3"


def load_settings(**overrides: Any) -> Settings:
    """Settings with CLI overrides applied; `None` values mean "not given" and are dropped."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
