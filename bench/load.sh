#!/usr/bin/env bash
# Load benchmark of `grk serve` on SciFact: search and fetch_chunk over REST and MCP Streamable
# HTTP at 1 and 32 concurrent clients (requests/second, p50/p99 latency, server CPU time per
# request, server peak RSS), then the start-up time of `grk serve --stdio` to its first
# tools/list. Prints one JSON line per measurement.
#
#   bench/load.sh [DATA_DIR (default ../shared/data)] [SECONDS per run (default 5)] [REPEATS (3)]
#
# After a warm-up, REST and MCP runs alternate and each cell is repeated; the last lines are a
# summary with the median of each cell and the MCP/REST ratio of server CPU per request.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=${2:-5}
repeats=${3:-3}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin load
grk=target/release/grk
load=target/release/load

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

run() { # run TRANSPORT OP CONCURRENCY SECONDS
    "$load" --addr "127.0.0.1:$port" --pid "$server" --collection scifact \
        --queries "$data/queries.jsonl" --transport "$1" --op "$2" --concurrency "$3" --seconds "$4"
}
run rest search 4 2 >/dev/null && run mcp search 4 2 >/dev/null && run rest fetch 4 2 >/dev/null

results="$work/results.jsonl"
for op in search fetch; do
    for concurrency in 1 32; do
        for _ in $(seq "$repeats"); do
            for transport in rest mcp; do
                run "$transport" "$op" "$concurrency" "$seconds" | tee -a "$results"
            done
        done
    done
done
kill "$server"; wait "$server" 2>/dev/null || true
server=

python3 bench/startup.py "$grk" "$work/index" 15

python3 - "$results" <<'SUMMARY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
cells = {}
for row in rows:
    cells.setdefault((row["op"], row["concurrency"], row["transport"]), []).append(row)
print("summary (medians):")
for (op, conc, transport), runs in sorted(cells.items()):
    med = lambda key: statistics.median(r[key] for r in runs)
    print(f"  {op:11} c={conc:<2} {transport:4}  {med('requests_per_second'):8.0f} req/s  "
          f"p50 {med('p50_ms'):7.2f} ms  p99 {med('p99_ms'):7.2f} ms  "
          f"cpu {med('server_cpu_us_per_request'):6.0f} us/req  peak rss {max(r['server_peak_rss_mib'] for r in runs):5.1f} MiB")
for op in ("search", "fetch_chunk"):
    for conc in (1, 32):
        cpu = {t: statistics.median(r["server_cpu_us_per_request"] for r in cells[(op, conc, t)]) for t in ("rest", "mcp")}
        print(f"  MCP/REST server CPU per request, {op} c={conc}: {cpu['mcp'] / cpu['rest']:.2f}x")
SUMMARY
