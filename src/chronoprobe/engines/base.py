"""The engine interface: who runs the batches that the call cache could not answer.

:class:`chronoprobe.cache.CachedModel` renders the prompts, computes every cache key, plans
the batches over the whole request and looks them up; only the batches with a missing sample
reach an engine. The engine yields each batch's generations as it finishes them, in any order,
and the driver writes them to the cache at once, so a killed run resumes as it always has.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence

from pydantic import BaseModel, ConfigDict

from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt
from chronoprobe.models.registry import BackendOptions, ModelRequest


class ModelSource(BaseModel):
    """How a backend was built: enough for another process to build the same one.

    ``request`` is the parsed ``--model`` value; its URL as given (an ``openai:`` URL may hold its key)
    travels to the workers by pickling, never in a record or a message.
    """

    model_config = ConfigDict(frozen=True)

    request: ModelRequest
    options: BackendOptions = BackendOptions()


class Engine(abc.ABC):
    """Runs planned batches of prompts; see the module doc."""

    label: str = "local"
    """What ``--engine`` said (``local``, ``ray``, ``ray:auto`` ...)."""
    local: bool = True
    """True when batches run on the driver's own backend (whose weights may be edited in place)."""

    def check(self) -> None:  # noqa: B027 - optional hook: the local engine has nothing to check
        """A quick check (a few seconds at most) that :meth:`start` can work; called before anything else runs."""

    def start(self) -> None:  # noqa: B027 - optional hook: the local engine has nothing to start
        """Connect or start what the engine needs; called before any model loads."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Release what :meth:`start` took."""

    @abc.abstractmethod
    def run(
        self,
        backend: Backend,
        source: ModelSource | None,
        batches: Sequence[Sequence[Prompt]],
        params: DecodingParams,
    ) -> Iterator[tuple[int, list[Generation]]]:
        """Yield ``(position in batches, generations in prompt order)`` for every batch, as each finishes."""
