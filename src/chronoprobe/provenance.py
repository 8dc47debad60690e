"""What produced a result: recorded in every result file."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from chronoprobe import __version__, threads
from chronoprobe.models.base import BackendInfo, Producer
from chronoprobe.models.registry import strip_url_credentials

if TYPE_CHECKING:
    from chronoprobe.cache import AnswerTally, CachedModel

_PACKAGES = ("torch", "transformers", "numpy", "pydantic", "httpx", "tokenizers", "pyoxigraph", "openai", "vllm")


def package_versions() -> dict[str, str]:
    versions = {"chronoprobe": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


class CpuThreads(BaseModel):
    """The CPU threads behind a run's local model calls (see chronoprobe.threads)."""

    policy: str
    """``$CHRONOPROBE_CPU_THREADS``: ``auto`` (every usable core), ``adaptive`` (the cores others leave free), ``torch`` or a fixed count."""
    cores: int
    """The cores this process may run on."""
    torch: list[int] = Field(default_factory=list)
    """The intra-op thread counts torch ran local models with during the run; empty when none ran on the CPU."""


def cpu_threads(started: float | None = None) -> CpuThreads:
    return CpuThreads(policy=threads.policy_label(), cores=threads.usable_cores(), torch=threads.counts_since(started))


class AnswerOrigin(BaseModel):
    """Answers one producer wrote into the call cache, and when (UTC, to the second)."""

    answers: int
    producer: Producer | None = None
    """None: written by a release that did not record what produced its answers."""
    written_first: str
    written_last: str


class Answers(BaseModel):
    """Where one model's answers in a run came from: computed now or served by the call cache, and by what."""

    answers: int
    from_cache: int
    origins: list[AnswerOrigin] = Field(default_factory=list)


def _utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def answers_record(tally: AnswerTally) -> Answers:
    origins = [
        AnswerOrigin(
            answers=source.answers,
            producer=source.producer,
            written_first=_utc(source.first_written),
            written_last=_utc(source.last_written),
        )
        for source in tally.sources
    ]
    return Answers(answers=tally.answers, from_cache=tally.from_cache, origins=origins)


class Provenance(BaseModel):
    """Everything needed to reproduce (or distrust) a result file."""

    created: str = Field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    command: str = Field(default_factory=lambda: strip_url_credentials(" ".join(sys.argv)))
    packages: dict[str, str] = Field(default_factory=package_versions)
    models: list[BackendInfo] = Field(default_factory=list)
    decoding: dict[str, Any] = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=list)
    snapshot: dict[str, Any] | None = None
    judge: str | None = None
    """The equivalence judge / NLI model used, where one was."""
    threads: CpuThreads | None = None
    """None in files written before 0.2.0; the threads of this process, which may have computed no answer."""
    answers: dict[str, Answers] = Field(default_factory=dict)
    """Per model (its label): what produced the run's answers, those the call cache served included; empty in
    files written before it was recorded."""
    extra: dict[str, Any] = Field(default_factory=dict)


def build_provenance(
    models: Sequence[CachedModel],
    *,
    decoding: dict[str, Any] | None = None,
    seeds: Sequence[int] = (),
    snapshot: dict[str, Any] | None = None,
    judge: str | None = None,
    extra: dict[str, Any] | None = None,
    started: float | None = None,
    call_cache: Path | None = None,
) -> Provenance:
    """The one place a run's provenance is assembled.

    ``started`` (a ``time.perf_counter()`` value) and ``call_cache`` add the run's duration, the new
    model calls per model and the cache file to ``extra``, as every lens records them. The CPU threads
    are those since ``started`` (or since the process began).
    """
    recorded = dict(extra or {})
    if started is not None:
        recorded["model_calls_made"] = {m.info.label: m.calls_made for m in models}
        recorded["seconds"] = round(time.perf_counter() - started, 2)
    if call_cache is not None:
        recorded["call_cache"] = str(call_cache)
    return Provenance(
        models=[m.info for m in models],
        decoding=dict(decoding or {}),
        seeds=list(seeds),
        snapshot=snapshot,
        judge=judge,
        threads=cpu_threads(started),
        answers={m.info.label: answers_record(m.tally) for m in models if m.tally.answers},
        extra=recorded,
    )
