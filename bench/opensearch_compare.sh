#!/usr/bin/env bash
# The OpenSearch backend beside the local one: a three-node cluster on this machine
# (tests/opensearch: OpenSearch 3.5 from Maven Central, 1 GiB heap per node), a corpus ingested
# once into an index directory (the local backend) and published from it to the cluster (one
# primary shard, one replica). Reports ingest and publish time, nDCG@10 of lexical, dense and
# hybrid through each backend (`grk eval`), and search over REST at 1 and 32 clients against a
# `grk serve` of each, rounds interleaved. One JSON line per run, then medians.
#
#   bench/opensearch_compare.sh [DATA_DIR (../shared/data)] [SECONDS per run (5)] [ROUNDS (3)]
#                               [EMBED (1: embed with all-MiniLM-L6-v2 for dense and hybrid)]
#                               [SIZE (none: SciFact)]
#
# With SIZE, the corpus is bench/gen_corpus.py's synthetic one of SIZE documents (kept in
# target/growth, shared with bench/growth.sh), searched lexically with the SciFact test queries:
# no embedding and no nDCG, which need real documents and judgements.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(cd "${1:-../shared/data}/scifact" && pwd)
seconds=${2:-5}
rounds=${3:-3}
embed=${4:-1}
size=${5:-}
corpus=$data/corpus.jsonl base=$data collection=scifact
if [ -n "$size" ]; then
    embed=0 collection=growth base=$(pwd)/target/growth/g$size
    corpus=$base/corpus.jsonl
    if [ ! -s "$corpus" ]; then
        tests/embed/setup.sh
        mkdir -p "$base"
        .venv-embed/bin/python bench/gen_corpus.py "$size" "$corpus.tmp" --data "$data/.."
        mv "$corpus.tmp" "$corpus"
    fi
fi
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin load
tests/opensearch/setup.sh >/dev/null
grk=$(pwd)/target/release/grk
load=target/release/load
embed_args=()
if [ "$embed" = 1 ]; then
    tests/embed/setup.sh
    embed_args=(--embed-model "$(scripts/install-model.sh)")
fi

source bench/start_cluster.sh
start_cluster

timed() { # timed NAME COMMAND...: runs it, prints {"NAME": {"seconds", "peak_rss_mib"}}
    local name=$1
    shift
    /usr/bin/time -o "$work/$name.time" -f "%e %M" "$@" >/dev/null
    read -r s kib <"$work/$name.time"
    printf '{"%s": {"seconds": %s, "peak_rss_mib": %s}}\n' "$name" "$s" "$((kib / 1024))"
}
local_dir="$work/local"
timed local_ingest "$grk" --index-dir "$local_dir" --base-dir "$base" "${embed_args[@]}" \
    ingest -c "$collection" --format beir "$corpus"
# The same ingest again finds nothing changed, so its time is the publish.
timed publish "$grk" --index-dir "$local_dir" --base-dir "$base" "${embed_args[@]}" \
    --opensearch-url "$url" ingest -c "$collection" --backend opensearch --format beir "$corpus"

modes=(lexical)
[ "$embed" = 1 ] && modes+=(dense hybrid)
[ -n "$size" ] && modes=()
empty="$work/empty"
mkdir -p "$empty"
for mode in ${modes[@]+"${modes[@]}"}; do
    for backend in local opensearch; do
        cluster_args=()
        dir=$local_dir
        if [ "$backend" = opensearch ]; then
            cluster_args=(--opensearch-url "$url")
            dir=$empty
        fi
        "$grk" --index-dir "$dir" --base-dir "$data" "${embed_args[@]}" "${cluster_args[@]}" \
            eval -c scifact --queries "$data/queries.jsonl" --qrels "$data/qrels/test.tsv" \
            --mode "$mode" --json \
            | python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"eval": sys.argv[1], "mode": sys.argv[2], "ndcg_at_10": r["ndcg_at_10"], "mrr_at_10": r["mrr_at_10"]}))' "$backend" "$mode"
    done
done

# One server per backend; the cluster's holds nothing but its empty index directory.
local_port=$((20000 + RANDOM % 10000))
cluster_port=$((30000 + RANDOM % 10000))
GROUNDKIT_LOG=warn "$grk" --index-dir "$local_dir" --base-dir "$base" serve --port "$local_port" &
local_pid=$!
pids+=("$local_pid")
GROUNDKIT_LOG=warn "$grk" --index-dir "$empty" --base-dir "$base" --opensearch-url "$url" \
    serve --port "$cluster_port" &
cluster_pid=$!
pids+=("$cluster_pid")
wait_for "$local_port" && wait_for "$cluster_port"
run() { # run NAME PORT PID CONCURRENCY
    "$load" --addr "127.0.0.1:$2" --pid "$3" --collection "$collection" --queries "$data/queries.jsonl" \
        --transport rest --op search --concurrency "$4" --seconds "$seconds" \
        | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["backend"]=sys.argv[1]; print(json.dumps(r))' "$1"
}
# Warm-up: the cluster's JVMs compile their hot paths during the first minute of queries.
for _ in 1 2 3 4 5 6; do
    run local "$local_port" "$local_pid" 4 >/dev/null
    run opensearch "$cluster_port" "$cluster_pid" 4 >/dev/null
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for _ in $(seq "$rounds"); do
    for concurrency in 1 32; do
        run local "$local_port" "$local_pid" "$concurrency"
        run opensearch "$cluster_port" "$cluster_pid" "$concurrency"
    done
done | tee "$work/runs.jsonl"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$work/runs.jsonl" <<'SUMMARY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("medians (search over REST, SciFact test queries, top-10 with content; the grk server's CPU only):")
for conc in (1, 32):
    for backend in ("local", "opensearch"):
        runs = [r for r in rows if r["backend"] == backend and r["concurrency"] == conc]
        med = lambda k: statistics.median(r[k] for r in runs)
        print(f"  c={conc:<2} {backend:10} {med('requests_per_second'):7.0f} req/s  p50 {med('p50_ms'):6.2f} ms  p99 {med('p99_ms'):6.2f} ms")
SUMMARY
