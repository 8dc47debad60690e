"""What an option's value may be, shared by the lens configs and the commands, and how a refused one reads.

A config field's validator and a command's option accept the same strings (``cp.run`` takes what the
command line takes): comma lists, dates, URLs, choices. Each check raises ``ValueError`` with a
message that names the value and what would do; :func:`config_error` turns a config's refusal into
one :class:`~chronoprobe.errors.ConfigError` naming the option (or the field, for ``cp.run``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, ValidationError

from chronoprobe.errors import ConfigError

__all__ = [
    "HttpUrl",
    "KeyValues",
    "PastDate",
    "comma_list",
    "config_error",
    "http_url",
    "innermost_field",
    "key_values",
    "one_of",
    "past_date",
]


def one_of(value: str, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``; ValueError ``'x' is not one of a, b`` otherwise."""
    if value not in choices:
        raise ValueError(f"{value!r} is not one of {', '.join(choices)}")
    return value


def comma_list(values: str | Iterable[Any]) -> list[Any]:
    """``"a,b"``, ``["a,b", "c"]`` or ``["a", "b"]`` -> ``["a", "b", "c"]``: the parts of each text, stripped; other
    values as they are."""
    items = [values] if isinstance(values, str) else list(values)
    found: list[Any] = []
    for item in items:
        if isinstance(item, str):
            found.extend(part.strip() for part in item.split(",") if part.strip())
        else:
            found.append(item)
    return found


def key_values(value: Any) -> Any:
    """``["a=1", "b=2"]`` -> ``{"a": "1", "b": "2"}``; a mapping as it is."""
    if not isinstance(value, list | tuple):
        return value
    found: dict[str, str] = {}
    for item in value:
        key, sep, text = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{item!r}: expected NAME=VALUE")
        found[key.strip()] = text.strip()
    return found


KeyValues = Annotated[dict[str, str], BeforeValidator(key_values)]
"""A mapping a command takes as repeated ``NAME=VALUE`` texts (its generated option is repeatable)."""


def past_date(value: str) -> dt.date:
    """A ``YYYY-MM-DD`` date that is not in the future (nothing is known about it yet)."""
    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a date (use YYYY-MM-DD)") from None
    if date > dt.date.today():
        raise ValueError(f"{value} is in the future (today is {dt.date.today()})")
    return date


def http_url(value: str) -> str:
    """An ``http(s)://host...`` URL."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL")
    return value


def _past_date_text(value: Any) -> Any:
    return past_date(value) if isinstance(value, str) else value


PastDate = Annotated[dt.date, BeforeValidator(_past_date_text)]
"""A config field's date: a ``date``, or its ``YYYY-MM-DD`` text (:func:`past_date`), never in the future."""
HttpUrl = Annotated[str, AfterValidator(http_url)]
"""A config field's http(s) URL (:func:`http_url`)."""


def _message(error: Any) -> str:
    """A pydantic error as our one-line problem: a choice names the choices, a ValueError keeps its text."""
    if error["type"] == "literal_error":
        expected = str(error.get("ctx", {}).get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"{error['input']!r} is not one of {expected}"
    if error["type"] == "missing":
        return "missing"
    return str(error["msg"]).removeprefix("Value error, ")


def config_error(exc: ValidationError, name_of: Callable[[tuple[str | int, ...]], str]) -> ConfigError:
    """The first problem of ``exc`` as a ConfigError named ``name_of(location)`` (the error's field path, empty
    for the config as a whole; see :func:`innermost_field`)."""
    error = exc.errors()[0]
    return ConfigError(name_of(tuple(error["loc"])), _message(error))


def innermost_field(location: tuple[str | int, ...]) -> str | None:
    """The innermost named field of an error's location (``persuasion.n_samples`` -> ``n_samples``); None for none."""
    fields = [part for part in location if isinstance(part, str)]
    return fields[-1] if fields else None
