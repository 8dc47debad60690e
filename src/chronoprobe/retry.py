"""One retry policy for every HTTP client (the WDQS client and the openai backend).

``max_retries`` always counts retries *after* the first attempt, so
``max_retries=2`` means at most three attempts. A transient failure (the
caller raises :class:`Retryable`) is retried after:

* the server's ``Retry-After`` (delta-seconds or an HTTP-date), honoured as
  given up to ``max_retry_after_s``; a longer one fails at once instead of
  stalling the run (and retrying earlier than asked only earns another 429);
* otherwise exponential backoff, ``backoff_s * 2**(k-1)`` before retry k,
  capped at ``max_backoff_s``.

Every Retry-After wait of a second or more, and any backoff of ten seconds or
more, is announced on the ``chronoprobe.retry`` logger (the CLI prints it as one line above its progress bars) and to an
optional ``notice`` callback.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import math
import time
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.errors import EndpointError

logger = logging.getLogger("chronoprobe.retry")

T = TypeVar("T")

NOTICE_MIN_WAIT_S = 1.0
"""Shorter Retry-After waits are not announced (they pass unnoticed anyway)."""
NOTICE_MIN_BACKOFF_S = 10.0
"""Our own backoff is announced only from this long on: the default schedule (1, 2, 4 s) stays silent,
so an endpoint that is simply down gives one error line, not a notice per retry."""


class RetryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_retries: int = Field(3, ge=0, le=20)
    """Retries after the first attempt (attempts = max_retries + 1)."""
    backoff_s: float = Field(1.0, ge=0)
    max_backoff_s: float = Field(30.0, ge=0)
    max_retry_after_s: float = Field(120.0, ge=0)

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def backoff(self, retry: int) -> float:
        """Wait before retry ``retry`` (1-based) when the server gave no Retry-After."""
        return min(self.backoff_s * 2.0 ** (retry - 1), self.max_backoff_s)


class Retryable(Exception):
    """Raised by an attempt for a transient failure: 429, 5xx, timeout, refused connection."""

    def __init__(self, reason: str, retry_after: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        """The raw Retry-After header, if the server sent one."""


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a Retry-After header; None if absent or unreadable.

    Accepts delta-seconds (``"30"``, also ``"0.5"`` which some servers send)
    and an HTTP-date; a date in the past means 0.
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        seconds = when.timestamp() - now()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _announce(message: str, notice: Callable[[str], None] | None) -> None:
    logger.warning(message)
    if notice is not None:
        notice(message)


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    where: str,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    notice: Callable[[str], None] | None = None,
) -> T:
    """Run ``attempt`` until it returns, raises a non-:class:`Retryable` error, or attempts run out.

    ``where`` names the endpoint in notices and in the final ``EndpointError``.
    ``sleep`` may raise to cancel the wait (the openai backend does when a
    sibling request failed).
    """
    last = ""
    for number in range(1, policy.attempts + 1):
        try:
            return attempt()
        except Retryable as failure:
            last = failure.reason
            if number == policy.attempts:
                break
            asked = parse_retry_after(failure.retry_after, clock)
            if asked is not None and asked > policy.max_retry_after_s:
                raise EndpointError(
                    where,
                    f"{last}; the server asks to retry after {asked:.0f} s, "
                    f"more than the {policy.max_retry_after_s:g} s chronoprobe waits",
                ) from None
            wait = asked if asked is not None else policy.backoff(number)
            if wait >= (NOTICE_MIN_WAIT_S if asked is not None else NOTICE_MIN_BACKOFF_S):
                why = "Retry-After" if asked is not None else "backoff"
                _announce(
                    f"waiting {wait:.0f} s ({why}) before retrying {where}: {last} "
                    f"(retry {number} of {policy.max_retries})",
                    notice,
                )
            sleep(wait)
    plural = "attempt" if policy.attempts == 1 else "attempts"
    raise EndpointError(where, f"{last} (gave up after {policy.attempts} {plural})")
