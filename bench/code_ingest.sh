#!/usr/bin/env bash
# Ingest and search of a source tree as a code collection, against ripgrep reading the same
# files. Prints one line per measurement, then the medians.
#
#   bench/code_ingest.sh [TREE (default: the Python standard library)] [ROUNDS (3)]
#
# TREE's top-level entries except `site-packages` are the inputs. Each round, interleaved:
#   rg cold   `rg -c . INPUTS` after the tree's pages are evicted from the page cache
#             (posix_fadvise DONTNEED on each of its files; nothing else's cache is touched)
#   rg warm   the same right after, the tree cached
#   ingest    `grk ingest` from scratch (tree cached), lexical only, under /usr/bin/time -v
#   reingest  the same again, nothing changed: every file read and hashed, none extracted
# then in-process search (`search_qps`, lexical top 10 with content, one query at a time) and
# REST search at 1 client (`load --transport rest --concurrency 1`) on the last collection,
# when QUERIES names a BEIR queries.jsonl (bench/code_eval.py's queries_test.jsonl, say).
# With EMBED_MODEL=DIR and EMBED_SUBDIR=SUB, one more ingest per round embeds TREE/SUB only.
# With BASELINE_GRK=PATH (another build of grk), each round also ingests with it, lexical only,
# right after this build's ingest.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(cd "${1:-$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')}" && pwd)
rounds=${2:-3}
queries=${QUERIES:-}

cargo build --release --locked -q -p grk
cargo build --release --locked -q -p groundkit-bench --bin search_qps --bin load
grk=$PWD/target/release/grk
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

inputs=()
for entry in "$tree"/*; do
    [ "$(basename "$entry")" = site-packages ] || inputs+=("$entry")
done
read -r files bytes < <(rg --files "${inputs[@]}" | python3 -c '
import os, sys
paths = [p.rstrip("\n") for p in sys.stdin]
print(len(paths), sum(os.path.getsize(p) for p in paths))')
echo "tree $tree: $files files, $bytes bytes (as rg lists them)"

evict() {
    rg --files "${inputs[@]}" | python3 -c '
import os, sys
for p in sys.stdin:
    fd = os.open(p.rstrip("\n"), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)'
}
seconds() { python3 -c 'import sys, time; t = time.time(); import subprocess; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); print(f"{time.time() - t:.3f}")' "$@"; }
ingest() { # [GRK=PATH] [AGAIN=1] ingest NAME EXTRA_ARGS... -> "wall_s peak_rss_kib documents chunks"
    local name=$1; shift
    [ -n "${AGAIN:-}" ] || rm -rf "$work/index-$name"
    /usr/bin/time -v "${GRK:-$grk}" --index-dir "$work/index-$name" --base-dir "$tree" ingest \
        --collection code "$@" >"$work/out" 2>"$work/err" || true
    local wall rss summary
    wall=$(grep 'Elapsed (wall clock)' "$work/err" | awk '{print $NF}' |
        awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    rss=$(grep 'Maximum resident set size' "$work/err" | awk '{print $NF}')
    summary=$(cat "$work/out" "$work/err" | grep -o 'generation [0-9]*: [0-9]* documents, [0-9]* chunks' | tail -1 |
        awk '{print $3, $5}')
    echo "$wall $rss $summary"
}

for round in $(seq "$rounds"); do
    evict
    echo "round $round rg-cold $(seconds rg -c . "${inputs[@]}") s"
    echo "round $round rg-warm $(seconds rg -c . "${inputs[@]}") s"
    read -r wall rss docs chunks < <(ingest lexical "${inputs[@]}")
    echo "round $round ingest-lexical $wall s, peak RSS $rss KiB, $docs documents, $chunks chunks," \
        "$(python3 -c "print(f'{$docs/$wall:.0f} documents/s')")"
    if [ "$round" = 1 ]; then
        echo "grk reads $(python3 - "$work/index-lexical/code.sqlite3" "$tree" <<'PY'
import os, sqlite3, sys
sources = [row[0] for row in sqlite3.connect(sys.argv[1]).execute("SELECT DISTINCT source FROM documents")]
print(f"{len(sources)} of those files, {sum(os.path.getsize(os.path.join(sys.argv[2], s)) for s in sources)} bytes")
PY
)"
    fi
    read -r wall rss docs chunks < <(AGAIN=1 ingest lexical "${inputs[@]}")
    echo "round $round reingest-unchanged $wall s, peak RSS $rss KiB"
    if [ -n "${BASELINE_GRK:-}" ]; then
        read -r wall rss docs chunks < <(GRK=$BASELINE_GRK ingest baseline "${inputs[@]}")
        echo "round $round ingest-lexical-baseline $wall s, peak RSS $rss KiB, $docs documents," \
            "$chunks chunks, $(python3 -c "print(f'{$docs/$wall:.0f} documents/s')")"
    fi
    if [ -n "${EMBED_MODEL:-}" ]; then
        read -r wall rss docs chunks < <(ingest embed --embed-model "$EMBED_MODEL" "$tree/$EMBED_SUBDIR")
        echo "round $round ingest-embed($EMBED_SUBDIR) $wall s, peak RSS $rss KiB, $docs documents," \
            "$chunks chunks, $(python3 -c "print(f'{$chunks/$wall:.1f} chunks/s')")"
    fi
done

if [ -n "$queries" ]; then
    target/release/search_qps "$work/index-lexical" code "$queries" 3
    port=$((20000 + RANDOM % 20000))
    GROUNDKIT_LOG=warn "$grk" --index-dir "$work/index-lexical" --base-dir "$tree" serve \
        --port "$port" &
    server=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    for _ in $(seq "$rounds"); do
        target/release/load --addr "127.0.0.1:$port" --pid "$server" --collection code \
            --queries "$queries" --transport rest --op search --concurrency 1 --seconds 4
    done
fi
