#!/usr/bin/env bash
# A watched working tree: save-to-searchable latency, a `git checkout` burst, idle cost and a
# soak, against `grk serve --watch` (release build) on a generated code tree. See bench/watch.py.
#
#   bench/watch.sh [FILES (10000)] [ROUNDS (60)] [IDLE_SECONDS (600)] [SOAK_SECONDS (1800)]
#
# With EMBED=1, the tree is embedded with all-MiniLM-L6-v2 (installed by
# scripts/install-model.sh), so each edit's chunks are embedded before they are published.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p grk
if [ "${EMBED:-0}" = 1 ]; then
    tests/embed/setup.sh
    EMBED_MODEL=$(scripts/install-model.sh)
    export EMBED_MODEL
fi
exec python3 bench/watch.py "$PWD/target/release/grk" "$@"
