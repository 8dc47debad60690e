#!/usr/bin/env bash
# Run HERE (the dev machine, with network to the package index): fills .gpu/ with what
# benchmarks/gpu_check.sh needs on a fresh GPU machine that can fetch nothing, and checks that each
# device-tool call stays under its 64 MiB carry limit. .gpu/ and .gpu-part1/ are git-ignored.
#
#   .gpu/wheels/          chronoprobe's dependencies the GPU image lacks, for its CPython 3.12
#   .gpu/model-skeleton/  SmolLM2-135M-Instruct's config and tokenizer (3.5 MB; the weights do not fit)
#   --split-gguf:         the SmolLM2 Q4_1 GGUF (94 MiB) in two parts: .gpu-part1/ (carried by a first
#                         call that copies it to /tmp) and .gpu/gguf/ (carried by the gpu_check.sh call)
#
# Usage: benchmarks/gpu_prepare.sh [--split-gguf]     (docs/scale.md, "GPU and vLLM")
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
LIMIT=$((64 * 1024 * 1024))
SPLIT=0
[[ ${1:-} == --split-gguf ]] && SPLIT=1

rm -rf .gpu .gpu-part1
mkdir -p .gpu/wheels .gpu/model-skeleton

# 1. Wheels, pinned to the versions this venv runs. The GPU image (/work/.library/device/KINDS.md) has
#    torch, transformers, numpy, pandas, typer, rich, httpx, matplotlib, pytest... but not these.
version() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1"; }
pins=()
for name in pydantic pydantic-core annotated-types typing-inspection gguf platformdirs nltk defusedxml; do
    pins+=("$name==$(version "$name")")
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .gpu/wheels "${pins[@]}"
# rouge-score publishes only a source archive; build its (pure Python) wheel here.
python3 -m pip wheel -q --no-deps -w .gpu/wheels "rouge-score==$(version rouge-score)"

# 2. The model's config and tokenizer, from the converted SmolLM2 folder (./setup.sh made it).
converted=$("$PY" -c "from chronoprobe.models.embedded import converted_gguf, smollm2_gguf; print(converted_gguf(smollm2_gguf())[0])")
for f in config.json generation_config.json tokenizer.json tokenizer_config.json special_tokens_map.json chat_template.jinja; do
    [[ -f $converted/$f ]] && cp "$converted/$f" .gpu/model-skeleton/
done

# 3. DynamicQA data for conflicts CP: nothing to carry, it ships inside the package (src/chronoprobe/data).

# 4. Optionally the real weights, in two parts: 56 MiB + the rest.
if ((SPLIT)); then
    gguf=$("$PY" -c "from chronoprobe.models.embedded import smollm2_gguf; print(smollm2_gguf())")
    mkdir -p .gpu-part1 .gpu/gguf
    name=$(basename "$gguf")
    (cd "$(dirname "$gguf")" && sha256sum "$name") >.gpu/gguf/SHA256SUMS
    split -b 56M -d -a 1 "$gguf" ".gpu/gguf/$name.part"
    mv ".gpu/gguf/$name.part0" .gpu-part1/
fi

# 5. What each call carries: the working tree plus its carried folder.
tree=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- | tail -1 | cut -f1)
ok=1
for folder in .gpu .gpu-part1; do
    [[ -d $folder ]] || continue
    size=$(du -sb "$folder" | cut -f1)
    total=$((tree + size))
    awk -v f="$folder" -v s="$size" -v t="$tree" \
        'BEGIN { m = 1048576; printf "%-11s %5.1f MiB + working tree %4.1f MiB = %5.1f MiB of 64 MiB\n", f, s / m, t / m, (s + t) / m }'
    ((total < LIMIT)) || { echo "gpu_prepare: $folder is over the 64 MiB carry limit" >&2; ok=0; }
done
((ok)) || exit 1
echo "ready: see docs/scale.md (GPU and vLLM) for the device-tool calls"
