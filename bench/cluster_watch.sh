#!/usr/bin/env bash
# A watched collection published to a three-node OpenSearch cluster on this machine
# (bench/start_cluster.sh): the first ingest and full publish of SIZE chunks, then save to
# searchable for one-record changes, each generation grown from the one before
# (bench/cluster_watch.py). The corpus is bench/filter_cost.sh's: bench/gen_corpus.py's
# synthetic documents split into 100 BEIR files (built by that script when absent).
#
#   bench/cluster_watch.sh [SIZE (500000)] [ROUNDS (5)]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-500000}
rounds=${2:-5}
corpus=target/filter-cost/$size/corpus
[ -d "$corpus/p99" ] || { echo "no corpus at $corpus: run bench/filter_cost.sh $size first" >&2; exit 1; }
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
cargo build --release --locked -q -p grk
tests/opensearch/setup.sh >/dev/null
source bench/start_cluster.sh
start_cluster
# A copy of the corpus, since the rounds rewrite it.
cp -r "$corpus" "$work/corpus"
python3 bench/cluster_watch.py "$PWD/target/release/grk" "$url" "$work/corpus" "$work/index" "$rounds"
