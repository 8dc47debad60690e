"""What a lens's size decides: the rate its plan line's power and ``check --precision`` are about, and the option
that sets how many items a run asks (``Lens.sizing``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Sizing"]


class Sizing(BaseModel):
    """How a lens is sized: which of its rates, over which share of its items, which config option sets them."""

    model_config = ConfigDict(frozen=True)

    metric: str
    """The rate (over every item) a comparison of two models is first about, as ``results`` names it
    (``soft_constraint_pct.up-to-date``): whose discordance the call cache may measure."""
    option: str | None = None
    """The config field that sets how many items a run asks (``limit``, ``sample``); None: it cannot be sized."""
    share: float = 1.0
    """The share of the run's items behind one estimate of the metric (a third for a metric given per class of
    three classes balanced by the option)."""
    unit: str = "items"
    """What an item is (``facts``, ``questions``)."""
    more: str = ""
    """How to get more items than the lens ships, for the line that says the cap is reached."""
    measured: bool = False
    """A run of it replays from the call cache alone, cheaply and without a helper model (a judge): the plan may
    run it on the models the cache answered for, to measure their discordance."""
