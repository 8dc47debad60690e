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

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from chronoprobe import threads
from chronoprobe.models.base import BackendInfo, Producer
from chronoprobe.models.registry import strip_url_credentials
from chronoprobe.version import __version__

if TYPE_CHECKING:
    from chronoprobe.cache import AnswerTally, CachedModel

__all__ = [
    "RUN_FIELDS",
    "AnswerOrigin",
    "Answers",
    "CpuThreads",
    "Provenance",
    "answers_record",
    "build_provenance",
    "cpu_threads",
    "package_versions",
]

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
    """What the run asked the model for (samples: a prompt asked for 10 counts 10)."""
    from_cache: int
    computed: int | None = None
    """Computed by the model in this run: ``answers - from_cache``; None in files written before it was recorded."""
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
    return Answers(answers=tally.answers, from_cache=tally.from_cache, computed=tally.computed, origins=origins)


RUN_FIELDS = ("model_calls_made", "seconds", "call_cache")
"""What the runner records about the run itself; on disk they sit in ``extra``, after the lens's own keys."""


class Provenance(BaseModel):
    """Everything needed to reproduce (or distrust) a result file: what :func:`build_provenance` writes and
    what :func:`chronoprobe.records.runlog.load_run` reads back, the same type both ways.

    Keys it does not know (written by another release or tool) are kept and written back as they were.
    """

    model_config = ConfigDict(extra="allow")

    created: str = ""
    command: str = ""
    packages: dict[str, str] = Field(default_factory=dict)
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
    """What the lens adds (``recipe().extra``: facts, methodology, harness ...)."""
    model_calls_made: dict[str, int] | None = None
    """Per model (its label): the prompts this run sent to the backend (the cache answered the rest)."""
    seconds: float | None = None
    """How long the run took."""
    call_cache: str | None = None
    """The call cache file."""
    engine: str | None = None
    """Where the calls the cache missed ran, when not this process (``ray`` ...); absent for the local engine."""

    @model_validator(mode="before")
    @classmethod
    def _from_extra(cls, data: Any) -> Any:
        """The runner's fields come out of ``extra``, where the file keeps them."""
        if not isinstance(data, dict) or not isinstance(data.get("extra"), dict):
            return data
        if not any(key in data["extra"] for key in RUN_FIELDS):
            return data
        extra = dict(data["extra"])
        lifted = {key: extra.pop(key) for key in RUN_FIELDS if key in extra}
        return {**data, "extra": extra, **lifted}

    @model_serializer(mode="wrap")
    def _into_extra(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Written as files always had it: the runner's fields in ``extra``, after the lens's own keys."""
        data: dict[str, Any] = handler(self)
        run = {key: data.pop(key) for key in RUN_FIELDS if key in data}
        run = {key: value for key, value in run.items() if value is not None}
        if run and "extra" in data:
            data["extra"] = {**data["extra"], **run}
        if data.get("engine", "") is None:  # the local engine: no key, as before the engine was recorded
            del data["engine"]
        return data

    def recorded(self) -> dict[str, Any]:
        """As the run log records it (and a reader finds it): the fields this one was given, in JSON form."""
        return self.model_dump(mode="json", exclude_unset=True)

    def model(self, label: str) -> BackendInfo | None:
        """The recorded model a run's rows and summary call ``label`` (its given name, else its spec)."""
        return next((info for info in self.models if info.label == label), None)


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
    engine: str | None = None,
    described: Sequence[BackendInfo] = (),
) -> Provenance:
    """The one place a run's provenance is assembled: as it is written, the same object a reader gets back.

    ``started`` (a ``time.perf_counter()`` value) and ``call_cache`` add the run's duration, the new
    model calls per model and the cache file, as every lens records them. The CPU threads are those
    since ``started`` (or since the process began). ``engine``: where the missed calls ran, when not
    this process. ``described``: models that answered elsewhere (a harness's), recorded after ``models``.
    """
    chosen: dict[str, Any] = {
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": strip_url_credentials(" ".join(sys.argv)),
        "packages": package_versions(),
        "models": [*(m.info for m in models), *described],
        "decoding": dict(decoding or {}),
        "seeds": list(seeds),
        "snapshot": snapshot,
        "judge": judge,
        "threads": cpu_threads(started),
        "answers": {m.info.label: answers_record(m.tally) for m in models if m.tally.answers},
        "extra": dict(extra or {}),
    }
    if started is not None:
        chosen["model_calls_made"] = {m.info.label: m.calls_made for m in models}
        chosen["seconds"] = round(time.perf_counter() - started, 2)
    if call_cache is not None:
        chosen["call_cache"] = str(call_cache)
    if engine is not None:
        chosen["engine"] = engine
    # through its JSON form: every field the file holds is set, so recorded() writes all of it, as a reader sees it
    return Provenance.model_validate(Provenance(**chosen).model_dump(mode="json"))
