"""``chronoprobe check``: every registered lens at a budget's size, in one folder, with one answer.

The check folder holds a normal run folder per lens (``<out>/<lens>``, written by the lens's run through the
one runner, :func:`chronoprobe.contract.runner.run_tool`, like any run) and, beside them, ``check.json``,
``check.md`` and ``card.html``. It is resumable like every run: after a kill, the same command keeps each lens
folder that finished with the same settings (``check.json`` lists them as they finish), reruns
the rest through the call cache, and ends with the same files.

Nothing here names a lens: each lens declares its sizes, what it needs from the check and the metric names it
records in its check part (:class:`~chronoprobe.contract.check_part.CheckPart`), what it will ask
(``Lens.workload``) and its
sentences of the paragraph (its card part's ``words``, :class:`~chronoprobe.reports.lens_card.CardPart`).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from chronoprobe.cache import CachedModel
from chronoprobe.checkup.baseline import (
    Baseline,
    baseline_comparisons,
    baseline_lines,
    judge_deltas,
    open_baseline,
    verdicts,
)
from chronoprobe.checkup.baseline_items import check_shared
from chronoprobe.checkup.config import CheckToolConfig
from chronoprobe.checkup.folder import check_lens_folders, check_same_models, clear_stale_writes, discard_if_unused
from chronoprobe.checkup.junit import write_junit
from chronoprobe.checkup.plan import LensPlan, estimate_lens, estimate_power
from chronoprobe.checkup.precision import size_for_precision
from chronoprobe.checkup.report import (
    CHECK_KIND,
    CheckRecord,
    GateEntry,
    LensEntry,
    read_record,
    write_outputs,
    write_record,
)
from chronoprobe.checkup.select import Chosen, choose, selection
from chronoprobe.checkup.thresholds import GateResult, Threshold, check_classes, judge_all, parse_threshold
from chronoprobe.contract.check_part import Budget, CheckContext, ItemUnits, RecordClasses, check_part
from chronoprobe.contract.lens import Workload, lens_class
from chronoprobe.contract.runner import default_folder, run_tool
from chronoprobe.contract.tool import ToolContext
from chronoprobe.errors import CapabilityError, ConfigError, DataError, PluginError
from chronoprobe.io import write_json_atomic
from chronoprobe.models.registry import ModelRequest, strip_url_credentials
from chronoprobe.paths import default_call_cache
from chronoprobe.plugins import blame
from chronoprobe.records import publish
from chronoprobe.records.runlog import MARKER, RUN_LOG, Run, Summary, load_run, read_folder
from chronoprobe.reports.compare import Comparison, compare_runs
from chronoprobe.reports.lens_card import card_of

T = TypeVar("T")


@dataclass
class LensOutcome:
    """What happened to one lens in this invocation."""

    lens: str
    status: Literal["ran", "kept", "skipped"]
    """``kept``: finished earlier in this folder with the same settings."""
    reason: str = ""
    run: Run | None = None
    calls_made: int = 0
    """Model calls this invocation sent (the cache answered the rest)."""


@dataclass
class CheckResult:
    """A finished check: its folder, each lens, the paragraph per model and the gate."""

    path: Path
    budget: Budget
    record: CheckRecord
    lenses: list[LensOutcome]
    gate: list[GateResult]
    plan: list[LensPlan]

    @property
    def runs(self) -> dict[str, Run]:
        """Lens name -> its run (as ``chronoprobe.load`` reads it)."""
        return {o.lens: o.run for o in self.lenses if o.run is not None}

    @property
    def paragraphs(self) -> dict[str, str]:
        """Model name -> its paragraph in plain words."""
        return {self.record.names.get(k, k): " ".join(s) for k, s in self.record.paragraphs.items()}

    @property
    def passed(self) -> bool:
        """Every threshold holds (True without thresholds)."""
        return all(result.passed for result in self.gate)

    @property
    def failed(self) -> list[GateResult]:
        return [result for result in self.gate if not result.passed]

    @property
    def calls_made(self) -> int:
        return sum(o.calls_made for o in self.lenses)

    def lines(self) -> list[str]:
        """What ``chronoprobe check`` says of it (rich markup): the paragraph per model, the paired verdicts between
        its models and against the baseline, then each threshold's verdict."""
        said = [f"[bold]{name}[/]: {text}" for name, text in self.paragraphs.items()]
        if self.record.comparisons:
            said.append("[bold]Paired[/]: " + " ".join(self.record.comparisons))
        if self.record.baseline is not None:
            said.append(f"[bold]Against the baseline {self.record.baseline}[/]:")
            said += [f"  - {line}" for line in self.record.against_baseline]
        return said + [("holds " if gate.passed else "[red]FAILS[/] ") + gate.line() for gate in self.gate]

    def write_junit(self, path: Path) -> None:
        """The JUnit file at ``path``: one test case per threshold and per lens (a skipped one with its reason)."""
        write_junit(path, self.gate, [(o.lens, o.reason if o.status == "skipped" else None) for o in self.lenses])


def default_check_out(models: Sequence[ModelRequest], root: Path = Path("results")) -> Path:
    """``results/check/<model>-<timestamp>``: one new folder per check."""
    return default_folder(root / CHECK_KIND, "", models)


@dataclass
class Prepared:
    """A check with everything decided and checked, before any model loads."""

    config: CheckToolConfig
    """The check's options, declared there once."""
    context: ToolContext
    """The runner's context of the check: backend options, call cache, engine, displays (each lens's run shares it)."""
    out: Path
    chosen: list[Chosen]
    thresholds: list[Threshold]
    plans: list[LensPlan] = field(default_factory=list)
    earlier: CheckRecord | None = None
    """The folder's ``check.json`` from an earlier (perhaps killed) check, when its lenses may be kept."""
    handles: Sequence[CachedModel] = ()
    """Models loaded already (``chronoprobe.model()`` handles), asked by every lens instead of loading its own."""
    sized: dict[str, str] = field(default_factory=dict)
    """Lens -> how ``--precision`` sized it (for its plan line)."""
    baseline: Baseline | None = None
    """``--baseline``: the earlier check this one is compared with, checked before any model loads."""


def prepare(config: CheckToolConfig, out: Path, context: ToolContext, handles: Sequence[CachedModel] = ()) -> Prepared:
    """Choose and size the lenses, parse the thresholds: every user error here, before any model loads (the
    folder, the call cache and the engine were the runner's pre-flight)."""
    check_same_models(out, [str(m) for m in config.models])
    chosen = choose(selection(config.lens), CheckContext(config), out, config.models, context.options)
    check_lens_folders(out, [(c.name, c.lens.kind) for c in chosen if c.lens is not None])
    sized = {}
    if config.precision is not None:
        sized = size_for_precision(chosen, config.precision, CheckContext(config), out, config.models, context.options)
    patterns = {c.name: check_part(lens_class(c.name)).metric_patterns for c in chosen if c.lens is not None}
    thresholds = [parse_threshold(text, patterns) for text in config.require]
    baseline = _baseline(config, thresholds, chosen, out)
    for item in chosen:  # what a lens reads must not lie in the folder the check writes, but for its own needs
        if item.lens is not None:
            own = {str(out / need) for need in check_part(type(item.lens)).needs}
            inputs = [(option, path) for option, path in item.lens.input_paths() if str(path) not in own]
            publish.check_not_input(out, inputs)
    return Prepared(config, context, out, chosen, thresholds, handles=handles, sized=sized, baseline=baseline)


def _baseline(
    config: CheckToolConfig, thresholds: Sequence[Threshold], chosen: list[Chosen], out: Path
) -> Baseline | None:
    """``--baseline``, opened and checked against this check's lenses; a ``.delta`` threshold needs one."""
    changes = [t for t in thresholds if t.delta]
    if changes and config.baseline is None:
        raise ConfigError(
            f"--require {changes[0].text!r}", "a .delta threshold is a change against --baseline DIR; give one"
        )
    if config.baseline is None:
        return None
    publish.check_not_input(out, [("--baseline", config.baseline)])
    return open_baseline(config.baseline, chosen, out, thresholds, allow_different_items=config.allow_different_items)


def plan(prepared: Prepared) -> list[LensPlan]:
    """The plan line of every lens: skipped, kept from an earlier run in the folder, or its workload and time.

    May read each lens's items (``Lens.workload`` loads what it needs); asks no model. A threshold on a class the
    items of its lens do not have is refused here (``RecordClasses``), before any model loads."""
    config = prepared.config
    earlier = prepared.earlier = read_record(prepared.out) if not config.live else None
    specs = [request.spec.raw for request in config.models]
    plans: list[LensPlan] = []
    rerun: set[str] = set()
    for item in prepared.chosen:
        if item.lens is None:
            plans.append(LensPlan(item.name, "skip", reason=item.skipped or ""))
            continue
        if _kept(prepared.out, item, earlier) and not set(check_part(type(item.lens)).needs) & rerun:
            plans.append(LensPlan(item.name, "reuse"))
            continue
        try:
            with blame(item.lens, "failed in workload()"):
                workload = item.lens.workload()
        except PluginError as exc:
            item.skip(f"the plug-in {exc.problem}")
            plans.append(LensPlan(item.name, "skip", reason=f"the plug-in {exc.problem}"))
            continue
        rerun.add(item.name)
        line = LensPlan(item.name, "run", workload=workload, models=len(config.models))
        cache = prepared.context.cache_path or default_call_cache()
        estimate_lens(line, specs, cache)
        estimate_power(line, item.lens, cache)
        line.sized = prepared.sized.get(item.name)
        plans.append(line)
    check_classes(prepared.thresholds, _classes(prepared.chosen, rerun))
    _check_shared(prepared, rerun)
    prepared.plans = plans
    return plans


def _check_shared(prepared: Prepared, running: set[str]) -> None:
    """A gated baseline shares some unit with each lens that runs and knows its units before the run."""
    baseline = prepared.baseline
    gated = {t.lens for t in prepared.thresholds if t.delta}
    if baseline is None or not gated:
        return
    planned = _known_before_run(prepared.chosen, running & gated, "item_units", _item_units)
    check_shared(baseline.runs, baseline.units, planned, gated)


def _item_units(lens: object) -> Collection[str] | None:
    return lens.item_units() if isinstance(lens, ItemUnits) else None


def _classes(chosen: Sequence[Chosen], running: set[str]) -> dict[str, list[str]]:
    """Lens -> the classes its records will have, for each lens that runs and knows them before the run."""
    found = _known_before_run(chosen, running, "record_classes", _record_classes)
    return {name: list(classes) for name, classes in found.items()}


def _record_classes(lens: object) -> Sequence[str] | None:
    return lens.record_classes() if isinstance(lens, RecordClasses) else None


def _known_before_run(
    chosen: Sequence[Chosen], asked: set[str], hook: str, ask: Callable[[object], T | None]
) -> dict[str, T]:
    """Lens -> what its ``hook`` (read by ``ask``) says before the run, for each lens named in ``asked``; a lens
    without the hook or that says None, and a plug-in that fails saying it, are left out (looked up after the run)."""
    found: dict[str, T] = {}
    for item in chosen:
        if item.name not in asked:
            continue
        try:
            with blame(item.lens, f"failed in {hook}()"):
                answer = ask(item.lens)
        except PluginError:
            continue
        if answer is not None:
            found[item.name] = answer
    return found


def _kept(out: Path, item: Chosen, earlier: CheckRecord | None) -> bool:
    """The lens finished in this folder with the same fingerprint, and its run folder reads."""
    entry = earlier.entry(item.name) if earlier is not None else None
    if entry is None or entry.status != "done" or entry.fingerprint != item.fingerprint or entry.folder is None:
        return False
    if not (out / entry.folder / RUN_LOG).is_file():  # the run log is what a check wrote; a summary alone is not
        return False
    try:
        return read_folder(out / entry.folder) is not None
    except Exception:  # a damaged folder is rerun, not trusted
        return False


def _start_folder(out: Path) -> bool:
    """The check folder and its marker (so a later check recognises it as its own); True when it is new.

    What a kill left half-written in an earlier check's folder goes first, so a resumed check ends with
    the files an uninterrupted one writes."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    clear_stale_writes(out)
    if not (out / MARKER).exists():
        write_json_atomic(
            out / MARKER,
            {
                "kind": CHECK_KIND,
                "holds_runs": True,  # a lens's run folder may be published inside it (publish.holds_runs)
                "written": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "command": strip_url_credentials(" ".join(sys.argv)),
            },
        )
    return created


def _inside(where: str, out: Path) -> bool:
    """The place an error names lies in the check folder (a lens folder this check wrote)."""
    try:
        return Path(where).resolve().is_relative_to(out.resolve())
    except (OSError, ValueError):
        return False


def _calls(run: Run) -> int:
    return sum((run.provenance.model_calls_made or {}).values())


Say = Callable[[str], None]


class _Runner:
    """One check's lenses in order, each recorded in ``check.json`` as soon as it is done or skipped."""

    def __init__(self, prepared: Prepared, say: Say) -> None:
        self.prepared, self.say = prepared, say
        config = prepared.config
        self.record = CheckRecord(budget=config.budget, models=[str(m) for m in config.models], strict=config.strict)
        self.outcomes: list[LensOutcome] = []

    def skip(self, name: str, reason: str, *, say: bool = True) -> None:
        self.outcomes.append(LensOutcome(name, "skipped", reason=reason))
        self.record.lenses.append(LensEntry(lens=name, status="skipped", reason=reason))
        if say:
            self.say(f"{name}: skipped, {reason}")

    def done(self, item: Chosen, outcome: LensOutcome, workload: Workload | None) -> None:
        assert item.lens is not None, "a lens that runs"
        self.outcomes.append(outcome)
        self.record.lenses.append(
            LensEntry(
                lens=item.name,
                question=card_of(type(item.lens)).question,
                status="done",
                folder=item.name,
                fingerprint=item.fingerprint,
                workload=workload,
            )
        )
        write_record(self.prepared.out, self.record)  # a kill from here on keeps this lens's folder

    def one(self, item: Chosen, line: LensPlan) -> None:
        if item.lens is None:
            self.skip(item.name, item.skipped or "", say=False)  # the plan named it already
            return
        ran = {o.lens for o in self.outcomes if o.run is not None}
        missing = [need for need in check_part(type(item.lens)).needs if need not in ran]
        if missing:
            self.skip(item.name, f"it needs the {', '.join(missing)} lens, which was skipped")
            return
        folder = self.prepared.out / item.name
        if line.status == "reuse":
            earlier = self.prepared.earlier.entry(item.name) if self.prepared.earlier is not None else None
            kept = LensOutcome(item.name, "kept", run=load_run(folder))
            self.done(item, kept, earlier.workload if earlier is not None else None)
            self.say(f"{item.name}: kept from earlier in {folder}")
            return
        assert item.run is not None, "a lens that runs"
        item.run.handles = list(self.prepared.handles)
        try:  # the check's settings, without its notices: the lens's plan line is the check's own
            run = run_tool(item.run, self.prepared.context.derived(notice=None))
        except CapabilityError as exc:  # raised before the lens's first call: the rest of the check goes on
            self.skip(item.name, f"the model cannot serve it ({exc.problem})")
            return
        except PluginError as exc:  # a plug-in fails its own line, not the check
            self.skip(item.name, f"the plug-in {exc.problem}")
            return
        except DataError as exc:  # what an earlier lens of this check left it holds nothing for it (no fact to edit)
            if not _inside(exc.where, self.prepared.out):
                raise
            self.skip(item.name, f"nothing to do: {exc.problem}")
            return
        self.done(item, LensOutcome(item.name, "ran", run=run, calls_made=_calls(run)), line.workload)
        self.say(f"{item.name}: done, {_calls(run):,} new model calls; {folder}")

    def finish(self) -> list[GateResult]:
        """The paragraph per model, the gate, and the files beside the lens folders."""
        record, config = self.record, self.prepared.config
        summaries = {o.lens: o.run.summary for o in self.outcomes if o.run is not None}
        runs = {o.lens: o.run for o in self.outcomes if o.run is not None}
        record.names, record.paragraphs = paragraphs(summaries)
        record.comparisons = verdicts(runs)
        names = record.names or {str(m): str(m) for m in config.models}
        gate = judge_all(self.prepared.thresholds, summaries, strict=config.strict, names=names)
        against = self._against_baseline(runs)
        if self.prepared.baseline is not None:
            gate += judge_deltas(self.prepared.thresholds, against, self.prepared.baseline.path, strict=config.strict)
        record.gate = [GateEntry.of(result) for result in gate]
        record.complete = True
        questions = {name: card_of(lens_class(name)).question for name in summaries}
        title = f"chronoprobe check: {', '.join(record.names.values()) or ', '.join(record.models)}"
        write_outputs(self.prepared.out, record, summaries, questions, title, compared=_compared(runs, against))
        return gate

    def _against_baseline(self, runs: dict[str, Run]) -> list[Comparison]:
        """This check's runs against ``--baseline``'s, paired (none without one), recorded in ``check.json``."""
        baseline = self.prepared.baseline
        if baseline is None:
            return []
        against = baseline_comparisons(baseline, runs)
        self.record.baseline = str(baseline.path)
        self.record.against_baseline = baseline_lines(against, self.prepared.thresholds)
        return against


def run_prepared(prepared: Prepared, *, say: Say = lambda line: None) -> CheckResult:
    """Run every planned lens (``plan`` first), each through the one runner with the check's context, then write
    the paragraph, the gate and the card. The folder is the check's output, claimed by the runner already."""
    plans = prepared.plans or plan(prepared)
    runner = _Runner(prepared, say)
    with publish.OutputClaim(prepared.out, kind=CHECK_KIND):  # the runner's claim, shared (taken already)
        created = _start_folder(prepared.out)
        try:
            for item, line in zip(prepared.chosen, plans, strict=True):
                runner.one(item, line)
            gate = runner.finish()
        except BaseException:
            if created:  # failed before any lens finished (a dead --live endpoint): no stray folder
                discard_if_unused(prepared.out)
            raise
    return CheckResult(prepared.out, prepared.config.budget, runner.record, runner.outcomes, gate, plans)


def _compared(runs: dict[str, Run], against: Sequence[Comparison]) -> list[Comparison]:
    """What the card's comparison section shows: the models of each run against each other, then the baseline."""
    between = [c for run in runs.values() if len(run.models) > 1 for c in compare_runs([run])]
    return [*between, *against]


def paragraphs(summaries: dict[str, Summary]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Model key -> its name, and -> its sentences from every lens in check order."""
    keys = list(dict.fromkeys(key for summary in summaries.values() for key in summary.models))
    names = {key: next((s.names[key] for s in summaries.values() if key in s.names), key) for key in keys}
    sentences = {
        key: [text for lens, summary in summaries.items() for text in _words(lens, summary, key)] for key in keys
    }
    return names, sentences


def _words(lens: str, summary: Summary, key: str) -> list[str]:
    """The lens's sentences about ``key`` (its card's ``words``); a plug-in whose words fail says nothing."""
    cls = lens_class(lens)
    try:
        with blame(cls, "failed in its card's words()"):
            return card_of(cls).sentences(summary, key)
    except PluginError:
        return []


__all__ = [
    "CheckResult",
    "LensOutcome",
    "Prepared",
    "default_check_out",
    "plan",
    "prepare",
    "run_prepared",
]
