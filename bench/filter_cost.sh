#!/usr/bin/env bash
# The cost of a filter at SIZE chunks, in process: a synthetic corpus with SciFact's term
# statistics (bench/gen_corpus.py, one chunk per document) split into 100 BEIR files p00..p99,
# ingested with vectors from a stand-in embedder (bench/src/bin/filter_cost.rs), then searched
# with SciFact's test queries unfiltered, with a selective filter (1 % of the chunks) and a
# broad one (50 %), lexical, dense and hybrid, in interleaved rounds.
#
#   bench/filter_cost.sh [SIZE (500000)] [DATA_DIR (../shared/data)] [ROUNDS (3)]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-500000}
data=$(cd "${2:-../shared/data}" && pwd)
rounds=${3:-3}

cargo build --release --locked -q -p groundkit-bench --bin filter_cost
store=target/filter-cost/$size
if [ ! -d "$store/corpus/p99" ]; then
    mkdir -p "$store/corpus"
    tests/embed/setup.sh
    .venv-embed/bin/python bench/gen_corpus.py "$size" "$store/all.jsonl" --data "$data"
    python3 - "$store/all.jsonl" "$store/corpus" <<'PY'
import sys
from pathlib import Path
source, out = Path(sys.argv[1]), Path(sys.argv[2])
parts = []
for i in range(100):
    (out / f"p{i:02d}").mkdir(parents=True, exist_ok=True)
    parts.append(open(out / f"p{i:02d}" / "corpus.jsonl", "w"))
for n, line in enumerate(open(source)):
    parts[n % 100].write(line)
for part in parts:
    part.close()
PY
    rm "$store/all.jsonl"
fi
if [ ! -d "$store/index" ]; then
    target/release/filter_cost build "$store/corpus" "$store/index"
fi
target/release/filter_cost run "$store/index" "$data/scifact/queries.jsonl" "$rounds"
