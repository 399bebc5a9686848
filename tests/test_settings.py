import importlib.util
from pathlib import Path

import pytest
from pydantic import ValidationError

from evidenceqa.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in [
        "EVIDENCEQA_HOME",
        "EVIDENCEQA_CHUNK_STRATEGY",
        "EVIDENCEQA_CHUNK_MAX_WORDS",
        "EVIDENCEQA_CONFIG",
    ]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_defaults():
    settings = Settings()
    assert settings.home == Path(".evidenceqa")
    assert settings.chunk_strategy == "hierarchical-paragraphs"
    assert settings.catalogue_path == Path(".evidenceqa/catalogue.sqlite3")


def test_toml_then_environment_then_arguments(monkeypatch, tmp_path):
    (tmp_path / "evidenceqa.toml").write_text(
        'home = "/data/eqa"\nchunk_max_words = 150\nchunk_strategy = "section"\n'
    )
    assert (Settings().home, Settings().chunk_max_words) == (Path("/data/eqa"), 150)
    monkeypatch.setenv("EVIDENCEQA_CHUNK_MAX_WORDS", "200")
    assert Settings().chunk_max_words == 200 and Settings().chunk_strategy == "section"
    assert load_settings(home=Path("/cli"), chunk_strategy=None).home == Path("/cli")


def test_config_file_named_by_environment(monkeypatch, tmp_path):
    custom = tmp_path / "custom.toml"
    custom.write_text("fixed_chunk_words = 300\n")
    monkeypatch.setenv("EVIDENCEQA_CONFIG", str(custom))
    assert Settings().fixed_chunk_words == 300


def test_invalid_values_are_rejected(monkeypatch):
    monkeypatch.setenv("EVIDENCEQA_CHUNK_STRATEGY", "sentences")
    with pytest.raises(ValidationError, match="chunk_strategy"):
        Settings()


@pytest.mark.parametrize("value", ["1.5", "-0.1", "dense", ""])
def test_alpha_must_be_a_weight_or_a_rule_name(value):
    with pytest.raises(ValidationError, match="alpha is a number from 0 to 1"):
        Settings(alpha=value)


@pytest.mark.parametrize("value", ["0", "0.3", "1", "rules", "learned"])
def test_alpha_accepts_weights_and_rule_names(value):
    assert Settings(alpha=value).alpha == value


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"guard_counters": "redis"}, "guard_counters 'redis' needs redis_url"),
        ({"guard_counters": "memory", "web_workers": 2}, "keeps each worker's counts apart"),
    ],
)
def test_guard_counters_that_cannot_be_shared_are_refused(settings, message):
    with pytest.raises(ValidationError, match=message):
        Settings(**settings)


def settings_table():
    spec = importlib.util.spec_from_file_location("settings_table", REPO / "scripts" / "settings_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    return table


def test_every_setting_is_read_by_some_component():
    read = settings_table().readers()
    assert [name for name in Settings.model_fields if not read.get(name)] == []


def test_each_setting_is_declared_once_by_its_component():
    table = settings_table()
    declared = [
        name
        for cls in Settings.__mro__
        for name in getattr(cls, "__annotations__", {})
        if name in Settings.model_fields
    ]
    assert sorted(declared) == sorted(Settings.model_fields)  # no name in two components' options
    owners = {name: table.owner(name) for name in Settings.model_fields}
    assert all(
        cls.__module__ not in ("evidenceqa.settings", "pydantic_settings.main") for cls in owners.values()
    )
    assert (
        owners["embedder"].__name__ == "EmbeddingOptions" and owners["alpha"].__name__ == "RetrievalOptions"
    )


def test_environment_and_toml_reach_options_declared_in_every_layer(monkeypatch, tmp_path):
    (tmp_path / "evidenceqa.toml").write_text('ann_nprobes = 32\nsuccess_rule = "feedback"\n')
    monkeypatch.setenv("EVIDENCEQA_LOGIN_LOCKOUT_S", "90")
    monkeypatch.setenv("EVIDENCEQA_LLM_API_KEY", "sk-test")
    settings = Settings()
    assert (settings.ann_nprobes, settings.success_rule, settings.login_lockout_s) == (32, "feedback", 90)
    assert settings.llm_api_key is not None and settings.llm_api_key.get_secret_value() == "sk-test"


@pytest.mark.parametrize(
    ("settings", "kind"),
    [
        ({}, "memory"),  # one worker: nothing to share
        ({"web_workers": 4}, "database"),
        ({"redis_url": "redis://cache:6379/0"}, "redis"),
        ({"redis_url": "redis://cache:6379/0", "guard_counters": "database"}, "database"),
        ({"guard_counters": "database"}, "database"),
    ],
)
def test_guard_counters_auto_follows_the_workers_and_redis(settings, kind):
    assert Settings(**settings).counter_kind == kind
