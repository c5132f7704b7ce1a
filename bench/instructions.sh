#!/usr/bin/env bash
# Instructions per request of one server binary, over REST and over MCP Streamable HTTP, counted
# by valgrind's callgrind: unlike CPU time, the count does not move with the machine's load, so it
# settles differences of a few per cent that timed runs cannot.
#
#   bench/instructions.sh SERVER LOAD [OP (search)] [DATA_DIR (../shared/data)] [SECONDS (10)]
#
# SERVER is a release `grk` (OP search: it serves SciFact, ingested first into a temporary
# index) or the release `hello` example (OP greet). LOAD is the release `bench/src/bin/load`. (Not
# fetch: the load generator first searches for chunk ids to fetch, and those searches would be
# counted too.) The server runs under callgrind with instrumentation off; after a warm-up of
# each transport, instrumentation is switched on for one 1-client run of OP per transport, and
# the instructions counted in it are divided by the requests the load generator completed. Both
# transports run in the same process, so they are counted on the same warmed-up server. Prints
# one line per transport, then the MCP/REST ratio. The callgrind files stay in the printed
# directory for `callgrind_annotate` (the index is removed).
set -euo pipefail
cd "$(dirname "$0")/.."
server=$(realpath "$1") load=$(realpath "$2")
op=${3:-search}
case "$op" in
    search | greet) ;;
    *) echo "OP is search or greet" >&2; exit 2 ;;
esac
data=$(cd "${4:-../shared/data}/scifact" && pwd)
seconds=${5:-10}

work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true' EXIT
port=$((20000 + RANDOM % 20000))
if [ "$op" = greet ]; then
    args=(--port "$port")
else
    "$server" --index-dir "$work/index" --base-dir "$data" ingest --collection scifact \
        --format beir "$data/corpus.jsonl" >/dev/null 2>"$work/ingest.log"
    args=(--index-dir "$work/index" --base-dir "$data" serve --port "$port")
fi
GROUNDKIT_LOG=warn valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$work/callgrind.%p" "$server" "${args[@]}" >"$work/server.log" 2>&1 &
pid=$!
source bench/wait_for.sh
wait_for "$port"

run() { # run TRANSPORT SECONDS
    "$load" --addr "127.0.0.1:$port" --pid "$pid" --collection scifact \
        --queries "$data/queries.jsonl" --transport "$1" --op "$op" --concurrency 1 --seconds "$2"
}
for transport in rest mcp; do
    run "$transport" 3 >/dev/null
done
for transport in rest mcp; do
    callgrind_control --zero "$pid" >/dev/null 2>&1
    callgrind_control --instr=on "$pid" >/dev/null 2>&1
    run "$transport" "$seconds" >"$work/$transport.json"
    callgrind_control --instr=off "$pid" >/dev/null 2>&1
    callgrind_control --dump="$transport" "$pid" >/dev/null 2>&1
done
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
rm -rf "$work/index"

python3 - "$work" "$op" <<'SUMMARY'
import glob, json, sys
work, op = sys.argv[1], sys.argv[2]
per_request = {}
for path in glob.glob(f"{work}/callgrind.*"):
    trigger = total = None
    for line in open(path):
        if line.startswith("desc: Trigger: "):
            trigger = line.split()[-1]
        elif line.startswith("totals: "):
            total = int(line.split()[1])
    if trigger in ("rest", "mcp") and total is not None:
        requests = json.load(open(f"{work}/{trigger}.json"))["requests"]
        per_request[trigger] = total / requests
        print(f"{op} {trigger:4} {requests:6} requests  {total / requests:12,.0f} instructions/request")
print(f"{op} MCP/REST instructions per request: {per_request['mcp'] / per_request['rest']:.3f}x")
print(f"callgrind files: {work}")
SUMMARY
