"""Big models on the hf backend: dtype, device map, quantisation, PEFT adapters, memory checks, auto batch size.

The refusals run against real folders (a config with no weights, a real LoRA adapter saved
by peft) and must come as one line before any weights load.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from chronoprobe.cache import sample_key
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.loading import (
    AUTO_BATCH_CAP,
    auto_dtype,
    dtype_label,
    largest_fitting,
    rows_that_fit,
)
from chronoprobe.models.registry import BackendOptions, load_backend, parse_model_spec
from cli_driver import said_lines

PROMPTS = [
    Prompt.chat("Name the capital of France in one word.", fallback_text="The capital of France is"),
    Prompt.chat("Who wrote Hamlet? Answer with the name only.", fallback_text="Hamlet was written by"),
    Prompt.chat("Say hello.", fallback_text="Hello"),
]
GREEDY = DecodingParams(max_new_tokens=8)


def _one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


@pytest.fixture(scope="module")
def smollm2_folder() -> Path:
    """The converted SmolLM2 folder that the ``smollm2`` spec runs (a plain transformers folder)."""
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    return converted_gguf(smollm2_gguf())[0]


@pytest.fixture
def huge_folder(tmp_path: Path) -> Path:
    """A GPT-2 config claiming about 1.3 trillion parameters, and no weights at all."""
    from transformers import GPT2Config

    folder = tmp_path / "huge-gpt2"
    GPT2Config(n_embd=16384, n_layer=400, n_head=128, vocab_size=50257).save_pretrained(folder)
    return folder


# --- pure parts -----------------------------------------------------------------------------------


def test_auto_dtype_prefers_native_bf16_then_fp16_and_fp32_on_cpu() -> None:
    assert auto_dtype("cuda", (9, 0)) == torch.bfloat16
    assert auto_dtype("cuda", (8, 0)) == torch.bfloat16
    assert auto_dtype("cuda", (7, 5)) == torch.float16
    assert auto_dtype("cpu") == torch.float32


def test_quantisation_is_in_the_recorded_dtype_only_when_set() -> None:
    assert dtype_label(torch.float32, None) == "float32"
    assert dtype_label(torch.bfloat16, "4bit") == "bfloat16+bnb-4bit-nf4"
    assert dtype_label(torch.float16, "8bit") == "float16+bnb-8bit"


@pytest.mark.parametrize(
    ("raw", "target", "revision", "adapter", "adapter_revision"),
    [
        ("hf:org/base+org/lora", "org/base", "main", "org/lora", "main"),
        ("hf:org/base@v1+org/lora@abc", "org/base", "v1", "org/lora", "abc"),
        ("hf:/models/base+/adapters/x", "/models/base", "main", "/adapters/x", "main"),
        ("hf:org/base", "org/base", "main", None, "main"),
    ],
)
def test_adapter_specs(raw: str, target: str, revision: str, adapter: str | None, adapter_revision: str) -> None:
    spec = parse_model_spec(raw)
    assert (spec.target, spec.revision, spec.adapter, spec.adapter_revision) == (
        target,
        revision,
        adapter,
        adapter_revision,
    )


@pytest.mark.parametrize("raw", ["hf:org/base+", "hf:+org/lora", "hf:@v1+org/lora"])
def test_incomplete_adapter_specs_are_one_line(raw: str) -> None:
    with pytest.raises(ConfigError, match=r"hf:<base>\[@revision\]\+<adapter>") as caught:
        parse_model_spec(raw)
    _one_line(caught)


def test_rows_that_fit_is_a_capped_power_of_two() -> None:
    from transformers import LlamaConfig

    config = LlamaConfig(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9)
    assert rows_that_fit(config, sequence=200, dtype_bytes=4, available=2**40) == AUTO_BATCH_CAP
    assert rows_that_fit(config, sequence=200, dtype_bytes=4, available=1) == 1
    middle = rows_that_fit(config, sequence=200, dtype_bytes=4, available=300 * 2**20)
    assert 1 < middle < AUTO_BATCH_CAP and middle & (middle - 1) == 0
    # longer sequences never get bigger batches
    assert rows_that_fit(config, sequence=2000, dtype_bytes=4, available=300 * 2**20) <= middle


def test_largest_fitting_halves_past_out_of_memory_errors() -> None:
    tried: list[int] = []

    def trial(size: int) -> None:
        tried.append(size)
        if size > 12:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    assert largest_fitting(trial, 64) == 8
    assert tried == [64, 32, 16, 8]


def test_largest_fitting_refuses_when_one_row_does_not_fit() -> None:
    def trial(size: int) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(ConfigError, match="not even one prompt fits") as caught:
        largest_fitting(trial, 4)
    _one_line(caught)


# --- refusals before any load -------------------------------------------------------------------


@pytest.mark.e2e
def test_a_model_too_big_for_memory_is_refused_fast(huge_folder: Path) -> None:
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="does not fit in memory") as caught:
        load_backend(f"hf:{huge_folder}")  # no weights in the folder: reaching the load would fail otherwise
    message = _one_line(caught)
    assert "float32" in message and "--quantize 4bit" in message
    assert time.perf_counter() - started < 30


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("bitsandbytes") is not None, reason="bitsandbytes is installed"
)
def test_quantize_without_bitsandbytes_names_the_extra(huge_folder: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_backend(f"hf:{huge_folder}", BackendOptions(quantize="4bit"))
    message = _one_line(caught)
    assert "bitsandbytes" in message and "pip install 'chronoprobe[quant]'" in message


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_quantize_on_a_cpu_only_machine_is_refused(
    huge_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a bitsandbytes that imports: the refusal must then be about the missing GPU
    (tmp_path / "site" / "bitsandbytes").mkdir(parents=True)
    (tmp_path / "site" / "bitsandbytes" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ConfigError, match="needs a CUDA GPU") as caught:
        load_backend(f"hf:{huge_folder}", BackendOptions(quantize="8bit"))
    _one_line(caught)


def test_device_map_with_an_explicit_device_is_refused(huge_folder: Path) -> None:
    with pytest.raises(ConfigError, match="leave --device at auto") as caught:
        load_backend(f"hf:{huge_folder}", BackendOptions(device_map="auto", device="cpu"))
    _one_line(caught)


def test_missing_peft_names_the_extra(huge_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "peft", None)  # what an interpreter without peft sees
    (tmp_path / "adapter").mkdir()
    with pytest.raises(ConfigError, match=r"pip install 'chronoprobe\[peft\]'") as caught:
        load_backend(f"hf:{huge_folder}+{tmp_path / 'adapter'}")
    _one_line(caught)


@pytest.mark.e2e
def test_cli_batch_size_auto_reaches_the_memory_check(huge_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    options = ["--cache", str(tmp_path / "c.sqlite"), "--model", f"hf:{huge_folder}", "--batch-size", "auto"]
    result = subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", "outdated", "run", "--limit", "1", "--out", str(out), *options],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    lines = said_lines(result.stderr)
    assert len(lines) == 1 and "does not fit in memory" in lines[0], result.stderr
    assert not out.exists()


# --- real loads (SmolLM2) -------------------------------------------------------------------------


@pytest.mark.slow
def test_device_map_auto_on_cpu_records_the_map_and_keeps_outputs(smollm2_folder: Path) -> None:
    plain = load_backend(f"hf:{smollm2_folder}", BackendOptions(batch_size=4))
    mapped = load_backend(f"hf:{smollm2_folder}", BackendOptions(batch_size=4, device_map="auto"))
    assert mapped.info.extra["device_map"].startswith("auto") and "cpu" in mapped.info.extra["device_map"]
    assert mapped.info.device == "cpu" and mapped.info.dtype == "float32"
    assert [g.text for g in mapped.generate(PROMPTS, GREEDY)] == [g.text for g in plain.generate(PROMPTS, GREEDY)]
    # placement does not change what the model says, so it does not change the cache key
    rendered = plain.render(PROMPTS[0])
    assert sample_key(mapped.info, rendered, GREEDY, 0) == sample_key(plain.info, rendered, GREEDY, 0)
    assert "device_map" not in plain.info.extra


@pytest.mark.slow
def test_batch_size_auto_plans_a_recorded_size_and_keeps_outputs(smollm2_folder: Path) -> None:
    fixed = load_backend(f"hf:{smollm2_folder}", BackendOptions(batch_size=4))
    auto = load_backend(f"hf:{smollm2_folder}", BackendOptions(batch_size="auto"))
    assert auto.info.batch_size is None and auto.info.extra["batch_size"] == "auto"
    batches = auto.plan_batches([auto.render(p) for p in PROMPTS])
    chosen = auto.info.batch_size
    assert chosen is not None and 1 <= chosen <= AUTO_BATCH_CAP
    assert sorted(i for b in batches for i in b) == [0, 1, 2] and all(len(b) <= chosen for b in batches)
    assert [g.text for g in auto.generate(PROMPTS, GREEDY)] == [g.text for g in fixed.generate(PROMPTS, GREEDY)]


def _save_lora(model: torch.nn.Module, folder: Path, targets: list[str]) -> Path:
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    # init_lora_weights=False: random B as well as A, so the adapter changes the outputs at once
    peft_model = get_peft_model(model, LoraConfig(r=8, target_modules=targets, init_lora_weights=False))
    peft_model.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def smollm2_adapter(smollm2_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(smollm2_folder)
    return _save_lora(base, tmp_path_factory.mktemp("lora") / "smollm2-lora", ["q_proj", "v_proj"])


@pytest.mark.slow
def test_a_lora_adapter_changes_outputs_and_cache_keys(smollm2_folder: Path, smollm2_adapter: Path) -> None:
    base = load_backend(f"hf:{smollm2_folder}", BackendOptions(batch_size=4))
    adapted = load_backend(f"hf:{smollm2_folder}+{smollm2_adapter}", BackendOptions(batch_size=4))
    assert [g.text for g in adapted.generate(PROMPTS, GREEDY)] != [g.text for g in base.generate(PROMPTS, GREEDY)]
    assert adapted.info.model_id == f"{smollm2_folder}+{smollm2_adapter}"
    assert "+sha256:" in adapted.info.revision
    assert adapted.info.extra["adapter"].startswith(f"{smollm2_adapter}@sha256:")
    rendered = base.render(PROMPTS[0])
    assert sample_key(adapted.info, rendered, GREEDY, 0) != sample_key(base.info, rendered, GREEDY, 0)


@pytest.mark.slow
def test_an_adapter_for_another_base_is_refused_by_name(smollm2_folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM, GPT2Config

    gpt2 = AutoModelForCausalLM.from_config(GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=100))
    gpt2.save_pretrained(tmp_path / "tiny-gpt2")
    gpt2 = AutoModelForCausalLM.from_pretrained(tmp_path / "tiny-gpt2")
    adapter = _save_lora(gpt2, tmp_path / "gpt2-lora", ["c_attn"])
    with pytest.raises(ConfigError, match=r"was made for base model .*tiny-gpt2") as caught:
        load_backend(f"hf:{smollm2_folder}+{adapter}")
    _one_line(caught)


@pytest.mark.slow
def test_an_adapter_whose_shapes_do_not_fit_is_refused_on_load(smollm2_folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from transformers import AutoModelForCausalLM, LlamaConfig

    narrow = LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=30, num_attention_heads=4, num_key_value_heads=2
    )
    adapter = _save_lora(AutoModelForCausalLM.from_config(narrow), tmp_path / "narrow-lora", ["q_proj", "v_proj"])
    config_file = adapter / "adapter_config.json"
    config = json.loads(config_file.read_text())
    config["base_model_name_or_path"] = str(smollm2_folder)  # claims the right base; the shapes tell otherwise
    config_file.write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="does not match its base model: size mismatch") as caught:
        load_backend(f"hf:{smollm2_folder}+{adapter}")
    _one_line(caught)
