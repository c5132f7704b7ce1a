#!/usr/bin/env bash
# A framework-only user depends on groundkit-core and groundkit-server with their default
# features and must pull no retrieval engine, tantivy, SQLite or embedder (tokenizers, gemm,
# TLS), no tree-sitter and no office readers (zip, quick-xml, calamine). The hello example is
# such a user: check its dependency tree and that it builds that way.
# groundkit-core knows no transport and no engine: no HTTP server, no JSON-RPC library and no
# groundkit-retrieval in its tree.
set -euo pipefail
cd "$(dirname "$0")/.."

for package in groundkit-examples groundkit-server groundkit-core; do
    args=(-p "$package" -e normal --prefix none --locked)
    heavy=$(cargo tree "${args[@]}" | grep -E '^(groundkit-retrieval|tantivy|rusqlite|libsqlite3-sys|groundkit-embed|tokenizers|gemm|rustls|tree-sitter[a-z-]*|zip|quick-xml|calamine) ' | sort -u || true)
    if [ -n "$heavy" ]; then
        echo "framework-only build of $package pulls retrieval dependencies:" >&2
        echo "$heavy" >&2
        exit 1
    fi
    echo "$package (framework only): no engine, no tantivy, no SQLite, no embedder, no tree-sitter, no office readers"
done
transport=$(cargo tree -p groundkit-core -e normal --prefix none --locked \
    | grep -E '^(actix-[a-z-]+|jsonrpsee[a-z-]*|groundkit-retrieval) ' | sort -u || true)
if [ -n "$transport" ]; then
    echo "groundkit-core pulls transport or engine dependencies:" >&2
    echo "$transport" >&2
    exit 1
fi
echo "groundkit-core: no actix, no jsonrpsee, no engine"
cargo check -p groundkit-examples --locked --quiet
