#!/usr/bin/env bash
# A framework-only user depends on groundkit-core and groundkit-server with default features off
# and must pull no tantivy or SQLite. The hello example is such a user: check its dependency tree
# and that it builds that way.
set -euo pipefail
cd "$(dirname "$0")/.."

for package in groundkit-examples groundkit-server groundkit-core; do
    args=(-p "$package" -e normal --prefix none --locked)
    [ "$package" = groundkit-examples ] || args+=(--no-default-features)
    heavy=$(cargo tree "${args[@]}" | grep -E '^(tantivy|rusqlite|libsqlite3-sys) ' | sort -u || true)
    if [ -n "$heavy" ]; then
        echo "framework-only build of $package pulls retrieval dependencies:" >&2
        echo "$heavy" >&2
        exit 1
    fi
    echo "$package (framework only): no tantivy, no SQLite"
done
cargo check -p groundkit-examples --locked --quiet
