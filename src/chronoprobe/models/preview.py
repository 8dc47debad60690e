"""The load key: what decides how a local backend comes out, found without loading it (milliseconds).

Two loads with one load key give the same backend description and the same renderings, so
:mod:`chronoprobe.models.lazy` can remember them under it. The key covers the spec, every backend
option, the model files (a GGUF's SHA-256, remembered per path, size and mtime; a folder's file
names, sizes and mtimes), the library that renders prompts (its version) and the device the
weights would go to with the dtype ``auto`` means there. A spec whose files cannot be pinned down
this cheaply (``vllm:``, a hub id the hub may have moved on, an adapter, remote code) gets no key
and loads at once, as before.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

from chronoprobe.errors import ChronoprobeError
from chronoprobe.models.registry import BackendOptions, ModelSpec, parse_model_spec

KEY_FORMAT = 1
_COMMIT = re.compile(r"[0-9a-f]{40}")


def load_key(raw: str, options: BackendOptions) -> str | None:
    """The load key of ``raw`` under ``options``, or None when the backend should just load."""
    spec = parse_model_spec(raw)
    try:
        files = _model_files(spec, options)
    except (ChronoprobeError, OSError, ValueError):
        return None  # the load itself gives the one-line error
    if files is None:
        return None
    from chronoprobe import threads
    from chronoprobe.models.placement import dtype_name, resolve_device

    threads.policy()  # a bad $CHRONOPROBE_CPU_THREADS fails here, as it would when the model loads
    device = resolve_device(options.device)
    blob = {
        "format": KEY_FORMAT,
        "spec": spec.model_dump(mode="json"),
        "options": options.model_dump(mode="json"),
        "files": files,
        "device": device,
        "dtype": dtype_name(options.dtype, device),
        "renderer": _version("llama-cpp-python" if spec.kind == "llamacpp" else "transformers"),
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode("utf-8")).hexdigest()


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _model_files(spec: ModelSpec, options: BackendOptions) -> Any:
    """What identifies the files the backend would read; None when that cannot be known cheaply."""
    if spec.kind in {"smollm2", "gemma3-270m", "gguf", "llamacpp"}:
        return {"gguf_sha256": _gguf_digest(spec)}
    if spec.kind != "hf" or spec.adapter or options.trust_remote_code or options.device_map or options.quantize:
        return None
    folder = Path(spec.target).expanduser()
    if folder.is_dir():
        return {"folder": str(folder.resolve()), "listing": _listing(folder)}
    return _hub_snapshot(spec)


def _gguf_digest(spec: ModelSpec) -> str:
    from chronoprobe.models import embedded

    target = spec.target if spec.kind == "llamacpp" else spec.kind
    if target in {"smollm2", "default"}:
        path = embedded.smollm2_gguf()
    elif target == "gemma3-270m":
        path = embedded.gemma3_gguf()
    else:
        path = Path(spec.target).expanduser()
    if not path.is_file():
        raise OSError(f"no file {path}")
    return embedded.gguf_digest(path)


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    """Name, size and mtime of every file in the folder and its subfolders (a changed file changes the key)."""
    return sorted(
        (str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    )


def _hub_snapshot(spec: ModelSpec) -> Any:
    """A hub id pinned to a commit the local hub cache holds: offline, or a revision that is a commit hash.

    Online, ``main`` may have moved on, and transformers would fetch the new commit: that load decides.
    """
    from chronoprobe.models.hub import hub_offline

    if not (hub_offline() or _COMMIT.fullmatch(spec.revision)):
        return None
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(spec.target, "config.json", revision=spec.revision)
    if not isinstance(config, str):
        return None
    snapshot = Path(config).parent
    return {"hub": spec.target, "commit": snapshot.name, "listing": _listing(snapshot)}
