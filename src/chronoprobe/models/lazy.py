"""A local backend that loads on the first call the cache cannot answer.

Loading a local model (torch, transformers, the weights) takes seconds to minutes; a rerun whose
answers are all in the call cache needs none of it. What the cache needs before that is what the
backend would be: its description (``BackendInfo``, which keys the cache, and its capabilities)
and how it renders each prompt. Both are remembered in the call cache from the last real load
with the same *load key* (:func:`chronoprobe.models.preview.load_key`: the spec, the options, the
model files' hashes, the device): the description as the backend gave it right after loading,
each rendering as the real tokenizer produced it. So nothing is re-derived by other code that
could disagree with the backend: a rerun sees exactly what a loaded backend would say, and
anything not remembered (a new prompt, a changed file) loads the backend.

A backend whose chat template takes no date renders every prompt the same whatever day it is told, so it
is also remembered under its *undated* key (the load key without ``--template-date``), and its renderings
are kept under that one: another ``--template-date`` finds the description (told the new day) and the
renderings without loading the model. A template that takes a date keeps one load key per day.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import ValidationError

from chronoprobe.models import chat_dates, preview
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
)
from chronoprobe.models.registry import BackendOptions, ModelRequest
from chronoprobe.models.registry import load_backend as default_load


class BackendMemory(Protocol):
    """Where descriptions and renderings are remembered (the call cache, :class:`chronoprobe.cache.CallCache`)."""

    def get_load(self, key: str) -> dict[str, Any] | None: ...

    def put_load(self, key: str, record: dict[str, Any]) -> None: ...

    def get_renders(self, keys: Sequence[str]) -> dict[str, str]: ...

    def put_renders(self, items: Sequence[tuple[str, str]]) -> None: ...


def describe(backend: Backend) -> dict[str, Any]:
    """What a freshly loaded backend says it is, as remembered for the next run."""
    return {
        "info": backend.info.model_dump(mode="json"),
        "capabilities": sorted(c.value for c in backend.capabilities),
    }


def _render_key(load_key: str, prompt: Prompt) -> str:
    blob = json.dumps({"render": load_key, "prompt": prompt.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LazyBackend(Backend):
    """A backend described by its last load, loaded (by ``loader``) only when something needs the model itself.

    ``info``, ``capabilities`` and rendering come from the remembered description and renderings;
    ``generate``, ``plan_batches`` and any other attribute load the backend first. Once loaded,
    every rendering it makes is remembered for the next run.
    """

    def __init__(
        self,
        load_key: str,
        memory: BackendMemory,
        loader: Callable[[], Backend],
        *,
        description: dict[str, Any] | None = None,
        backend: Backend | None = None,
        undated_key: str | None = None,
    ) -> None:
        self.load_key = load_key
        self._memory = memory
        self._loader = loader
        self._backend = backend
        self._description = description if backend is None else describe(backend)
        record = self._description or {}
        self._preview = BackendInfo.model_validate(record["info"]) if backend is None else backend.info
        self.capabilities = (
            frozenset(Capability(c) for c in record.get("capabilities", []))
            if backend is None
            else backend.capabilities
        )
        self._rendered: dict[str, str] = {}
        self._undated_key = undated_key
        self.render_key = undated_key if undated_key is not None and _takes_no_date(self._preview) else load_key
        """What its renderings are remembered under: the undated key where its template takes no date."""

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    def load(self) -> Backend:
        """The backend itself, loaded now if it was not; names given to the preview carry over."""
        if self._backend is None:
            backend = self._loader()
            description = describe(backend)
            if description != self._description:  # a file or the machine changed what it is: remember the new one
                remember(self._memory, self.load_key, self._undated_key, backend)
                self._description = description
            backend.info.name, backend.info.given_name = self._preview.name, self._preview.given_name
            self.capabilities = backend.capabilities
            self._backend = backend
        return self._backend

    @property
    def info(self) -> BackendInfo:
        return self._backend.info if self._backend is not None else self._preview

    def render(self, prompt: Prompt) -> str:
        return self.render_many([prompt])[0]

    def render_many(self, prompts: Sequence[Prompt]) -> list[str]:
        keys = [_render_key(self.render_key, p) for p in prompts]
        wanted = [k for k in dict.fromkeys(keys) if k not in self._rendered]
        if wanted:
            self._rendered.update(self._memory.get_renders(wanted))
        missing = {k: p for k, p in zip(keys, prompts, strict=True) if k not in self._rendered}
        if missing:
            backend = self.load()
            fresh = [(k, backend.render(p)) for k, p in missing.items()]
            self._memory.put_renders(fresh)
            self._rendered.update(fresh)
        return [self._rendered[k] for k in keys]

    def plan_batches(self, rendered_prompts: Sequence[str], params: DecodingParams | None = None) -> list[list[int]]:
        return self.load().plan_batches(rendered_prompts, params)

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        return self.load().generate(prompts, params)

    def producer(self) -> Producer:
        return self.load().producer()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __getattr__(self, name: str) -> Any:
        # Only called for what this class lacks: the loaded backend's own attributes (tokenizer, model ...).
        if name.startswith("_") or name in {"load_key", "capabilities", "render_key"}:
            raise AttributeError(name)
        return getattr(self.load(), name)


def open_backend(
    request: ModelRequest,
    options: BackendOptions,
    memory: BackendMemory,
    load: Callable[[ModelRequest, BackendOptions], Backend] | None = None,
) -> Backend:
    """The backend for ``request``: lazily when an earlier load with the same load key was remembered.

    Specs that are cheap to build (``openai:``, ``mock:``) or that cannot be keyed without loading
    (``vllm:``, a hub id that may have moved on) load at once, with ``load`` (default
    :func:`~chronoprobe.models.registry.load_backend`).
    """

    load_backend = load or default_load
    key = preview.load_key(request, options)  # through the module: what tests and stand-ins replace
    if key is None:
        return load_backend(request, options)

    def loader() -> Backend:
        return load_backend(request, options)

    undated = preview.undated_key(request, options)
    record = memory.get_load(key) or _retold(memory.get_load(undated) if undated else None, options)
    if record is not None:
        try:
            return LazyBackend(key, memory, loader, description=record, undated_key=undated)
        except (ValidationError, KeyError, TypeError, ValueError):
            pass  # remembered by another version in another shape: load and remember it again
    backend = load_backend(request, options)
    lazy = LazyBackend(key, memory, loader, backend=backend, undated_key=undated)
    remember(memory, key, undated, backend)
    return lazy


def remember(memory: BackendMemory, key: str, undated: str | None, backend: Backend) -> None:
    """Remember what ``backend`` is under its load key, and under its undated key when its template takes no date."""
    description = describe(backend)
    memory.put_load(key, description)
    if undated is not None and _takes_no_date(backend.info):
        memory.put_load(undated, description)


def _takes_no_date(info: BackendInfo) -> bool:
    """Its chat template is known to take no date (an empty list; None is unknown)."""
    return info.template_takes_date == []


def _retold(record: dict[str, Any] | None, options: BackendOptions) -> dict[str, Any] | None:
    """A description remembered under the undated key, told the day of ``options``; None unless its template is
    known to take no date (another release's shape is left to the caller to refuse)."""
    info = record.get("info") if isinstance(record, dict) else None
    if not isinstance(info, dict) or info.get("template_takes_date") != []:
        return None
    if info.get("template_date") is not None:  # a chat template applied here: it is told this run's day
        info = {**info, "template_date": chat_dates.resolve(str(options.value("template_date")))}
    return {**record, "info": info}  # type: ignore[dict-item]  # narrowed to a dict above
