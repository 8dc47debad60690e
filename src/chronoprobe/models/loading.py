"""How the hf backend loads a model: placement, dtype, 8-/4-bit weights, PEFT adapters, memory checks.

Everything that can refuse a model (a missing optional package, an adapter made for
another base, weights larger than the free memory) runs before any weights are read,
so the user gets one line within seconds instead of a traceback minutes later.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import ConfigError
from chronoprobe.models import placement
from chronoprobe.models.base import Sampler
from chronoprobe.models.hub import hub_offline, hub_reachable
from chronoprobe.models.placement import DeviceMap, DType, Quantize
from chronoprobe.models.placement import available_ram as available_ram
from chronoprobe.models.placement import free_memory as free_memory
from chronoprobe.models.placement import gib as _gib


class HFConfig(BaseModel):
    """What the hf backend loads and how (``chronoprobe.models.hf.HFBackend``)."""

    model_config = ConfigDict(frozen=True)

    model: str
    """Hub id or local folder."""
    revision: str = "main"
    gguf_file: str | None = None
    dtype: DType = "auto"
    device: str = "auto"
    device_map: DeviceMap | None = None
    """``auto``: accelerate spreads the weights over the GPUs (and RAM); the backend then never calls ``.to()``."""
    quantize: Quantize | None = None
    """bitsandbytes 8-/4-bit weights (CUDA only)."""
    adapter: str | None = None
    """A PEFT adapter (local folder or hub id) applied on top of ``model``."""
    adapter_revision: str = "main"
    batch_size: int | Literal["auto"] | None = None
    """Prompts per batch; ``auto``: the largest batch that fits; None: :func:`default_batch_prompts`."""
    chat_template: bool | None = None
    """Apply the tokenizer's chat template: None means 'if the tokenizer has one'."""
    template_date: str = "as-of"
    """The day the chat template is told: ``as-of`` (the audit's, models/chat_dates.py), ``template`` or a date."""
    trust_remote_code: bool = False
    spec: str | None = None
    revision_label: str | None = None
    """Overrides the recorded revision (e.g. the GGUF file's hash for converted models)."""
    sampler: Sampler = "inverse-cdf"
    """``inverse-cdf``: one uniform number per row and step (models/sampling.py). ``multinomial``: the
    decode loop of releases before 0.2.0 for sampled calls (``torch.multinomial``, every row decoding to
    the batch's end, one padded prefill), which reproduces their samples exactly."""


QUANT_INSTALL = "pip install 'chronoprobe[quant]'"
PEFT_INSTALL = "pip install 'chronoprobe[peft]'"
AUTO_BATCH_CAP = 64
"""--batch-size auto never goes above this: beyond it a bigger batch gains little and risks more."""
PROBE_NEW_TOKENS = 8
"""Decode steps of each CUDA probe batch: enough to allocate the KV cache's growth pattern."""

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


# --- device and dtype ---------------------------------------------------------------------------


resolve_device = placement.resolve_device


def check_device(device: str, where: str) -> None:
    """Refuse a device this machine does not have, before anything loads (torch would fail mid-load)."""
    try:
        target = torch.device(placement.device_name(device))
    except (RuntimeError, ValueError):
        raise ConfigError(where, f"--device {device} is not a device name (auto, cpu, cuda, cuda:1, mps)") from None
    if target.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ConfigError(
                where, f"--device {device}, but this machine has no CUDA GPU that torch {torch.__version__} can use"
            )
        if target.index is not None and target.index >= count:
            raise ConfigError(
                where, f"--device {device}, but there are only {count} CUDA GPU(s) (cuda:0 to cuda:{count - 1})"
            )


def auto_dtype(device_kind: str, compute_capability: tuple[int, int] | None = None) -> torch.dtype:
    """bfloat16 on GPUs with native bf16 (compute capability 8.0, Ampere, or newer), float16 on other GPUs, float32 on CPU."""
    if device_kind == "cuda":
        return torch.bfloat16 if compute_capability is not None and compute_capability[0] >= 8 else torch.float16
    if device_kind == "mps":
        return torch.float16
    return torch.float32


def resolve_dtype(dtype: DType, device: str) -> torch.dtype:
    if dtype != "auto":
        return _DTYPES[dtype]
    target = torch.device(device)
    capability = None
    if target.type == "cuda" and torch.cuda.is_available():
        capability = torch.cuda.get_device_capability(target.index if target.index is not None else 0)
    return auto_dtype(target.type, capability)


def dtype_label(torch_dtype: torch.dtype, quantize: Quantize | None) -> str:
    """What ``BackendInfo.dtype`` records; quantised weights get a suffix, so they never share cache keys."""
    return placement.dtype_label(str(torch_dtype).removeprefix("torch."), quantize)


def device_map_label(model: Any) -> str:
    """``auto (cuda:0: 30 modules, cpu: 2 modules)``: where accelerate put the model.

    Without a GPU, transformers keeps the whole model on the CPU and sets no ``hf_device_map``.
    """
    hf_device_map: dict[str, Any] | None = getattr(model, "hf_device_map", None)
    if hf_device_map:
        counts = Counter(f"cuda:{d}" if isinstance(d, int) else str(d) for d in hf_device_map.values())
        return "auto (" + ", ".join(f"{d}: {k} module{'s' if k > 1 else ''}" for d, k in counts.items()) + ")"
    devices = sorted({str(p.device) for p in model.parameters()})
    return f"auto ({', '.join(devices)}: whole model)"


def loaded_parameters(model: Any) -> int:
    """Parameters of a loaded model, shared ones once; 4-bit weights count as what they unpack to."""
    counter = getattr(model, "num_parameters", None)
    if callable(counter):
        return int(counter())
    return int(sum(p.numel() for p in model.parameters()))


def execution_device(model: Any) -> str:
    """Where a dispatched model takes its inputs: the device of its input embeddings."""
    return str(model.get_input_embeddings().weight.device)


# --- optional packages --------------------------------------------------------------------------


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_quantisation(quantize: Quantize | None, device: str, where: str) -> None:
    """bitsandbytes is importable and a CUDA device will hold the weights; else one line, before any load."""
    if quantize is None:
        return
    if not installed("bitsandbytes"):
        raise ConfigError(where, f"--quantize {quantize} needs bitsandbytes, which is not installed: {QUANT_INSTALL}")
    if not torch.cuda.is_available() or torch.device(device).type != "cuda":
        on = "this machine has no CUDA GPU" if not torch.cuda.is_available() else f"--device is {device}"
        raise ConfigError(
            where, f"--quantize {quantize} needs a CUDA GPU (bitsandbytes 8-/4-bit weights), but {on}; drop --quantize"
        )


def quantisation_config(quantize: Quantize, compute_dtype: torch.dtype) -> Any:
    from transformers import BitsAndBytesConfig  # deferred: transformers

    if quantize == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=compute_dtype)


# --- memory -------------------------------------------------------------------------------------


def parameter_count(model: str, *, revision: str, trust_remote_code: bool) -> int | None:
    """Parameters of the model a config describes, counted on the meta device (no memory, no weights read).

    None when the config cannot be built that way; the load itself then reports what is wrong.
    """
    from transformers import AutoConfig, AutoModelForCausalLM  # deferred: transformers

    try:
        config = AutoConfig.from_pretrained(model, revision=revision, trust_remote_code=trust_remote_code)
        with torch.device("meta"):
            skeleton = AutoModelForCausalLM.from_config(config, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, KeyError, TypeError, ImportError, RuntimeError, AttributeError):
        return None
    return int(sum(p.numel() for p in skeleton.parameters()))


def weight_bytes(parameters: int, torch_dtype: torch.dtype, quantize: Quantize | None) -> int:
    return placement.weight_bytes(parameters, str(torch_dtype).removeprefix("torch."), quantize)


def check_fits(
    where: str,
    parameters: int | None,
    torch_dtype: torch.dtype,
    quantize: Quantize | None,
    free: tuple[int, str] | None,
) -> None:
    """One-line refusal when the weights alone need more memory than is free where they go."""
    if parameters is None or free is None:
        return
    need = weight_bytes(parameters, torch_dtype, quantize)
    if need <= free[0]:
        return
    raise ConfigError(
        where,
        f"does not fit in memory: {parameters / 1e9:.2f}B parameters in {dtype_label(torch_dtype, quantize)} need "
        f"about {_gib(need)} for the weights, but only {_gib(free[0])} is {free[1]} "
        "(try a smaller --dtype, --quantize 4bit on a GPU, --device-map auto, or a smaller model)",
    )


# --- PEFT adapters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    """A PEFT adapter as found before loading: where it is, its config, and a revision for cache keys."""

    source: str
    """Local folder or hub id, as given."""
    revision: str
    """The requested revision (hub adapters)."""
    local: bool
    config: dict[str, Any] = field(default_factory=dict)
    resolved_revision: str = ""
    """``sha256:<hash of the adapter files>`` for folders, the commit for hub adapters."""


def _looks_local(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or Path(name).expanduser().is_dir()


def _folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name.startswith("adapter_"):  # the config and the weights, not a README
            digest.update(path.name.encode())
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def require_peft(where: str) -> None:
    if not installed("peft"):
        raise ConfigError(where, f"PEFT adapters need peft, which is not installed: {PEFT_INSTALL}")


def find_adapter(source: str, revision: str, where: str) -> Adapter:
    """Read the adapter's config from its folder or the hub; one-line errors for what is not an adapter."""
    if _looks_local(source):
        folder = Path(source).expanduser()
        if not folder.is_dir():
            raise ConfigError(where, f"no adapter folder at {source}")
        config_file = folder / "adapter_config.json"
        if not config_file.is_file():
            raise ConfigError(where, f"{source} holds no adapter_config.json, so it is not a PEFT adapter")
        resolved = f"sha256:{_folder_digest(folder)[:16]}"
    else:
        config_file, resolved = _hub_adapter_config(source, revision, where)
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(where, f"cannot read the adapter's adapter_config.json ({exc})") from None
    if not isinstance(config, dict):
        raise ConfigError(where, "the adapter's adapter_config.json is not a JSON object")
    return Adapter(source, revision, _looks_local(source), config, resolved)


def _hub_adapter_config(source: str, revision: str, where: str) -> tuple[Path, str]:
    from huggingface_hub import hf_hub_download, try_to_load_from_cache  # deferred: huggingface_hub

    try:
        cached = try_to_load_from_cache(source, "adapter_config.json", revision=revision)
    except ValueError as exc:  # not a valid repo id
        raise ConfigError(where, f"adapter {source!r} is not a local folder or a valid hub id ({exc})") from None
    if not isinstance(cached, str):
        if hub_offline() or not hub_reachable():
            raise ConfigError(
                where, f"adapter {source} is not in the local hub cache and the hub cannot be reached or is offline"
            )
        try:
            cached = hf_hub_download(source, "adapter_config.json", revision=revision)
        except (OSError, ValueError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(where, f"adapter {source}: {first}") from None
    path = Path(cached)
    # the hub cache keeps files under snapshots/<commit>/
    commit = path.parent.name if path.parent.parent.name == "snapshots" else revision
    return path, commit


def _model_names(name: str) -> set[str]:
    """Spellings under which one model can appear: a path, its folder name, a hub id, its last part."""
    name = name.strip().rstrip("/")
    names = {name.lower(), name.rsplit("/", 1)[-1].lower()}
    if _looks_local(name):
        path = Path(name).expanduser().resolve()
        names |= {str(path).lower(), path.name.lower()}
        for part in path.parts:  # the hub cache's models--org--name/snapshots/<commit> folders
            if part.startswith("models--"):
                repo = part.removeprefix("models--").replace("--", "/")
                names |= {repo.lower(), repo.rsplit("/", 1)[-1].lower()}
    return names


def check_adapter_base(adapter: Adapter, base: str, where: str) -> None:
    """The adapter's ``base_model_name_or_path`` must name the base it is put on."""
    named = adapter.config.get("base_model_name_or_path")
    if not isinstance(named, str) or not named:
        return  # nothing recorded: the load's shape check still applies
    if _model_names(named) & _model_names(base):
        return
    raise ConfigError(
        where, f"adapter {adapter.source} was made for base model {named}, not {base}; use hf:{named}+{adapter.source}"
    )


def _mismatch_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    line = next((ln for ln in lines if "mismatch" in ln), lines[0] if lines else type(exc).__name__)
    return line if len(line) <= 240 else line[:237] + "..."


def attach_adapter(model: Any, adapter: Adapter, where: str, *, merge: bool) -> Any:
    """The model with the adapter applied (merged into the weights unless they are quantised)."""
    from peft import PeftModel  # deferred: peft

    extra: dict[str, Any] = {} if adapter.local else {"revision": adapter.revision}
    try:
        wrapped = PeftModel.from_pretrained(model, str(Path(adapter.source).expanduser()), is_trainable=False, **extra)
    except (RuntimeError, ValueError, KeyError) as exc:
        raise ConfigError(
            where, f"adapter {adapter.source} does not match its base model: {_mismatch_line(exc)}"
        ) from None
    return wrapped.merge_and_unload() if merge else wrapped


# --- the load -----------------------------------------------------------------------------------


@dataclass
class Loaded:
    model: Any
    tokenizer: Any
    device: str
    """Where inputs go (the embeddings' device under a device map)."""
    torch_dtype: torch.dtype
    dtype: str
    """As recorded: the dtype, plus the quantisation if any."""
    model_id: str
    adapter_revision: str | None
    extra: dict[str, str]


def load_model(config: HFConfig) -> Loaded:
    """Check everything that can be checked, then load tokenizer, weights and adapter."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # deferred: transformers

    where = f"model spec {config.spec or 'hf:' + config.model!r}"
    if config.device_map is not None and config.device != "auto":
        raise ConfigError(where, f"--device-map {config.device_map} places the model itself; leave --device at auto")
    # the device that decides the dtype and whether quantisation can run; a device map starts on the first GPU
    device = resolve_device(config.device)
    check_device(device, where)
    torch_dtype = resolve_dtype(config.dtype, device)
    check_quantisation(config.quantize, device, where)
    adapter = None
    if config.adapter:
        require_peft(where)
        adapter = find_adapter(config.adapter, config.adapter_revision, where)
        check_adapter_base(adapter, config.model, where)
    if not config.gguf_file:
        count = parameter_count(config.model, revision=config.revision, trust_remote_code=config.trust_remote_code)
        check_fits(where, count, torch_dtype, config.quantize, free_memory(device, config.device_map))

    load_kwargs: dict[str, Any] = {"revision": config.revision, "trust_remote_code": config.trust_remote_code}
    if config.gguf_file:
        load_kwargs["gguf_file"] = config.gguf_file
    tokenizer = AutoTokenizer.from_pretrained(config.model, **load_kwargs)
    model_kwargs: dict[str, Any] = {"dtype": torch_dtype}
    if config.device_map is not None:
        model_kwargs["device_map"] = config.device_map
    elif config.quantize is not None:
        model_kwargs["device_map"] = {"": device}  # bitsandbytes weights are placed while loading; .to() refuses them
    if config.quantize is not None:
        model_kwargs["quantization_config"] = quantisation_config(config.quantize, torch_dtype)
    model = AutoModelForCausalLM.from_pretrained(config.model, **model_kwargs, **load_kwargs)
    if "device_map" not in model_kwargs:
        model.to(device)  # type: ignore[arg-type]  # transformers' wrapper of Module.to is mistyped
    else:
        device = execution_device(model)
    extra: dict[str, str] = {}
    if config.device_map is not None:
        extra["device_map"] = device_map_label(model)
    if config.quantize is not None:
        extra["quantization"] = f"bitsandbytes {config.quantize}"
    model_id = config.model if not config.gguf_file else f"{config.model}/{config.gguf_file}"
    if adapter is not None:
        model = attach_adapter(model, adapter, where, merge=config.quantize is None)
        model_id = f"{model_id}+{adapter.source}"
        extra["adapter"] = f"{adapter.source}@{adapter.resolved_revision}"
    extra["parameters"] = str(loaded_parameters(model))
    return Loaded(
        model=model,
        tokenizer=tokenizer,
        device=device,
        torch_dtype=torch_dtype,
        dtype=dtype_label(torch_dtype, config.quantize),
        model_id=model_id,
        adapter_revision=adapter.resolved_revision if adapter else None,
        extra=extra,
    )


def forward_of(model: Any) -> Callable[..., Any]:
    """The forward whose signature tells which arguments the model takes (a PEFT wrapper hides it)."""
    core = model.get_base_model() if hasattr(model, "get_base_model") else model
    forward: Callable[..., Any] = core.forward
    return forward


# --- --batch-size auto ---------------------------------------------------------------------------


def _first(config: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def row_bytes(config: Any, *, sequence: int, dtype_bytes: int) -> int:
    """Estimated memory of one batch row holding ``sequence`` tokens: its KV cache plus working activations."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    hidden = _first(text, "hidden_size", "n_embd", "d_model") or 4096
    layers = _first(text, "num_hidden_layers", "n_layer", "num_layers") or 32
    heads = _first(text, "num_attention_heads", "n_head") or 32
    kv_heads = _first(text, "num_key_value_heads") or heads
    head_dim = _first(text, "head_dim") or hidden // heads
    intermediate = _first(text, "intermediate_size", "n_inner") or 4 * hidden
    vocab = _first(text, "vocab_size") or 32000
    kv_cache = 2 * layers * kv_heads * head_dim * sequence * dtype_bytes
    activations = sequence * (4 * hidden + 2 * intermediate) * dtype_bytes  # one layer's, during the prompt pass
    scores = heads * sequence * sequence * 4  # attention scores, when the kernel materialises them
    logits = 4 * vocab * 4  # float32 last logits, their softmax, the running mean, scratch
    return kv_cache + activations + scores + logits


def rows_that_fit(config: Any, *, sequence: int, dtype_bytes: int, available: int, cap: int = AUTO_BATCH_CAP) -> int:
    """The largest power of two of rows (at most ``cap``) whose estimate fits in half of ``available``.

    Half, since the weights' working copies, the tokenizer and other processes need the rest;
    a power of two, so that small swings of free memory do not change the batches run by run.
    """
    per_row = max(1, row_bytes(config, sequence=sequence, dtype_bytes=dtype_bytes))
    fit = max(1, min(cap, (available // 2) // per_row))
    return 1 << (fit.bit_length() - 1)


def largest_fitting(trial: Callable[[int], None], start: int = AUTO_BATCH_CAP) -> int:
    """The first of start, start/2, ..., 1 for which ``trial(size)`` runs without a CUDA out-of-memory error."""
    size = max(1, start)
    while True:
        try:
            trial(size)
        except torch.cuda.OutOfMemoryError:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            if size == 1:
                raise ConfigError(
                    "--batch-size auto", "not even one prompt fits next to the weights; use a smaller model or dtype"
                ) from None
            size //= 2
            continue
        return size


def chunks(items: Sequence[int], size: int) -> list[list[int]]:
    return [list(items[i : i + size]) for i in range(0, len(items), max(1, size))]
