"""``check --precision POINTS``: each lens sized for a 95% interval of that half-width on its headline rate.

A rate over n items has a 95% interval of half-width at most 1.96 sqrt(1/4 n) (at a share of one half, the
widest): ``POINTS`` asks for n = 1.96^2 / (4 (POINTS/100)^2) items behind the lens's headline rate
(``CheckPart.sizing``: its metric, the option that sets the items and the share of them behind one estimate).
A lens is asked that many (its budget's other settings kept), or everything it has where that is fewer,
and its plan line says which (``outdated: the 130 facts it has give ±8.6 points; ...``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronoprobe.checkup.select import Chosen, fingerprint_of, sized_config
from chronoprobe.contract.check_part import CheckContext, check_part
from chronoprobe.contract.lens import Lens
from chronoprobe.contract.lens_run import LensRun, lens_tool
from chronoprobe.contract.power import half_width, precision_units, units_of
from chronoprobe.errors import ConfigError, PluginError
from chronoprobe.models.registry import BackendOptions, ModelRequest
from chronoprobe.plugins import blame

__all__ = ["size_for_precision"]


def _run(cls: type[Lens[Any]], options: dict[str, Any], context: CheckContext, out: Path) -> LensRun:
    """The lens's run in the check with these options (its folder in the check's)."""
    return lens_tool(cls)(sized_config(cls, options, context, out, context.budget))


def _available(
    cls: type[Lens[Any]], unlimited: dict[str, Any], context: CheckContext, out: Path
) -> tuple[LensRun, int] | None:
    """The lens's run asking everything it has, and the units behind its headline rate then; None when it cannot
    count them before an earlier lens has run."""
    run = _run(cls, unlimited, context, out)
    with blame(run.lens, "failed in workload()"):
        workload = run.lens.workload()
    if workload is None or workload.at_most:
        return None
    return run, units_of(run.lens, workload.items)


def _size_one(item: Chosen, points: float, context: CheckContext, out: Path) -> str | None:
    """Resize ``item`` in place for ``points``; the plan line's words for it (None: left at its budget's size)."""
    assert item.lens is not None
    cls = type(item.lens)
    part = check_part(cls)
    sizing = part.sizing
    if sizing is None or sizing.option is None:
        return "not sized by --precision (the lens declares no size option)"
    mine = CheckContext(context.check, runs={need: out / need for need in part.needs})
    base: dict[str, Any] = {**part.sizes[context.budget], **part.options(mine)}
    unlimited = {key: value for key, value in base.items() if key != sizing.option}
    counted = _available(cls, unlimited, mine, out)
    if counted is None:
        return f"not sized by --precision (its {sizing.unit} are known only once an earlier lens has run)"
    everything, available = counted
    needed = precision_units(points)
    if needed >= available:
        item.run = everything
        more = f"; {sizing.more}" if sizing.more else ""
        return (
            f"--precision {points:g}: the {available:,} {sizing.unit} it has give ±{half_width(available):.1f} points"
            f"{more}"
        )
    asked = math.ceil(needed / sizing.share)
    item.run = _run(cls, {**base, sizing.option: asked}, mine, out)
    each = "" if asked == needed else f" an estimate ({asked:,} in all)"
    return f"--precision {points:g}: sized to {needed:,} {sizing.unit}{each} for ±{half_width(needed):.1f} points"


def size_for_precision(
    chosen: Sequence[Chosen],
    points: float,
    context: CheckContext,
    out: Path,
    specs: Sequence[ModelRequest],
    options: BackendOptions,
) -> dict[str, str]:
    """Each chosen lens sized for a 95% half-width of ``points`` on its headline rate (its lens and fingerprint
    replaced); lens -> the words its plan line gets."""
    if not 0 < points < 50:
        raise ConfigError("--precision", f"{points:g} is not a half-width in points between 0 and 50")
    said = {}
    for item in chosen:
        if item.lens is None:
            continue
        try:
            found = _size_one(item, points, context, out)
        except PluginError as exc:  # a plug-in that fails sizing is skipped, as when it fails its workload
            item.skip(f"the plug-in {exc.problem}")
            continue
        if found is not None:
            said[item.name] = found
        if item.lens is not None:
            item.fingerprint = fingerprint_of(item.name, item.lens, specs, options)
    return said
