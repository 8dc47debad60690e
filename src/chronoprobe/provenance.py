"""What produced a result: recorded in every result file."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import platform
import sys
from typing import Any

from pydantic import BaseModel, Field

from chronoprobe import __version__
from chronoprobe.models.base import BackendInfo
from chronoprobe.models.registry import strip_url_credentials

_PACKAGES = ("torch", "transformers", "numpy", "pydantic", "httpx", "tokenizers", "pyoxigraph", "openai", "vllm")


def package_versions() -> dict[str, str]:
    versions = {"chronoprobe": __version__, "python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


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
    extra: dict[str, Any] = Field(default_factory=dict)
