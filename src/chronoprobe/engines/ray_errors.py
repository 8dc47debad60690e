"""Ray failures as chronoprobe errors: a worker's own error as itself, anything else from Ray as an EndpointError.

Shared by the actor-pool engine (``ray_engine``) and the vLLM processor path (``ray_llm``).
"""

from __future__ import annotations

import re

from chronoprobe import errors
from chronoprobe.errors import ChronoprobeError, EndpointError


def user_error(exc: BaseException, label: str) -> Exception:
    """A worker's ChronoprobeError as itself (one line); any other Ray failure as an EndpointError."""
    chain = _chain(exc)
    for current in chain:
        if isinstance(current, ChronoprobeError):
            # Ray re-raises a worker's error as a class derived from it: rebuild our own class
            ours: type[ChronoprobeError] = next(
                c for c in type(current).__mro__ if c.__module__ == ChronoprobeError.__module__
            )
            return ours(str(getattr(current, "where", label)), str(getattr(current, "problem", first_line(current))))
    # an actor whose constructor failed keeps only the text of its error: find our line in it
    texts = "\n".join(str(e) for e in chain)
    found = _WORKER_ERROR.findall(texts)
    if found:
        name, message = found[-1]
        where, _, problem = message.partition(": ")
        kind: type[ChronoprobeError] = getattr(errors, name)
        return kind(where, problem or message)
    import ray.exceptions  # deferred: ray (an extra)

    if isinstance(exc, ray.exceptions.RayError):
        return EndpointError(f"Ray cluster ({label})", first_line(exc))
    return exc if isinstance(exc, Exception) else RuntimeError(str(exc))


_WORKER_ERROR = re.compile(r"\b(ConfigError|DataError|CapabilityError|EndpointError): (.+?)\s*$", re.MULTILINE)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (Ray keeps a worker's error in ``.cause``), each once."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        cause = getattr(current, "cause", None)
        current = cause if isinstance(cause, BaseException) else current.__cause__
    return chain


def first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__
