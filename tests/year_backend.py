"""A backend that lives only in tests/: ``year:<YYYY>`` answers every prompt "It was in <YYYY>.".

It proves that a backend is one module plus one registration line: this file declares the
backend, its spec form, its options and its loader; ``BACKENDS["year"] = "year_backend:YEAR"``
registers it. ``--model year:2019`` then works on the command line and in ``chronoprobe.run``,
``chronoprobe models`` lists it, and its own option (``suffix``) is taken by ``chronoprobe.run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import Backend, BackendInfo, DecodingParams, Generation, Prompt, Sample, require
from chronoprobe.models.builtin import BatchSize
from chronoprobe.models.registry import BackendKind, ModelRequest, SpecForm


class YearOptions(BaseModel):
    """The options of ``year:`` specs (a backend of another package: the command line offers ``--suffix``, its
    docstring the help)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    batch_size: BatchSize | None = None
    """Prompts per batch; None: 4."""
    suffix: str = "."
    """What ends every answer (an option no other backend has)."""


class YearBackend(Backend):
    """Says a year, whatever it is asked."""

    def __init__(self, year: str, spec: str, options: YearOptions) -> None:
        self.year = year
        self.suffix = options.suffix
        self.batch_size = options.batch_size if isinstance(options.batch_size, int) else 4
        self._info = BackendInfo(
            spec=spec, backend="year", model_id=f"year-{year}", revision="1", batch_size=self.batch_size
        )

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        text = prompt.text if prompt.text is not None else "\n".join(m.content for m in prompt.messages or ())
        return text + prompt.answer_prefix

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        require(self, params, purpose="this request")
        answer = f"It was in {self.year}{self.suffix}"
        return [Generation(rendered_prompt=self.render(p), samples=[Sample(text=answer)]) for p in prompts]


def _year(rest: str, where: str) -> dict[str, str]:
    if not (rest.isdigit() and len(rest) == 4):
        raise ConfigError(where, "expected year:<YYYY>")
    return {"target": rest}


def load(request: ModelRequest, options: YearOptions) -> Backend:
    return YearBackend(request.spec.target, request.spec.raw, options)


YEAR = BackendKind(
    kind="year",
    load="year_backend:load",
    options=YearOptions,
    short="year:<YYYY>",
    parse=_year,
    forms=(SpecForm("year:<YYYY>", "a test backend that names that year in every answer"),),
)


class _BatchOfOtherType(BaseModel):
    batch_size: int = 8


CLASH = BackendKind(kind="clash", load="year_backend:load", options=_BatchOfOtherType)
"""Only for the test of the rule that one option name has one type across backends (``batch_size`` here is not
the ``BatchSize | None`` every other backend declares)."""
