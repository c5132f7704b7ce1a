#!/usr/bin/env bash
# Reranking latency over REST at 1 client on SciFact: lexical search alone, then the same search
# reranked at each candidate depth, with a cross-encoder the size of ms-marco-MiniLM-L-6-v2
# (bench/make_rerank_model.py: all-MiniLM-L6-v2's encoder under a random head; for timing only).
# Prints one JSON line per run (`bench/src/bin/load`), then the medians per depth.
#
#   bench/rerank_latency.sh [DATA_DIR (default ../shared/data)] [SECONDS per run (5)] [ROUNDS (3)]
#                           [DEPTHS (default "10 20 50 100")]
#
# Rounds are interleaved: each round starts one server per depth (the depth is the server's
# `--rerank-depth`) and measures plain and reranked search on it, one after the other.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=${2:-5}
rounds=${3:-3}
depths=${4:-10 20 50 100}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin load
grk=target/release/grk
load=target/release/load
minilm="$(scripts/install-model.sh)"

work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
.venv-embed/bin/python bench/make_rerank_model.py "$minilm" "$work/cross-encoder" >/dev/null
"$grk" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact --format beir \
    "$data/corpus.jsonl" >/dev/null

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results="$work/results.jsonl"
for round in $(seq "$rounds"); do
    for depth in $depths; do
        port=$((20000 + RANDOM % 20000))
        GROUNDKIT_LOG=warn "$grk" --index-dir "$work/index" --base-dir "$data" \
            --rerank-model "$work/cross-encoder" --rerank-depth "$depth" serve --port "$port" &
        server=$!
        for _ in $(seq 300); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
            sleep 0.1
        done
        for rerank in "" --rerank; do
            "$load" --addr "127.0.0.1:$port" --pid "$server" --collection scifact \
                --queries "$data/queries.jsonl" --transport rest --op search --concurrency 1 \
                --seconds "$seconds" $rerank \
                | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r.update(round=int(sys.argv[1]), depth=int(sys.argv[2]), reranked=sys.argv[3]=="--rerank"); print(json.dumps(r))' \
                    "$round" "$depth" "$rerank" | tee -a "$results"
        done
        kill "$server"; wait "$server" 2>/dev/null || true
        server=
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" <<'SUMMARY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("medians over rounds (REST, 1 client, top_k 10):")
for depth in sorted({r["depth"] for r in rows}):
    for reranked in (False, True):
        runs = [r for r in rows if r["depth"] == depth and r["reranked"] == reranked]
        med = lambda key: statistics.median(r[key] for r in runs)
        label = f"reranked, depth {depth:3}" if reranked else f"plain (server at depth {depth})"
        print(f"  {label:30} p50 {med('p50_ms'):8.2f} ms  p99 {med('p99_ms'):8.2f} ms  "
              f"{med('requests_per_second'):8.1f} req/s  peak rss {max(r['server_peak_rss_mib'] for r in runs):6.1f} MiB")
SUMMARY
