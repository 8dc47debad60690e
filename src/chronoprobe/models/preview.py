"""The load key: what decides how a local backend comes out, found without loading it (milliseconds).

Two loads with one load key give the same backend description and the same renderings, so
:mod:`chronoprobe.models.lazy` can remember them under it. The key covers the spec, the backend's
own options (its registration's options model), the model files (a GGUF's SHA-256, remembered per path, size and mtime; a folder's file
names, sizes and mtimes), the library that renders prompts (its version) and the device the
weights would go to with the dtype ``auto`` means there. The day a chat template is told is one of
the options; under ``--template-date template`` (the template's own, maybe the machine's clock) the
key holds the machine's day too, so a rendering is never served on another day. A backend names its files through its
registration (``BackendKind.files``); one whose files cannot be pinned down this cheaply (``vllm:``,
``openai:``, a hub id the hub may have moved on, an adapter, remote code) gets no key and loads at once.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

from chronoprobe import threads
from chronoprobe.errors import ChronoprobeError
from chronoprobe.models import chat_dates, embedded
from chronoprobe.models.hub import hub_offline
from chronoprobe.models.placement import dtype_name, resolve_device
from chronoprobe.models.registry import BackendOptions, ModelRequest, ModelSpec, backend_kind, parse_model

KEY_FORMAT = 2
"""2: the options in the key are the backend's own (its registration's options model), no longer every backend's."""
_COMMIT = re.compile(r"[0-9a-f]{40}")


def load_key(model: str | ModelRequest, options: BackendOptions) -> str | None:
    """The load key of ``model`` under ``options``, or None when the backend should just load."""
    return _key(model, options, dated=True)


def undated_key(model: str | ModelRequest, options: BackendOptions) -> str | None:
    """:func:`load_key` without the day the chat template is told: a backend whose template takes no date is
    remembered under it too, so another ``--template-date`` finds it without loading (:mod:`~.lazy`)."""
    return _key(model, options, dated=False)


def _key(model: str | ModelRequest, options: BackendOptions, *, dated: bool) -> str | None:
    spec = parse_model(model).spec  # a request: returned as it is, parsed already
    kind = backend_kind(spec.kind)
    if kind.files is None:
        return None
    try:
        own = options.for_backend(kind.options)
        files = kind.files(spec, own)
    except (ChronoprobeError, OSError, ValueError):
        return None  # the load itself gives the one-line error
    if files is None:
        return None

    threads.policy()  # a bad $CHRONOPROBE_CPU_THREADS fails here, as it would when the model loads
    device = resolve_device(getattr(own, "device", "cpu"))
    blob = {
        "format": KEY_FORMAT,
        "spec": spec.model_dump(mode="json"),
        "options": _told(own.model_dump(mode="json"), dated=dated),
        "files": files,
        "device": device,
        "dtype": dtype_name(getattr(own, "dtype", "auto"), device),
        "renderer": _version(kind.renderer),
    }
    if dated and getattr(own, "template_date", None) == chat_dates.TEMPLATE:  # its renderings may change daily
        blob["today"] = chat_dates.machine_now().date().isoformat()
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode("utf-8")).hexdigest()


def _told(options: dict[str, Any], *, dated: bool) -> dict[str, Any]:
    """The options with ``template_date`` as the day it tells (``as-of`` outside a lens run is a fixed day), so
    two spellings of one day share a key; without it when not ``dated``."""
    if "template_date" in options:
        if dated:
            options["template_date"] = chat_dates.resolve(options["template_date"])
        else:
            del options["template_date"]
    return options


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def gguf_files(spec: ModelSpec) -> dict[str, str]:
    """A GGUF spec's file (``gguf:<file>``, or the embedded ``smollm2``/``gemma3-270m``) by its SHA-256."""

    if spec.kind == "smollm2":
        path = embedded.smollm2_gguf()
    elif spec.kind == "gemma3-270m":
        path = embedded.gemma3_gguf()
    else:
        path = Path(spec.target).expanduser()
    if not path.is_file():
        raise OSError(f"no file {path}")
    return {"gguf_sha256": embedded.gguf_digest(path)}


def hf_files(spec: ModelSpec) -> Any:
    """A transformers model's folder listing, or its hub snapshot; None when neither is pinned down."""
    folder = Path(spec.target).expanduser()
    if folder.is_dir():
        return {"folder": str(folder.resolve()), "listing": _listing(folder)}
    return _hub_snapshot(spec)


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    """Name, size and mtime of every file in the folder and its subfolders (a changed file changes the key)."""
    return sorted(
        (str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()
    )


def _hub_snapshot(spec: ModelSpec) -> Any:
    """A hub id pinned to a commit the local hub cache holds: offline, or a revision that is a commit hash.

    Online, ``main`` may have moved on, and transformers would fetch the new commit: that load decides.
    """

    if not (hub_offline() or _COMMIT.fullmatch(spec.revision)):
        return None
    from huggingface_hub import try_to_load_from_cache  # deferred: huggingface_hub

    config = try_to_load_from_cache(spec.target, "config.json", revision=spec.revision)
    if not isinstance(config, str):
        return None
    snapshot = Path(config).parent
    return {"hub": spec.target, "commit": snapshot.name, "listing": _listing(snapshot)}
