#!/usr/bin/env bash
# Extraction throughput per format: `grk ingest` of a directory holding one large file of that
# format (bench/formats_corpus.py), timed with /usr/bin/time -v; the median of ROUNDS rounds,
# the formats interleaved within each round. Prints one line per format: its file size, the
# median wall time, MB/s (file bytes over wall time: extraction, chunking and the index written
# together) and the median peak RSS.
#
#   cargo build --release -p grk
#   bench/formats.sh [DIR (/tmp/formats-corpus)] [ROUNDS (3)] [FORMAT...]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/tmp/formats-corpus}
ROUNDS=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
FORMATS=("$@")
if [ ${#FORMATS[@]} -eq 0 ]; then
  FORMATS=(txt html pdf docx odt pptx xlsx ods rtf ipynb eml mbox epub)
fi
GRK=${GRK:-target/release/grk}
python3 bench/formats_corpus.py "$DIR" "${FORMATS[@]}" >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for fmt in "${FORMATS[@]}"; do
    rm -rf "$OUT/index"
    /usr/bin/time -v "$GRK" --index-dir "$OUT/index" --base-dir "$DIR/$fmt" \
      ingest --collection bench "$DIR/$fmt" >"$OUT/$fmt.$round.out" 2>"$OUT/$fmt.$round.time" \
      || { echo "$fmt: ingest failed"; cat "$OUT/$fmt.$round.out"; exit 1; }
  done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
seconds() { # h:mm:ss or m:ss.ss, as /usr/bin/time prints the wall clock
  awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'
}
printf '%-6s %10s %9s %8s %10s  %s\n' format "size (MB)" "wall (s)" "MB/s" "RSS (MiB)" chunks
for fmt in "${FORMATS[@]}"; do
  bytes=$(stat -c %s "$DIR/$fmt/big.$fmt")
  wall=$(for r in $(seq 1 "$ROUNDS"); do
    grep 'Elapsed (wall clock)' "$OUT/$fmt.$r.time" | awk '{ print $NF }' | seconds
  done | median)
  rss=$(for r in $(seq 1 "$ROUNDS"); do
    grep 'Maximum resident set size' "$OUT/$fmt.$r.time" | awk '{ print $NF }'
  done | median)
  chunks=$(grep -o '[0-9]* chunks' "$OUT/$fmt.1.out" | tail -1)
  awk -v f="$fmt" -v b="$bytes" -v w="$wall" -v r="$rss" -v c="$chunks" 'BEGIN {
    printf "%-6s %10.1f %9.2f %8.1f %10.0f  %s\n", f, b / 1e6, w, b / 1e6 / w, r / 1024, c }'
done
