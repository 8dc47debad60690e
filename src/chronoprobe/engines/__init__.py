"""Where model calls run: ``local`` (this process, the default) or ``ray[:ADDRESS]`` (a Ray cluster).

``--engine`` forms:

``local``              the driver's backend runs every batch (today's behaviour)
``ray``                start a Ray cluster on this machine for the run, and stop it after
``ray:auto``           join the cluster this machine is part of (``ray start --head`` ran here)
``ray:HOST:PORT``      join the cluster whose head listens there (e.g. ``ray:127.0.0.1:6379``)
``ray:ray://HOST:PORT`` the same through Ray Client
"""

from __future__ import annotations

import importlib.util
import re

from chronoprobe.engines.base import Engine, ModelSource
from chronoprobe.engines.local import LocalEngine
from chronoprobe.engines.ray_engine import RayEngine
from chronoprobe.errors import ConfigError

__all__ = ["Engine", "LocalEngine", "ModelSource", "parse_engine"]

_HOST_PORT = re.compile(r"(?:ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})")


def parse_engine(raw: str | Engine | None, *, where: str = "--engine") -> Engine:
    """The engine ``raw`` names; a one-line ConfigError for a bad form, a bad address or Ray missing.

    Nothing is started or contacted here (see :meth:`Engine.start`).
    """
    if raw is None:
        return LocalEngine()
    if isinstance(raw, Engine):
        return raw
    text = raw.strip()
    if text == "local":
        return LocalEngine()
    kind, sep, address = text.partition(":")
    if kind != "ray":
        raise ConfigError(f"{where} {raw!r}", "unknown engine; use local, ray, ray:auto or ray:HOST:PORT")
    if sep and address != "auto":
        match = _HOST_PORT.fullmatch(address)
        if match is None or not 0 < int(match["port"]) < 65536:
            raise ConfigError(
                f"{where} {raw!r}", "not a Ray address; use ray (a local cluster), ray:auto or ray:HOST:PORT"
            )
    if importlib.util.find_spec("ray") is None:
        raise ConfigError(f"{where} {raw!r}", "Ray is not installed: pip install 'chronoprobe[ray]'")

    return RayEngine(address or None)
