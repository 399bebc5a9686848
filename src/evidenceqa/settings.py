"""Settings: every component's options, composed, and read from the environment and a TOML file.

Each option is declared with the component it belongs to (`EmbeddingOptions` in evidenceqa.embeddings,
`RetrievalOptions` beside the retriever…) and each component takes only its own options type; this
class, at the top of the layers, composes them for the CLI and the web app's worker processes.
docs/architecture.md lists every setting, where it is declared and what reads it.

Precedence, highest first: explicit arguments (CLI flags), `EVIDENCEQA_*` environment variables,
the TOML file (`EVIDENCEQA_CONFIG`, else `evidenceqa.toml` in the working directory, if present).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from evidenceqa.answer.calibration import CalibrationOptions
from evidenceqa.loaders.limits import LoaderOptions
from evidenceqa.web.options import AppOptions


def config_file() -> Path:
    return Path(os.environ.get("EVIDENCEQA_CONFIG", "evidenceqa.toml"))


class Settings(AppOptions, LoaderOptions, CalibrationOptions, BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVIDENCEQA_", extra="ignore")

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


def load_settings(**overrides: Any) -> Settings:
    """Settings with CLI overrides applied; `None` values mean "not given" and are dropped."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
