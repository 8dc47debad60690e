"""``check --require``: thresholds on the numbers ``chronoprobe results`` prints, for a CI gate.

A threshold reads ``LENS.METRIC[.CLASS] OP VALUE``: the lens, then the metric as the results
table names it, then optionally its class (``all`` when none is named), e.g.
``outdated.soft_constraint_pct.up-to-date >= 40`` or ``outdated.knowledge_date >= 2023-01``.
``LENS.METRIC[.CLASS].delta OP VALUE`` bounds the change against ``check --baseline``: the paired
difference, this run minus the baseline, in the metric's unit (points for a percentage).

By default a threshold fails only when the whole 95% interval lies on the wrong side: a small
run cannot fail a build on noise. ``strict`` compares the point value. A number without an
interval is compared as a point.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from chronoprobe.errors import ConfigError
from chronoprobe.metrics.knowledge_date import month_label, parse_month
from chronoprobe.metrics.records import ALL, unit_for
from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.metric_format import interval, value_text
from chronoprobe.reports.plain_words import change_quote

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_EXPRESSION = re.compile(r"^\s*(?P<name>[^\s<>=]+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>[^\s<>=]\S*)\s*$")
SYNTAX = "LENS.METRIC[.CLASS] OP VALUE, OP one of >=, >, <=, <, the metric as `chronoprobe results` names it"
DELTA_SYNTAX = "LENS.METRIC[.CLASS].delta OP VALUE, the change against --baseline"


@dataclass(frozen=True)
class Threshold:
    """One ``--require``: which number, for which class, and the bound it must keep."""

    text: str
    """As the user wrote it."""
    lens: str
    metric: str
    group: str
    op: str
    value: float
    shown: str
    """The bound as written (``40``, ``2023-01``)."""
    delta: bool = False
    """``METRIC[.CLASS].delta``: the bound is on the paired difference against ``--baseline`` (this run minus it)."""

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.value)

    @property
    def name(self) -> str:
        """``outdated.soft_constraint_pct.up-to-date >= 40`` (class ``all`` left out)."""
        group = "" if self.group == ALL else f".{self.group}"
        change = ".delta" if self.delta else ""
        return f"{self.lens}.{self.metric}{group}{change} {self.op} {self.shown}"


_PART = "[A-Za-z0-9_+-]+"
"""What ``*`` stands for: the text of one dotted part as lenses name their metrics (a strategy, a method, a
verdict), never empty; so a typo with an accent or an empty part is refused before any model loads."""


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A lens's metric pattern as a regex: ``*`` is a word (letters, digits, ``_+-``) within one dotted part."""
    return re.compile("^" + _PART.join(re.escape(part) for part in pattern.split("*")) + "$")


def known_metric(name: str, patterns: Sequence[str]) -> bool:
    return any(pattern_regex(p).match(name) for p in patterns)


def _split(rest: str, patterns: Sequence[str]) -> tuple[str, str] | None:
    """(metric, class) of ``rest``: the whole of it a metric (class ``all``), or all but its last part."""
    if not patterns:  # the lens does not declare its names: taken as written, looked up after the run
        return (rest, ALL) if all(rest.split(".")) else None
    if known_metric(rest, patterns):
        return rest, ALL
    metric, dot, group = rest.rpartition(".")
    if dot and group and known_metric(metric, patterns):
        return metric, group
    return None


def _bound(text: str, metric: str, where: str, *, delta: bool = False) -> float:
    """The bound as a number in the metric's unit: a month for a date, a share for a rate; a change of a date
    (``.delta``) in years."""
    unit = unit_for(metric)
    if delta and unit == "year" and "-" in text.strip("-"):
        raise ConfigError(
            where, f"a change in {metric} is in years (e.g. -1 or 0.5), and {text!r} is a date; give a number of years"
        )
    if unit == "year" and "-" in text.strip("-"):
        try:
            return parse_month(text)
        except ValueError:
            raise ConfigError(where, f"{text!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)") from None
    percent = text.endswith("%")
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        hint = " or a date (YYYY-MM)" if unit == "year" else ""
        raise ConfigError(where, f"{text!r} is not a number{hint}") from None
    if not math.isfinite(value):  # nan never holds and inf always or never: no bound a gate can keep
        raise ConfigError(where, f"{text!r} is not a finite number")
    if percent and unit == "rate":  # accuracy >= 10% means a rate of 0.1
        return value / 100.0
    if percent and unit != "%":
        raise ConfigError(where, f"{metric} is not a percentage; give a plain number")
    return value


def parse_threshold(text: str, patterns: Mapping[str, Sequence[str]]) -> Threshold:
    """One ``--require`` against the lenses of the check (lens -> its metric patterns); ConfigError when bad."""
    where = f"--require {text!r}"
    found = _EXPRESSION.match(text)
    if found is None:
        raise ConfigError(where, f"is not {SYNTAX}")
    lens, _, rest = found["name"].partition(".")
    if lens not in patterns:
        raise ConfigError(where, f"{lens!r} is not a lens this check runs; its lenses: {', '.join(patterns)}")
    if not rest:
        raise ConfigError(where, f"names no metric after {lens!r}")
    delta = rest.endswith(".delta")  # a change against --baseline, on the paired difference
    rest = rest.removesuffix(".delta") if delta else rest
    shown = ", ".join(p.replace("*", "<…>") for p in patterns[lens]) or "names without an empty part"
    if "delta" in rest.split("."):
        raise ConfigError(where, f"'.delta' comes once, last: {DELTA_SYNTAX}; the {lens} lens's metrics: {shown}")
    split = _split(rest, patterns[lens])
    if split is None:
        raise ConfigError(where, f"{rest!r} is not a metric of the {lens} lens; its metrics: {shown}")
    metric, group = split
    return Threshold(
        text=text,
        lens=lens,
        metric=metric,
        group=group,
        op=found["op"],
        value=_bound(found["value"], metric, where, delta=delta),
        shown=found["value"],
        delta=delta,
    )


def check_classes(thresholds: Sequence[Threshold], classes: Mapping[str, Sequence[str]]) -> None:
    """Each threshold's class against the classes its lens will record (lens -> classes, where the lens knows them
    before the run): a ConfigError naming the threshold and the classes that can be used, before any model loads."""
    for threshold in thresholds:
        known = classes.get(threshold.lens)
        if known is not None and threshold.group not in known:
            raise ConfigError(
                f"--require {threshold.text!r}",
                f"{threshold.group!r} is not a class of the {threshold.lens} lens's items; its classes: "
                f"{', '.join(known)}",
            )


@dataclass(frozen=True)
class GateResult:
    """One threshold judged for one model."""

    threshold: Threshold
    model: str
    """The model's name in the run."""
    metric: Metric | None
    """The record it was judged on; None when the run did not measure it."""
    passed: bool
    why: str
    """How it was decided: ``interval``, ``point`` (strict, or no interval), ``not measured``, or
    :data:`NOTHING_SHARED` (a change against a baseline that shares no item with this run)."""
    classes: tuple[str, ...] = ()
    """Not measured: the classes the run did record the metric for (a typo in the class shows here)."""

    def line(self) -> str:
        """``outdated.soft_constraint_pct.up-to-date >= 40 (smollm2): 3.8% (95% CI 1.7–8.7%, n=130); fails``; a change
        against the baseline in points or years (``+20.8 points (95% CI +13.1 to +28.9 points, n=130)``)."""
        verdict = "holds" if self.passed else "fails"
        if self.why == NOTHING_SHARED:
            return f"{self.threshold.name} ({self.model}): {NOTHING_SHARED}, so no change is measured; {verdict}"
        if self.metric is None or self.metric.value is None:
            known = f" (recorded for the classes {', '.join(self.classes)})" if self.classes else ""
            return f"{self.threshold.name} ({self.model}): not measured in this run{known}; {verdict}"
        if self.threshold.delta:
            detail = change_quote(self.metric)
        else:
            known = interval(self.metric)
            detail = value_text(self.metric) + (f" ({known})" if known else "")
        how = {"interval": "the whole 95% interval is on the wrong side", "point": "the point value is"}[self.why]
        reason = f"; {how}" if not self.passed else ""
        bound = _bound_text(self.threshold, self.metric.unit)
        return (
            f"{self.threshold.name} ({self.model}): {detail}; threshold {self.threshold.op} {bound}: {verdict}{reason}"
        )


NOTHING_SHARED = "no items shared with the baseline"
"""Why a ``.delta`` threshold over zero shared items fails: a change over nothing never holds."""


def _bound_text(threshold: Threshold, unit: str) -> str:
    """The bound as the line shows it: a date's month beside a bare year, a change's points or years."""
    bound = threshold.shown
    if threshold.delta:
        mark = {"%": " points", "year": " years"}.get(unit, "")  # a rate's bound is a share (0.05) or 5%
        return bound if bound.endswith("%") else bound + mark
    if unit == "year" and "-" not in bound:
        return f"{bound} ({month_label(threshold.value)})"
    return bound


def judge(threshold: Threshold, metric: Metric | None, model: str, *, strict: bool = False) -> GateResult:
    """Whether ``metric`` keeps ``threshold``: interval-aware unless ``strict``; a missing number fails."""
    if metric is None or metric.value is None:
        return GateResult(threshold, model, metric, passed=False, why="not measured")
    if strict or metric.ci_low is None or metric.ci_high is None:
        return GateResult(threshold, model, metric, passed=threshold.holds(metric.value), why="point")
    # the most favourable end of the interval: the threshold fails only if even that end misses it
    best = metric.ci_high if threshold.op in (">=", ">") else metric.ci_low
    return GateResult(threshold, model, metric, passed=threshold.holds(best), why="interval")


def judge_all(
    thresholds: Sequence[Threshold],
    summaries: Mapping[str, Summary],
    *,
    strict: bool = False,
    names: Mapping[str, str] | None = None,
) -> list[GateResult]:
    """Every threshold for every model of its lens's run (lens -> summary); ``names``: model key -> shown name."""
    results = []
    for threshold in (t for t in thresholds if not t.delta):  # a change against --baseline: checkup.baseline
        summary = summaries.get(threshold.lens)
        if summary is None:  # the lens was skipped (or failed): nothing measured, so the threshold fails
            models = list((names or {}).values()) or ["every model"]
            results += [GateResult(threshold, name, None, passed=False, why="not measured") for name in models]
            continue
        for key in summary.models:
            found = next(
                (
                    m
                    for m in summary.metrics
                    if m.model == key and m.name == threshold.metric and m.group == threshold.group
                ),
                None,
            )
            shown = (names or {}).get(key) or summary.names.get(key, key)
            result = judge(threshold, found, shown, strict=strict)
            if found is None:
                groups = [m.group for m in summary.metrics if m.model == key and m.name == threshold.metric]
                result = replace(result, classes=tuple(dict.fromkeys(groups)))
            results.append(result)
    return results
