"""The day a chat template is told, and whether the template takes one.

Many chat templates put a date in the system prompt. Llama 3.1 prints ``date_string`` (its own
default, "26 Jul 2024") beside a fixed "Cutting Knowledge Date"; Llama 3.2 and 3.3 print
``date_string``, else ``strftime_now("%d %b %Y")``, which transformers answers with the machine's
clock. Left alone, such a prompt changes every day: the call cache misses daily, two runs a day
apart are different experiments, and the model is told a day that has nothing to do with the gold
that judges it.

So every local backend renders its chat template through
:func:`chronoprobe.models.base.render_with_tokenizer` with the variables of :class:`ChatDates`:
``date_string`` and a ``strftime_now`` that formats the day it is told, never the machine's clock.
The day is the ``template_date`` backend option (``--template-date``):

- ``as-of`` (the default): the audit's as-of date, which the runner gives a lens's models
  (:meth:`chronoprobe.contract.lens.Lens.template_as_of`: the outdated lens's ``--as-of``, else its
  snapshot's retrieval date); a lens with no as-of date of its own, or a model loaded outside a
  lens run, is told :data:`UNDATED_AS_OF`, a fixed day;
- a date ``YYYY-MM-DD``: that day, in every lens;
- ``template``: the template's own behaviour (the machine's clock where it calls ``strftime_now``).

What a template takes (:func:`date_markers`) and the day it was told are recorded in the model's
``BackendInfo`` (``template_date``, ``template_takes_date``), so the provenance of every run says it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = [
    "AS_OF",
    "DATE_FORMAT",
    "DATE_LITERALS",
    "DATE_VARIABLES",
    "HARNESSES",
    "SERVERS",
    "TEMPLATE",
    "UNDATED_AS_OF",
    "ChatDates",
    "TemplateDate",
    "check_template_date",
    "clock_strftime",
    "date_markers",
    "machine_now",
    "resolve",
    "template_source",
    "told_text",
]

AS_OF = "as-of"
"""Tell the template the audit's as-of date."""
TEMPLATE = "template"
"""Tell the template nothing: it keeps its own behaviour (the machine's clock, where it reads one)."""
UNDATED_AS_OF = dt.date(2023, 12, 18)
"""What ``as-of`` tells a template when the lens has no as-of date (conflicts, recency, editing) or the model
is loaded outside a lens run: the retrieval date of the shipped DyKnow snapshot, so every lens of a ``check``
on the shipped data tells its models the same day, and no default prompt depends on the machine's clock."""
DATE_VARIABLES = ("date_string", "strftime_now")
"""The variables through which a chat template asks for today (Llama 3.x, and templates modelled on them)."""
DATE_LITERALS = ("Today Date", "Cutting Knowledge Date")
"""Words by which a template states a date of its own (Llama 3.x's system header)."""
DATE_FORMAT = "%d %b %Y"
"""How ``date_string`` is written: Llama 3's own form, ``18 Dec 2023``."""


def check_template_date(value: str) -> str:
    """``as-of``, ``template`` or a date ``YYYY-MM-DD`` (returned in ISO form); ``ValueError`` otherwise."""
    text = str(value).strip()
    if text in (AS_OF, TEMPLATE):
        return text
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise ValueError(f"{value!r} is not as-of, template or a date YYYY-MM-DD") from None


TemplateDate = Annotated[str, AfterValidator(check_template_date)]
"""The ``template_date`` option's type: ``as-of``, ``template`` or ``YYYY-MM-DD``."""


def resolve(choice: str, as_of: dt.date | None = None) -> str:
    """The day ``choice`` tells a template, as recorded: a date (ISO), or ``template``.

    ``as-of`` is ``as_of`` when given, else :data:`UNDATED_AS_OF`."""
    checked = check_template_date(choice)
    if checked == AS_OF:
        return (as_of or UNDATED_AS_OF).isoformat()
    return checked


def machine_now() -> dt.datetime:
    """The machine's clock, as transformers' own ``strftime_now`` reads it (``template`` only; tests freeze it)."""
    return dt.datetime.now()


def template_source(template: Any) -> str | None:
    """The text of a tokenizer's chat template: a string, or several named ones (a mapping), joined; None if none."""
    if isinstance(template, str):
        return template
    if isinstance(template, Mapping):
        return "\n".join(str(text) for text in template.values())
    if isinstance(template, list):  # [{"name": ..., "template": ...}], as tokenizer_config.json may hold them
        return "\n".join(str(item.get("template", "")) for item in template if isinstance(item, Mapping))
    return None


def date_markers(source: str | None) -> tuple[str, ...]:
    """What in a chat template takes or states a date: the variables it reads, the literals it prints."""
    if not source:
        return ()
    return tuple(marker for marker in (*DATE_VARIABLES, *DATE_LITERALS) if marker in source)


def _formatter(day: dt.date) -> Callable[[str], str]:
    moment = dt.datetime(day.year, day.month, day.day)

    def strftime_now(fmt: str) -> str:
        return moment.strftime(fmt)

    return strftime_now


def clock_strftime(fmt: str) -> str:
    """``strftime_now`` as transformers defines it: the machine's clock (what ``template`` leaves a template)."""
    return machine_now().strftime(fmt)


@dataclass(frozen=True)
class ChatDates:
    """What a backend's chat template is told, and what in it takes a date.

    ``told``: a date (ISO) or ``template``; None when no chat template is rendered here (it is off).
    ``markers``: :func:`date_markers` of the template; None when it is unknown (a server renders it).
    """

    told: str | None
    markers: tuple[str, ...] | None

    @classmethod
    def of(cls, template: Any, choice: str, *, used: bool) -> ChatDates:
        """For a backend whose tokenizer's template is ``template`` (None: it has none), told ``choice``
        (the ``template_date`` option), applying it or not (``used``)."""
        return cls(told=resolve(choice) if used else None, markers=date_markers(template_source(template)))

    def variables(self) -> dict[str, Any]:
        """The template variables to render with: the day it is told as ``date_string`` and ``strftime_now``;
        none under ``template`` (transformers supplies its own ``strftime_now``, the machine's clock)."""
        if self.told is None or self.told == TEMPLATE:
            return {}
        day = dt.date.fromisoformat(self.told)
        return {"date_string": day.strftime(DATE_FORMAT), "strftime_now": _formatter(day)}


SERVERS = ("openai",)
"""Backends whose chat template a server applies, out of our sight."""
HARNESSES = ("inspect_ai", "lm-eval")
"""The harnesses whose logs ``outdated score`` reads (their ``backend``): each renders the template in its own process."""


def told_text(told: str | None, markers: Sequence[str] | None, *, chat_template: bool, backend: str) -> str:
    """What a model's chat template was told, in words, from what its ``BackendInfo`` records.

    ``told``/``markers``: its ``template_date`` and ``template_takes_date``; ``chat_template``: whether the
    template was applied; ``backend``: which backend rendered it."""
    if backend in SERVERS or backend in HARNESSES:
        if not chat_template:
            return "no chat template applied, so no date"
        if backend in HARNESSES:
            return (
                f"{backend} applied the chat template itself: a template that reads the date got the machine's "
                "on the day it ran (chronoprobe docs harnesses)"
            )
        return "the server applies its own chat template, unknown here: it may state a date of its own"
    if markers is None:
        return "not recorded (an earlier release)"
    if told is None:
        return "no chat template applied, so no date"
    variables = [m for m in markers if m in DATE_VARIABLES]
    literals = [m for m in markers if m in DATE_LITERALS]
    if not markers:
        return f"its chat template takes no date (it would be told {told})"
    states = f"; it states {', '.join(repr(m) for m in literals)}" if literals else ""
    if not variables:
        return f"its chat template states a date of its own ({', '.join(literals)}), which no option changes"
    reads = f"it reads {', '.join(variables)}{states}"
    if told == TEMPLATE:
        return f"told no date ({reads}): its own, the machine's clock, so the prompt changes with the day"
    day = dt.date.fromisoformat(told)
    return f"told {day.strftime(DATE_FORMAT)} ({told}; {reads})"
