#!/usr/bin/env bash
# How groundkit grows: for each corpus size, a synthetic corpus with SciFact's term statistics
# (bench/gen_corpus.py, one chunk per document), ingested and served on this machine, measured
# with SciFact's test queries. One JSON line per size, then a table.
#
#   bench/growth.sh [SIZES (default "5000 50000 500000 5000000")] [DATA_DIR (../shared/data)]
#                   [SECONDS per load run (5)] [DENSE_MAX (5000)] [WORDS (bursty|independent)]
#
# Per size: ingest wall time and peak RSS (/usr/bin/time), index size on disk, lexical search
# p50/p99 in process (bench/src/bin/search_qps, 3 passes), then `grk serve`: its RSS once started,
# then, after one warm-up pass of the queries, lexical search over REST at 1 and 32 clients
# (bench/src/bin/load, p50/p99, requests/s, the server's peak RSS during the runs) and index_status at
# 1 client. RSS is reported whole and anonymous (heap and stacks, without the memory-mapped index
# files the kernel can drop and re-read). Sizes up to DENSE_MAX are also embedded
# (all-MiniLM-L6-v2, a second ingest whose time is reported apart) and searched dense and hybrid
# over REST at 1 client. WORDS is gen_corpus.py's word model. Corpora are kept in
# target/growth/WORDS (reused when present); indexes are rebuilt every run.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-5000 50000 500000 5000000}
data=$(cd "${2:-../shared/data}" && pwd)
seconds=${3:-5}
dense_max=${4:-5000}
words=${5:-bursty}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin load
cargo build --release --locked -q -p groundkit-bench --bin search_qps
tests/embed/setup.sh
grk=$(pwd)/target/release/grk
load=target/release/load
search_qps=target/release/search_qps
minilm="$(scripts/install-model.sh)"
queries="$data/scifact/queries.jsonl"
store=target/growth/$words
mkdir -p "$store"
results=$(mktemp)
trap 'kill "${server:-}" 2>/dev/null || true; rm -f "$results"' EXIT

source bench/wait_for.sh
timed() { # timed OUT_FILE COMMAND...: runs it, writes "seconds peak_rss_kib" to OUT_FILE
    local out=$1
    shift
    /usr/bin/time -o "$out" -f "%e %M" "$@" >/dev/null 2>"$out.log"
}
warm() { # warm PORT: every query once over REST, so the runs below measure a warm server, as
    # search_qps does (it reports its median pass); the first pass maps the index's pages in
    python3 - "$1" "$queries" <<'PY'
import json, sys, urllib.request
port, path = sys.argv[1:]
for line in open(path):
    body = json.dumps({"collection": "growth", "query": json.loads(line)["text"]}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/search", body, {"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request).read()
PY
}
load_run() { # load_run PORT PID OP CONCURRENCY [MODE]
    "$load" --addr "127.0.0.1:$1" --pid "$2" --collection growth --queries "$queries" \
        --transport rest --op "$3" --concurrency "$4" --seconds "$seconds" --mode "${5:-lexical}"
}

echo "words: $words; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for size in $sizes; do
    dir="$store/g$size"
    mkdir -p "$dir"
    if [ ! -s "$dir/corpus.jsonl" ]; then
        .venv-embed/bin/python bench/gen_corpus.py "$size" "$dir/corpus.jsonl.tmp" --data "$data" \
            --words "$words"
        mv "$dir/corpus.jsonl.tmp" "$dir/corpus.jsonl"
    fi
    index="$dir/index"
    rm -rf "$index"
    timed "$dir/ingest.time" "$grk" --index-dir "$index" --base-dir "$dir" ingest \
        --collection growth --format beir "$dir/corpus.jsonl"
    chunks=$("$grk" --index-dir "$index" --base-dir "$dir" status --collection growth --json \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunk_count"])')
    bytes=$(du -sb "$index" | cut -f1)
    in_process=$("$search_qps" "$index" growth "$queries" 3)
    embed=()
    if [ "$size" -le "$dense_max" ]; then
        timed "$dir/embed.time" "$grk" --index-dir "$index" --base-dir "$dir" \
            --embed-model "$minilm" ingest --collection growth --format beir "$dir/corpus.jsonl"
        embed=(--embed-model "$minilm")
    fi
    port=$((20000 + RANDOM % 20000))
    GROUNDKIT_LOG=warn "$grk" --index-dir "$index" --base-dir "$dir" "${embed[@]}" \
        serve --port "$port" &
    server=$!
    wait_for "$port"
    started_rss=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
    started_anon=$(awk '/RssAnon/ {print $2}' "/proc/$server/status")
    warm "$port"
    rest_1=$(load_run "$port" "$server" search 1)
    rest_32=$(load_run "$port" "$server" search 32)
    status_1=$(load_run "$port" "$server" status 1)
    dense_1=None hybrid_1=None
    if [ "$size" -le "$dense_max" ]; then
        dense_1=$(load_run "$port" "$server" search 1 dense)
        hybrid_1=$(load_run "$port" "$server" search 1 hybrid)
    fi
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
    python3 - "$size" "$chunks" "$bytes" "$started_rss" "$started_anon" "$dir" <<PY | tee -a "$results"
import json, os, sys
size, chunks, size_bytes, rss, anon, folder = sys.argv[1:]
def timing(name):
    path = os.path.join(folder, name)
    if not os.path.exists(path) or int(size) > $dense_max and name == "embed.time":
        return None
    seconds, kib = open(path).read().split()[-2:]
    return {"seconds": float(seconds), "peak_rss_mib": int(kib) / 1024}
print(json.dumps({
    "documents": int(size), "chunks": int(chunks), "index_mib": int(size_bytes) / 2**20,
    "ingest": timing("ingest.time"), "embed_ingest": timing("embed.time"),
    "in_process": $in_process, "server_started_rss_mib": int(rss) / 1024,
    "server_started_rss_anon_mib": int(anon) / 1024,
    "rest_1": $rest_1, "rest_32": $rest_32, "status_1": $status_1,
    "dense_1": $dense_1, "hybrid_1": $hybrid_1,
}))
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$results" <<'TABLE'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| chunks | ingest | ingest peak RSS | index | in process p50/p99 | REST 1 client p50/p99 | REST 32 clients p50/p99, req/s | server RSS started / peak (anonymous) | index_status p50 | dense / hybrid p50 (1 client) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    ip, r1, r32, st = r["in_process"], r["rest_1"], r["rest_32"], r["status_1"]
    runs = [r1, r32, st]
    peak = max(run["server_peak_rss_mib"] for run in runs)
    anon = max(run["server_peak_rss_anon_mib"] for run in runs)
    dense = "-"
    if r["dense_1"]:
        dense = f'{r["dense_1"]["p50_ms"]:.1f} / {r["hybrid_1"]["p50_ms"]:.1f} ms'
    print(f'| {r["chunks"]:,} | {r["ingest"]["seconds"]:.1f} s | {r["ingest"]["peak_rss_mib"]:.0f} MiB '
          f'| {r["index_mib"]:,.0f} MiB | {ip["p50_ms"]:.2f} / {ip["p99_ms"]:.2f} ms '
          f'| {r1["p50_ms"]:.2f} / {r1["p99_ms"]:.2f} ms '
          f'| {r32["p50_ms"]:.1f} / {r32["p99_ms"]:.1f} ms, {r32["requests_per_second"]:.0f} '
          f'| {r["server_started_rss_mib"]:.0f} / {peak:.0f} MiB '
          f'({r["server_started_rss_anon_mib"]:.0f} / {anon:.0f}) | {st["p50_ms"]:.2f} ms | {dense} |')
TABLE
