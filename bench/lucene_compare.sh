#!/usr/bin/env bash
# Exact BM25 top-10 against Lucene, size by size: how the cost of an exact lexical search grows
# with the collection in groundkit (tantivy, `retrieval::ranked_hits`, the search `grk serve`
# runs, without reading content) and in Lucene 10.3 (the Lucene OpenSearch 3.5 runs;
# bench/lucene/LuceneBm25.java, IndexSearcher.search(query, 10) with its block-max WAND /
# MaxScore skipping), on the same corpora, the same terms and the same BM25, each on one thread.
#
#   bench/lucene_compare.sh [SIZES ("scifact 5000 50000 500000 5000000")] [DATA_DIR (../shared/data)]
#                           [ALTERNATIONS (2)] [ROUNDS (3)] [WARMUP_SECONDS (15)]
#
# A size is a bursty corpus of bench/gen_corpus.py (target/growth/bursty/gSIZE, shared with
# bench/growth.sh and generated when missing) searched with SciFact's test queries, or `scifact`:
# SciFact itself, whose nDCG@10 on the test qrels says whether the two engines rank alike (the
# bursty corpora have no judged documents, so their nDCG means nothing). groundkit's index is the
# growth table's, brought up to date by an ingest without champion lists; Lucene's goes to
# target/lucene/gSIZE (indexed when missing, timed). Per size, after an untimed groundkit pass
# that maps the index in, the two engines run in turn ALTERNATIONS times, each for ROUNDS rounds
# of every query (Lucene after WARMUP_SECONDS of untimed rounds for its JIT). One JSON line per
# run in target/lucene/results.jsonl, then a table of medians; the JVM's messages go to
# target/lucene/lucene.log.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-scifact 5000 50000 500000 5000000}
data=$(cd "${2:-../shared/data}" && pwd)
alternations=${3:-2}
rounds=${4:-3}
warmup=${5:-15}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin lexical_exact
out=target/lucene
mkdir -p "$out"
if [ ! -f "$out/lib.stamp" ] || [ bench/lucene/pom.xml -nt "$out/lib.stamp" ]; then
    rm -rf "$out/lib"
    mvn -q -B -f bench/lucene/pom.xml dependency:copy-dependencies \
        -DoutputDirectory="$(pwd)/$out/lib"
    touch "$out/lib.stamp"
fi
rm -rf "$out/classes"
"$JAVA_HOME/bin/javac" -d "$out/classes" -cp "$out/lib/*" bench/lucene/LuceneBm25.java
# As Lucene's documentation asks, for its vectorised postings decoding.
lucene=("$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED
    -cp "$out/classes:$out/lib/*" LuceneBm25)
grk=target/release/grk
exact=target/release/lexical_exact
queries=$data/scifact/queries.jsonl
qrels=$data/scifact/qrels/test.tsv
results=$out/results.jsonl
: >"$results"

for size in $sizes; do
    if [ "$size" = scifact ]; then
        corpus=$data/scifact/corpus.jsonl dir=$out/scifact
    else
        dir=target/growth/bursty/g$size corpus=target/growth/bursty/g$size/corpus.jsonl
        if [ ! -s "$corpus" ]; then
            tests/embed/setup.sh
            mkdir -p "$dir"
            .venv-embed/bin/python bench/gen_corpus.py "$size" "$corpus.tmp" --data "$data"
            mv "$corpus.tmp" "$corpus"
        fi
    fi
    # Ingested afresh, or found unchanged.
    mkdir -p "$dir"
    "$grk" --index-dir "$dir/index" --base-dir "$(dirname "$corpus")" ingest \
        --collection growth --format beir "$corpus" >&2
    if [ ! -d "$out/g$size" ]; then
        "${lucene[@]}" index "$corpus" "$out/g$size" 2>>"$out/lucene.log" \
            | sed "s/^{/{\"size\": \"$size\", /" | tee -a "$results"
    fi
    "$exact" "$dir/index" growth "$queries" "$qrels" 1 >/dev/null
    for _ in $(seq "$alternations"); do
        "$exact" "$dir/index" growth "$queries" "$qrels" "$rounds" \
            | python3 -c 'import json,sys; r=json.load(sys.stdin)
print(json.dumps({"size": sys.argv[1], "engine": "groundkit", "documents": r["chunks"],
    "rounds": r["rounds"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"],
    "round_seconds_median": r["round_seconds_median"], "ndcg_at_10": r["ndcg_at_10"]}))' \
            "$size" | tee -a "$results"
        "${lucene[@]}" search "$out/g$size" "$queries" "$qrels" "$warmup" "$rounds" \
            2>>"$out/lucene.log" \
            | sed "s/^{/{\"size\": \"$size\", /" | tee -a "$results"
    done
done

python3 - "$results" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if '"p50_ms"' in l]
print("| size | engine | documents | p50 / p99 ms | round s | nDCG@10 |")
print("| --- | --- | --- | --- | --- | --- |")
for size in dict.fromkeys(r["size"] for r in runs):
    for engine in ("groundkit", "lucene"):
        rs = [r for r in runs if r["size"] == size and r["engine"] == engine]
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"| {size} | {engine} | {rs[0]['documents']:,} | "
              f"{med('p50_ms'):.3f} / {med('p99_ms'):.2f} | {med('round_seconds_median'):.3f} | "
              f"{med('ndcg_at_10'):.4f} |")
EOF
