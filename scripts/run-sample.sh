#!/usr/bin/env bash
# Build grk, ingest the bundled sample corpus into .groundkit/, and serve it: REST and MCP
# (Streamable HTTP at /mcp) on http://127.0.0.1:${PORT:-8080}. Pass --stdio to serve MCP over
# stdio instead. Re-running is cheap: the ingest is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked -p groundkit-server --bin grk
grk=target/release/grk
export GROUNDKIT_INDEX_DIR="$PWD/.groundkit"

"$grk" ingest --collection sample sample >&2
if [ "${1:-}" = "--stdio" ]; then
    exec "$grk" serve --stdio
fi
exec "$grk" serve --port "${PORT:-8080}"
