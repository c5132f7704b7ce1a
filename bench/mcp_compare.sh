#!/usr/bin/env bash
# groundkit against its peers, side by side in one run on SciFact:
#  - search over MCP Streamable HTTP against the official Rust MCP SDK: `grk serve` and
#    bench/peer-rmcp (rmcp 3.11 + tantivy 0.27, the same corpus, a `search` tool returning the
#    top-10 documents with their text), driven by the same load generator (`bench/src/bin/load`,
#    tools/call over one keep-alive connection per client, SciFact test queries), at 1 and 32
#    clients, rounds interleaved; groundkit's REST route in the same rounds, for MCP's cost
#    over REST;
#  - a trivial tool at 32 clients: the hello example's `greet` served by groundkit (over MCP and
#    over REST) against the peer's `greet` (same arguments, same answer);
#  - `grk serve --stdio` from spawn to its first `tools/list` (bench/startup.py);
#  - search in process against bm25s serving queries as its documentation does (a tokenizer
#    fitted once on the corpus), on its numba and numpy backends (bench/search_vs_bm25s.py).
# Prints one JSON line per run, then medians and ratios.
#
#   bench/mcp_compare.sh [DATA_DIR (default ../shared/data)] [SECONDS per run (5)] [ROUNDS (3)]
#
# The load generator runs on the same 2 cores as the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=${2:-5}
rounds=${3:-3}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin load
cargo build --release --locked -q -p groundkit-examples --bin hello
(cd bench/peer-rmcp && cargo build --release --locked -q)
grk=target/release/grk
load=target/release/load
peer=bench/peer-rmcp/target/release/peer-rmcp

work=$(mktemp -d)
trap 'kill ${ours:-} ${theirs:-} ${hello:-} 2>/dev/null || true; rm -rf "$work"' EXIT
"$grk" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact --format beir \
    "$data/corpus.jsonl" >/dev/null

source bench/wait_for.sh
our_port=$((20000 + RANDOM % 10000))
their_port=$((30000 + RANDOM % 10000))
hello_port=$((40000 + RANDOM % 10000))
GROUNDKIT_LOG=warn "$grk" --index-dir "$work/index" --base-dir "$data" serve --port "$our_port" &
ours=$!
GROUNDKIT_LOG=warn target/release/hello --port "$hello_port" &
hello=$!
"$peer" "$data/corpus.jsonl" "$their_port" >/dev/null &
theirs=$!
wait_for "$our_port" && wait_for "$their_port" && wait_for "$hello_port"

run() { # run NAME PORT PID CONCURRENCY SECONDS [OP (search)] [TRANSPORT (mcp)]
    "$load" --addr "127.0.0.1:$2" --pid "$3" --collection scifact --queries "$data/queries.jsonl" \
        --transport "${7:-mcp}" --op "${6:-search}" --concurrency "$4" --seconds "$5" \
        | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["server"]=sys.argv[1]; print(json.dumps(r))' "$1"
}
run groundkit "$our_port" "$ours" 4 2 >/dev/null && run rmcp "$their_port" "$theirs" 4 2 >/dev/null

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
results="$work/results.jsonl"
for _ in $(seq "$rounds"); do
    for concurrency in 1 32; do
        run groundkit "$our_port" "$ours" "$concurrency" "$seconds" | tee -a "$results"
        run rmcp "$their_port" "$theirs" "$concurrency" "$seconds" | tee -a "$results"
        run groundkit-rest "$our_port" "$ours" "$concurrency" "$seconds" search rest \
            | tee -a "$results"
    done
    run groundkit "$hello_port" "$hello" 32 "$seconds" greet | tee -a "$results"
    run groundkit-rest "$hello_port" "$hello" 32 "$seconds" greet rest | tee -a "$results"
    run rmcp "$their_port" "$theirs" 32 "$seconds" greet | tee -a "$results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" <<'SUMMARY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
med = lambda runs, key: statistics.median(r[key] for r in runs)
print("medians (search over MCP Streamable HTTP, SciFact test queries, top-10 with content):")
for conc in (1, 32):
    cells = {s: [r for r in rows if r["server"] == s and r["concurrency"] == conc and r["op"] == "search"] for s in ("groundkit", "rmcp")}
    for server, runs in cells.items():
        print(f"  c={conc:<2} {server:9}  {med(runs, 'requests_per_second'):8.0f} req/s  "
              f"p50 {med(runs, 'p50_ms'):6.2f} ms  p99 {med(runs, 'p99_ms'):6.2f} ms  "
              f"cpu {med(runs, 'server_cpu_us_per_request'):5.0f} us/req  "
              f"peak rss {max(r['server_peak_rss_mib'] for r in runs):6.1f} MiB")
    g, p = cells["groundkit"], cells["rmcp"]
    print(f"  c={conc:<2} groundkit / rmcp: requests/s {med(g, 'requests_per_second') / med(p, 'requests_per_second'):.2f}x, "
          f"server CPU per request {med(g, 'server_cpu_us_per_request') / med(p, 'server_cpu_us_per_request'):.2f}x")
    rest = [r for r in rows if r["server"] == "groundkit-rest" and r["concurrency"] == conc and r["op"] == "search"]
    print(f"  c={conc:<2} groundkit REST     {med(rest, 'requests_per_second'):8.0f} req/s  "
          f"cpu {med(rest, 'server_cpu_us_per_request'):5.0f} us/req; MCP / REST server CPU per request "
          f"{med(g, 'server_cpu_us_per_request') / med(rest, 'server_cpu_us_per_request'):.2f}x")
print("medians (trivial tool `greet`, 32 clients):")
greet = {s: [r for r in rows if r["server"] == s and r["op"] == "greet"] for s in ("groundkit", "groundkit-rest", "rmcp")}
for server, runs in greet.items():
    label = {"groundkit": "groundkit MCP", "groundkit-rest": "groundkit REST", "rmcp": "rmcp MCP"}[server]
    print(f"  {label:15} {med(runs, 'requests_per_second'):8.0f} req/s  p99 {med(runs, 'p99_ms'):6.2f} ms  "
          f"cpu {med(runs, 'server_cpu_us_per_request'):5.1f} us/call")
cpu = {s: med(runs, "server_cpu_us_per_request") for s, runs in greet.items()}
print(f"  groundkit MCP / REST server CPU per call: {cpu['groundkit'] / cpu['groundkit-rest']:.2f}x; "
      f"groundkit MCP / rmcp: {cpu['groundkit'] / cpu['rmcp']:.2f}x")
SUMMARY

echo "stdio spawn to first tools/list (15 spawns):"
python3 bench/startup.py "$grk" "$work/index" 15
kill "$ours" "$theirs" "$hello" 2>/dev/null || true
echo "search in process against bm25s:"
python3 bench/search_vs_bm25s.py "$data"
