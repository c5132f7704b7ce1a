#!/usr/bin/env bash
# The grounding service (groundkit-server's `retrieval` feature, without `cli`) is built on the
# retrieval engine's read surface only. groundkit-retrieval's write surface (`ingest`, the store
# and index writers) exists only with its `ingest` feature, so: check that the service's features
# do not turn `ingest` on, and that the service compiles without it. A service tool that named
# anything of the write surface would fail this build.
set -euo pipefail
cd "$(dirname "$0")/.."

service=(-p groundkit-server --no-default-features --features retrieval --locked)
if cargo tree "${service[@]}" -e features -i groundkit-retrieval | grep -q 'groundkit-retrieval feature "ingest"'; then
    echo "groundkit-server's retrieval feature turns on groundkit-retrieval's ingest feature" >&2
    exit 1
fi
if cargo tree "${service[@]}" -e normal --prefix none | grep -qE '^tree-sitter'; then
    echo "groundkit-server's retrieval feature pulls tree-sitter (source code ingest is grk's)" >&2
    exit 1
fi
cargo check "${service[@]}" --quiet
echo "groundkit-server (service only): built without the engine's write surface"
