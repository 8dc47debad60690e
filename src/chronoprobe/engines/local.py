"""The default engine: the driver's backend runs the batches one after another, in plan order."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from chronoprobe.engines.base import Engine, ModelSource
from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt


class LocalEngine(Engine):
    label = "local"
    local = True

    def run(
        self,
        backend: Backend,
        source: ModelSource | None,
        batches: Sequence[Sequence[Prompt]],
        params: DecodingParams,
    ) -> Iterator[tuple[int, list[Generation]]]:
        for position, prompts in enumerate(batches):
            yield position, backend.generate(prompts, params)
