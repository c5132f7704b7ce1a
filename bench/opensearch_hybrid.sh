#!/usr/bin/env bash
# Hybrid search through an OpenSearch cluster, several `grk serve` builds side by side: starts the
# three-node cluster of bench/opensearch_compare.sh, ingests SciFact with all-MiniLM-L6-v2 vectors
# and publishes it with the last build, then serves it from the cluster with every build and runs
# REST hybrid searches at 1 client, rounds interleaved between builds, after four warm-up rounds.
#
#   bench/opensearch_hybrid.sh LOAD GRK... [DATA_DIR (../shared/data)]
#
# LOAD is the release `load` binary (`bench/src/bin/load.rs`), each GRK a release `grk` binary (e.g. built from
# two commits in two worktrees). Prints one JSON line per run, with the build's position.
set -euo pipefail
cd "$(dirname "$0")/.."
load=$(realpath "$1")
shift
builds=()
while [ $# -gt 0 ] && [ -x "$1" ] && [ ! -d "$1" ]; do
    builds+=("$(realpath "$1")")
    shift
done
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=5 rounds=3
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
tests/opensearch/setup.sh >/dev/null
tests/embed/setup.sh
model=$(scripts/install-model.sh)

source bench/start_cluster.sh
start_cluster

last=${builds[${#builds[@]}-1]}
"$last" --index-dir "$work/local" --base-dir "$data" --embed-model "$model" \
    ingest -c scifact --format beir "$data/corpus.jsonl" >/dev/null
"$last" --index-dir "$work/local" --base-dir "$data" --embed-model "$model" --opensearch-url "$url" \
    ingest -c scifact --backend opensearch --format beir "$data/corpus.jsonl" >/dev/null
mkdir -p "$work/empty"
ports=() servers=()
port=$((20000 + RANDOM % 10000))
for grk in "${builds[@]}"; do
    GROUNDKIT_LOG=warn "$grk" --index-dir "$work/empty" --base-dir "$data" --embed-model "$model" \
        --opensearch-url "$url" serve --port "$port" &
    servers+=($!) ports+=("$port")
    pids+=($!)
    wait_for "$port"
    port=$((port + 1))
done
run() { # run BUILD_INDEX CONCURRENCY SECONDS
    "$load" --addr "127.0.0.1:${ports[$1]}" --pid "${servers[$1]}" --collection scifact \
        --queries "$data/queries.jsonl" --transport rest --op search --concurrency "$2" \
        --seconds "$3" --mode hybrid
}
for _ in 1 2 3 4; do
    for i in "${!builds[@]}"; do run "$i" 4 3 >/dev/null; done
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    for i in "${!builds[@]}"; do
        echo "round $round build $((i + 1)) $(run "$i" 1 "$seconds")"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
