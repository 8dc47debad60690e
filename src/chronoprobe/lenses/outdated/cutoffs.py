"""The outdated lens's date options: published cutoffs (``--cutoff NAME=YYYY-MM``) and ``--deployed-at``.

Kept apart from :mod:`chronoprobe.lenses.outdated.knowledge_date` so that the audit's config can read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from chronoprobe.errors import ConfigError
from chronoprobe.metrics.knowledge_date import parse_month
from chronoprobe.models.registry import parse_model

if TYPE_CHECKING:
    from chronoprobe.models.registry import ModelRequest

__all__ = ["cutoff_names", "parse_cutoffs", "parse_deployed_at"]

_CUTOFF = re.compile(r"^(?:(?P<name>.+?)=)?(?P<date>\d{4}(?:-\d{2}){0,2})$")


def parse_cutoffs(values: Iterable[str], models: Sequence[Sequence[str]], option: str = "--cutoff") -> dict[str, str]:
    """``NAME=YYYY-MM`` (or a bare date when there is one model) -> {model name: date}.

    ``models``: per model, the names the user may call it by (display name, spec). A model given two
    cutoffs (under one name or two) is refused: which one is meant cannot be guessed.
    """
    known = list(dict.fromkeys(name for names in models for name in names))
    cutoffs: dict[str, str] = {}
    given: dict[int, str] = {}
    """Model (its place in ``models``) -> the value that gave it a cutoff."""
    for value in values:
        match = _CUTOFF.match(value.strip())
        if match is None:
            raise ConfigError(option, f"{value!r}: expected NAME=YYYY-MM (or YYYY, YYYY-MM-DD)")
        name, date = match["name"], match["date"]
        try:
            parse_month(date)
        except ValueError as exc:
            raise ConfigError(option, f"{value!r}: {exc}") from None
        if name is None:
            if len(models) != 1:
                raise ConfigError(option, f"{value!r}: with several models, name one (NAME=DATE): {', '.join(known)}")
            name = models[0][0]
        if name not in known:
            raise ConfigError(option, f"{value!r}: no model named {name!r}; models: {', '.join(known)}")
        model = next(i for i, names in enumerate(models) if name in names)
        if model in given:
            raise ConfigError(
                option, f"{value!r}: {name!r} already has a cutoff ({given[model]!r}); give one per model"
            )
        given[model] = value
        cutoffs[name] = date
    return cutoffs


def cutoff_names(models: Sequence[str | ModelRequest]) -> list[tuple[str, str]]:
    """What ``--cutoff`` may call each ``--model`` value: its display name and its spec."""

    return [(request.display_name, request.spec.raw) for request in map(parse_model, models)]


def parse_deployed_at(value: str | None, option: str = "--deployed-at") -> str | None:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` as given (None stays None); a ConfigError naming ``option`` otherwise."""
    if value is None:
        return None
    try:
        parse_month(value)
    except ValueError as exc:
        raise ConfigError(option, str(exc)) from None
    return value
