# Two commands matter: `make run` (fresh machine → working app on the sample library) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1

.PHONY: run test install lint format clean docs

run: $(STAMP)
	$(BIN)/evidenceqa ingest data/sample/library data/sample/files
	$(BIN)/evidenceqa library
	$(BIN)/evidenceqa chunk-stats

test: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/pytest

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts

format: $(STAMP)
	$(BIN)/ruff format src tests scripts
	$(BIN)/ruff check --fix src tests scripts

clean:
	rm -rf $(VENV) .evidenceqa .pytest_cache .ruff_cache

docs: $(STAMP)
	$(BIN)/python scripts/update_docs.py
