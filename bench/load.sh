#!/usr/bin/env bash
# Load benchmark of `grk serve` on SciFact: search and fetch_chunk over REST and MCP Streamable
# HTTP at 1 and 32 concurrent clients (requests/second, p50/p99 latency, server CPU time per
# request, server peak RSS), then the start-up time of `grk serve --stdio` to its first
# tools/list. Prints one JSON line per measurement.
#
#   bench/load.sh [DATA_DIR (default ../shared/data)] [SECONDS per run (default 10)]
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=${2:-10}

cargo build --release --locked -q -p groundkit-server --bin grk --example load
grk=target/release/grk
load=target/release/examples/load

work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$grk" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact --format beir \
    "$data/corpus.jsonl" >/dev/null

port=$((20000 + RANDOM % 20000))
GROUNDKIT_LOG=warn "$grk" --index-dir "$work/index" --base-dir "$data" serve --port "$port" &
server=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done

for op in search fetch; do
    for transport in rest mcp; do
        for concurrency in 1 32; do
            "$load" --addr "127.0.0.1:$port" --pid "$server" --collection scifact \
                --queries "$data/queries.jsonl" --transport "$transport" --op "$op" \
                --concurrency "$concurrency" --seconds "$seconds"
        done
    done
done
kill "$server"; wait "$server" 2>/dev/null || true
server=

python3 bench/startup.py "$grk" "$work/index" 15
