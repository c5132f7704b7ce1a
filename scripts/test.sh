#!/usr/bin/env bash
# The whole test suite: every Rust test (unit, integration, compile-fail, expansion snapshots),
# then the real-client tests when their runner is present. Installs nothing system-wide but
# strace, from the system's packages, when it is missing; client environments are created under
# the repository (.venv, node_modules), and the OpenSearch test cluster's Maven artifacts under
# target/opensearch (Maven's own cache aside).
set -euo pipefail
cd "$(dirname "$0")/.."

# strace: one crash test kills an ingest at an exact fsync with its fault injection.
if ! command -v strace >/dev/null; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && $sudo apt-get install -y -qq strace
fi
tests/embed/setup.sh
tests/opensearch/setup.sh >/dev/null
cargo test --locked "$@"  # the default members: every crate but the benchmark programs

if [ -x tests/clients/run.sh ]; then
    tests/clients/run.sh
fi
