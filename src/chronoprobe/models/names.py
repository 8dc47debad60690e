"""Short display names for models: ``--model NAME=SPEC`` or one derived from the spec.

Plots and tables need a name that fits under an axis; the full spec stays in the provenance.
``qwen=hf:Qwen/Qwen2.5-0.5B-Instruct`` names the model ``qwen``; without a name, the backend's
registration derives one from the parsed spec (:attr:`~chronoprobe.models.registry.ModelRequest.display_name`:
the last path component of the target, without revision or file extension). Nothing here parses a
spec: :func:`~chronoprobe.models.registry.parse_model` is the one parser.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import NAME_RULE as NAME_RULE  # the naming rule lives with the parser
from chronoprobe.models.registry import ModelRequest, parse_model

__all__ = ["FILE_PART_LIMIT", "NAME_RULE", "check_distinct", "file_safe", "recorded_short_name", "unique_names"]


def recorded_short_name(label: str) -> str:
    """The short name of a model a run recorded only by its label (a layout written before names were kept):
    its backend's short name when the label is a spec, else the label itself (a NAME)."""
    try:
        request: ModelRequest = parse_model(label)
    except ConfigError:
        return label
    return request.display_name


def unique_names(names: Iterable[str]) -> list[str]:
    """Make repeated display names distinct: ``x``, ``x (2)``, ..."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        result.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return result


def check_distinct(requests: Sequence[ModelRequest], option: str = "--model") -> None:
    """Refuse two models that would be shown by one name (one NAME given twice, one spec twice, two specs whose
    derived names agree): a row, a paragraph or a threshold line must say which model it is about."""
    by_name: dict[str, list[ModelRequest]] = {}
    for request in requests:
        by_name.setdefault(request.display_name, []).append(request)
    for name, given in by_name.items():
        if len(given) > 1:
            values = ", ".join(str(request) for request in given)  # str(): the spec with any key removed
            raise ConfigError(option, f"two models are named {name!r} ({values}); give each its own NAME=SPEC")


_UNSAFE = re.compile(r"[^\w.+-]+")


FILE_PART_LIMIT = 80
"""Longest name part ``file_safe`` returns: a folder name must stay well under the 255 bytes filesystems allow."""


def file_safe(name: str, limit: int = FILE_PART_LIMIT) -> str:
    """``name`` as a file or folder name part: other characters become ``_`` (``model`` if nothing is left).

    A longer result is cut to ``limit`` characters, the last nine a hash of the whole name,
    so two long names that share their start stay distinct.
    """
    safe = _UNSAFE.sub("_", name).strip("._") or "model"
    if len(safe) <= limit:
        return safe
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{safe[: limit - 9].rstrip('._+-')}-{digest}"
