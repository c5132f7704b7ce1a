#!/usr/bin/env bash
# Search answers in tokens: SciFact's test queries searched over REST with the default arguments
# (detail full, top_k 10, max_chars 32000), with top_k 100 (where the budget cuts), and with
# snippets; each answer counted in characters and cl100k_base tokens (bench/answer_tokens.mjs).
#
#   bench/answer_tokens.sh [DATA (../shared/data)]
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)

cargo build --release --locked -q -p grk
grk=target/release/grk
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
npm install --silent --no-save --prefix "$work" gpt-tokenizer@2.9.0 >/dev/null
cp bench/answer_tokens.mjs "$work/"
"$grk" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact --format beir \
    "$data/corpus.jsonl" >/dev/null

source bench/wait_for.sh
port=$((20000 + RANDOM % 20000))
GROUNDKIT_LOG=warn "$grk" --index-dir "$work/index" --base-dir "$data" serve --port "$port" &
server=$!
wait_for "$port"
for arguments in '{}' '{"top_k": 100}' '{"top_k": 100, "detail": "snippets"}'; do
    node "$work/answer_tokens.mjs" "http://127.0.0.1:$port" scifact "$data/queries.jsonl" \
        "$arguments"
done
