#!/usr/bin/env bash
# A watched working tree: save-to-searchable latency, a `git checkout` burst, idle cost and a
# soak, against `grk serve --watch` (release build) on a generated code tree. See bench/watch.py.
#
#   bench/watch.sh [FILES (10000)] [ROUNDS (60)] [IDLE_SECONDS (600)] [SOAK_SECONDS (1800)]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p grk
exec python3 bench/watch.py "$PWD/target/release/grk" "$@"
