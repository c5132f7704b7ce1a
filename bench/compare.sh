#!/usr/bin/env bash
# Two builds of `grk serve` side by side: the load benchmark of bench/load.sh (search and
# fetch_chunk over REST and MCP Streamable HTTP at 1 and 32 clients) with runs alternating between
# build A and build B on one SciFact index, then the medians of each cell and the B/A ratios of
# requests/s, server CPU per request and peak RSS. For checking that a change costs nothing.
#
#   bench/compare.sh GRK_A GRK_B LOAD [DATA_DIR (../shared/data)] [SECONDS (5)] [REPEATS (3)]
#
# GRK_A and GRK_B are release `grk` binaries (e.g. built from two commits in two worktrees),
# LOAD the release `load` binary (`bench/src/bin/load.rs`). The index is ingested by GRK_A, so A must be the older
# build when the store format moved.
set -euo pipefail
cd "$(dirname "$0")/.."
grk_a=$(realpath "$1") grk_b=$(realpath "$2") load=$(realpath "$3")
data=$(cd "${4:-../shared/data}/scifact" && pwd)
seconds=${5:-5}
repeats=${6:-3}

work=$(mktemp -d)
trap 'kill "${pid_a:-}" "${pid_b:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$grk_a" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact --format beir \
    "$data/corpus.jsonl" >/dev/null

start() { # start GRK PORT: serves the index on PORT, prints the pid
    GROUNDKIT_LOG=warn "$1" --index-dir "$work/index" --base-dir "$data" serve --port "$2" \
        >/dev/null 2>&1 &
    echo $!
}
port_a=$((20000 + RANDOM % 10000)) port_b=$((30000 + RANDOM % 10000))
pid_a=$(start "$grk_a" "$port_a") pid_b=$(start "$grk_b" "$port_b")
for port in "$port_a" "$port_b"; do
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
done

run() { # run BUILD PORT PID TRANSPORT OP CONCURRENCY SECONDS
    "$load" --addr "127.0.0.1:$2" --pid "$3" --collection scifact \
        --queries "$data/queries.jsonl" --transport "$4" --op "$5" --concurrency "$6" \
        --seconds "$7" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["build"]=sys.argv[1]; print(json.dumps(r))' "$1"
}
for build in a b; do
    port=port_$build pid=pid_$build
    for transport in rest mcp; do
        run "$build" "${!port}" "${!pid}" "$transport" search 4 2 >/dev/null
        run "$build" "${!port}" "${!pid}" "$transport" fetch 4 2 >/dev/null
    done
done

results="$work/results.jsonl"
for op in search fetch; do
    for concurrency in 1 32; do
        for _ in $(seq "$repeats"); do
            for transport in rest mcp; do
                for build in a b; do
                    port=port_$build pid=pid_$build
                    run "$build" "${!port}" "${!pid}" "$transport" "$op" "$concurrency" "$seconds" \
                        | tee -a "$results"
                done
            done
        done
    done
done

python3 - "$results" <<'SUMMARY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
cells = {}
for row in rows:
    cells.setdefault((row["op"], row["concurrency"], row["transport"], row["build"]), []).append(row)
med = lambda runs, key: statistics.median(r[key] for r in runs)
print("op          clients transport  req/s A  req/s B   B/A   cpu us/req A  B     B/A   peak RSS MiB A  B")
for op in ("search", "fetch_chunk"):
    for conc in (1, 32):
        for transport in ("rest", "mcp"):
            a, b = cells[(op, conc, transport, "a")], cells[(op, conc, transport, "b")]
            qa, qb = med(a, "requests_per_second"), med(b, "requests_per_second")
            ca, cb = med(a, "server_cpu_us_per_request"), med(b, "server_cpu_us_per_request")
            ra = max(r["server_peak_rss_mib"] for r in a)
            rb = max(r["server_peak_rss_mib"] for r in b)
            print(f"{op:11} {conc:>7} {transport:9} {qa:8.0f} {qb:8.0f} {qb/qa:5.2f}   {ca:6.0f} {cb:6.0f} {cb/ca:5.2f}   {ra:6.1f} {rb:6.1f}")
for build in ("a", "b"):
    for op in ("search", "fetch_chunk"):
        for conc in (1, 32):
            cpu = {t: med(cells[(op, conc, t, build)], "server_cpu_us_per_request") for t in ("rest", "mcp")}
            print(f"build {build}: MCP/REST server CPU per request, {op} c={conc}: {cpu['mcp'] / cpu['rest']:.2f}x")
SUMMARY
