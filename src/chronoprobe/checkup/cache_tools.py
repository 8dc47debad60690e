"""``chronoprobe cache``: what the call cache holds, and removing part of it, as tools.

Declared as every other command is (:mod:`chronoprobe.contract.tool`): a config whose fields are the flags and
whose docstrings are the help; ``chronoprobe.produce("cache.info", ...)`` takes the same values. The work is
:mod:`chronoprobe.cache_admin`'s: sizes per namespace read without writing, a prune in one transaction that
refuses while another process has the cache open.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from chronoprobe.cache import check_cache_file
from chronoprobe.cache_admin import NamespaceUsage, Pruned, file_bytes, prune, usage
from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.errors import ConfigError
from chronoprobe.paths import default_call_cache
from chronoprobe.records.fields import SWITCH, Command
from chronoprobe.tables import TableView

ResultT = TypeVar("ResultT")

__all__ = ["CacheInfo", "InfoTool", "InfoToolConfig", "PruneTool", "PruneToolConfig"]

_FROZEN = ConfigDict(frozen=True, use_attribute_docstrings=True)
_ONLY_THE_CACHE = (
    "dtype", "device", "batch_size", "device_map", "quantize", "chat_template", "template_date", "api_mode",
    "concurrency", "engine", "sampler",
)  # fmt: skip
"""The shared model options these commands do not offer: all but ``--cache`` (the one cache of every command)."""


class _CacheTool(Tool[ResultT]):
    """A command about the call cache: ``--cache`` is the shared model option's, read through the context."""

    model_options = True


def _megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"


def _day(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%d")


class InfoToolConfig(BaseModel):
    """``chronoprobe cache info``: it takes only ``--cache``, the call cache every command shares."""

    model_config = _FROZEN
    cli: ClassVar[Command] = Command(omit_model_options=_ONLY_THE_CACHE)


@dataclass(frozen=True)
class CacheInfo:
    """A call cache's path, size on disk and namespaces."""

    path: Path
    file_bytes: int
    namespaces: list[NamespaceUsage]


def _cache_path(given: Path | None) -> Path:
    path = given or default_call_cache()
    check_cache_file(path)
    return path


class InfoTool(_CacheTool[CacheInfo]):
    """Show the call cache in use: its path, its size, and the calls and bytes of each model and namespace."""

    name = "cache.info"
    command = "cache info"
    config_type = InfoToolConfig
    config: InfoToolConfig

    def run(self, context: ToolContext) -> CacheInfo:
        path = _cache_path(context.cache_path)
        if not path.is_file():
            return CacheInfo(path=path, file_bytes=0, namespaces=[])
        return CacheInfo(path=path, file_bytes=file_bytes(path), namespaces=usage(path))

    def answer(self, result: CacheInfo) -> Sequence[Answer]:
        rows = [
            (
                space.namespace,
                str(space.calls),
                _megabytes(space.stored_bytes),
                f"{space.stored_bytes / max(space.calls, 1) / 1e3:.1f} kB",
                f"{_day(space.oldest)} .. {_day(space.newest)}",
            )
            for space in result.namespaces
        ]
        total = sum(space.stored_bytes for space in result.namespaces)
        after = (
            f"call cache: {result.path}",
            f"on disk: {_megabytes(result.file_bytes)}; stored answers {_megabytes(total)} in "
            f"{sum(s.calls for s in result.namespaces)} calls"
            if result.file_bytes
            else "empty: nothing has been cached there yet",
        )
        columns = ("namespace", "calls", "stored", "per call", "written")
        return [TableView("Call cache", columns, rows, after=after)]


class PruneToolConfig(BaseModel):
    """``chronoprobe cache prune``: every option, as the command takes it."""

    model_config = _FROZEN
    cli: ClassVar[Command] = Command(omit_model_options=_ONLY_THE_CACHE)

    model_id: tuple[str, ...] = ()
    """Remove this model's calls: its model id as `cache info` lists it after model: (repeatable)."""
    namespace: tuple[str, ...] = ()
    """Remove this namespace's calls, as `cache info` lists it (repeatable)."""
    older_than: float | None = None
    """Remove only calls written more than this many days ago (alone: of every namespace)."""
    dry_run: Annotated[bool, SWITCH] = False
    """Say what would be removed, and remove nothing."""


class PruneTool(_CacheTool[Pruned]):
    """Remove calls from the call cache by model, namespace or age; refused while another process has it open."""

    name = "cache.prune"
    command = "cache prune"
    config_type = PruneToolConfig
    config: PruneToolConfig

    def check_inputs(self) -> None:
        config = self.config
        if not (config.model_id or config.namespace or config.older_than is not None):
            raise ConfigError(
                "cache prune",
                "say what to remove: --model-id, --namespace or --older-than (see `chronoprobe cache info`)",
            )
        if config.older_than is not None and not config.older_than >= 0:
            raise ConfigError(f"--older-than {config.older_than}", "give a number of days, 0 or more")

    def run(self, context: ToolContext) -> Pruned:
        config = self.config
        path = _cache_path(context.cache_path)
        if not path.is_file():
            raise ConfigError(f"call cache {path}", "does not exist (nothing has been cached there yet)")
        known = {space.namespace: space for space in usage(path)}
        models = {space.model for space in known.values() if space.model is not None}
        for option, given, have in (
            ("--namespace", config.namespace, set(known)),
            ("--model-id", config.model_id, models),
        ):
            for value in given:
                if value not in have:
                    listed = ", ".join(sorted(have)) or "none"
                    raise ConfigError(f"{option} {value!r}", f"not in call cache {path}; it holds: {listed}")
        return prune(
            path,
            namespaces=config.namespace,
            models=config.model_id,
            older_than_days=config.older_than,
            dry_run=config.dry_run,
        )

    def answer(self, result: Pruned) -> Sequence[Answer]:
        verb = "would remove" if self.config.dry_run else "removed"
        where = f" from {', '.join(result.namespaces)}" if result.namespaces else ""
        return [f"{verb} {result.calls} calls ({_megabytes(result.stored_bytes)}){where}"]
