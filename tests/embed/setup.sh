#!/usr/bin/env bash
# The embedding test environment: .venv-embed (gitignored) with the pinned packages of
# tests/python/requirements-embed.txt: the all-MiniLM-L6-v2 model (scripts/install-model.sh) and
# what the numpy embedding server needs. The Rust tests find the model and the server's Python
# interpreter there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
scripts/install-model.sh >/dev/null
.venv-embed/bin/pip install -q --disable-pip-version-check --no-deps -r tests/python/requirements-embed.txt
