"""Which lenses a check runs and with which config: each lens's declared size for the budget,
the check's own options (``--live`` ...) and the folders of the lenses it needs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chronoprobe.cache import stable_hash
from chronoprobe.contract.check_part import Budget, CheckContext, check_part
from chronoprobe.contract.lens import Lens, lens_class, lens_names
from chronoprobe.contract.lens_run import LensRun, lens_tool
from chronoprobe.errors import ConfigError, PluginError
from chronoprobe.models.registry import BackendOptions, ModelRequest, strip_url_credentials
from chronoprobe.plugins import blame
from chronoprobe.version import __version__


@dataclass
class Chosen:
    """One registered lens as the check sees it: run it (``lens`` set) or skip it (``skipped`` says why)."""

    name: str
    run: LensRun | None = None
    """The lens's run in this check: its folder ``<check>/<lens>``, its size for the budget."""
    skipped: str | None = None
    fingerprint: str = ""
    """What the lens's run depends on (config, models, backend options, version): an earlier run with
    the same fingerprint in the check folder is kept."""

    @property
    def lens(self) -> Lens[Any] | None:
        return self.run.lens if self.run is not None else None

    def skip(self, reason: str) -> None:
        self.run, self.skipped = None, reason


def selection(wanted: Sequence[str]) -> list[str]:
    """The lenses to consider, in registry order: ``wanted`` and the lenses they need, or all of them."""
    known = lens_names()
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ConfigError(f"--lens {unknown[0]}", f"is not a lens; known: {', '.join(known)}")
    if not wanted:
        return known
    chosen = set(wanted)
    pending = list(wanted)
    while pending:
        try:
            needs = check_part(lens_class(pending.pop())).needs
        except Exception:  # a plug-in that cannot be imported: skipped (and named) below
            continue
        for need in needs:
            if need not in chosen:
                chosen.add(need)
                pending.append(need)
    return [name for name in known if name in chosen]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def config_json(lens: Lens[Any]) -> dict[str, Any]:
    """The config as the run log records it (a key in a model URL removed)."""
    loaded: dict[str, Any] = json.loads(strip_url_credentials(lens.config.model_dump_json()))
    return loaded


def _config(cls: type[Lens[Any]], budget: Budget, context: CheckContext, out: Path) -> BaseModel:
    """The config of the lens's run in the check: its size, its options from the check, the check's models, and
    its folder in the check's."""
    part = check_part(cls)
    return sized_config(cls, {**part.sizes[budget], **part.options(context)}, context, out, budget)


def sized_config(
    cls: type[Lens[Any]], options: dict[str, Any], context: CheckContext, out: Path, budget: str
) -> BaseModel:
    """The config of the lens's run in the check with these options (its size and its options from the check), the
    check's models and its folder in the check's; a size the lens refuses is one line naming the budget."""
    try:
        return lens_tool(cls).config_type(**options, models=context.models, out=out / cls.name)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(
            f"check: the {cls.name} lens's {budget} size" + (f" ({field})" if field else ""), message
        ) from None


def fingerprint_of(name: str, lens: Lens[Any], specs: Sequence[ModelRequest], options: BackendOptions) -> str:
    """What a lens's run in a check depends on (config, models, backend options, version)."""
    return stable_hash(
        {
            "lens": name,
            "config": config_json(lens),
            "models": [str(s) for s in specs],
            "backend": options.model_dump(mode="json"),
            "version": __version__,
        }
    )


def choose(
    names: Sequence[str],
    context: CheckContext,
    out: Path,
    specs: Sequence[ModelRequest],
    options: BackendOptions,
) -> list[Chosen]:
    """Each lens of ``names``: its run built from its size for ``context.budget``, or skipped with the reason."""
    chosen: list[Chosen] = []
    running: set[str] = set()
    for name in names:
        try:
            cls = lens_class(name)
        except Exception as exc:  # a plug-in that does not import fails only its own line
            chosen.append(Chosen(name, skipped=f"cannot be loaded ({_first_line(exc)})"))
            continue
        part = check_part(cls)
        if not part.sizes:
            chosen.append(Chosen(name, skipped="it declares no check sizes (CheckPart.sizes)"))
            continue
        if context.budget not in part.sizes:
            chosen.append(Chosen(name, skipped=f"it declares no {context.budget} size"))
            continue
        missing = [need for need in part.needs if need not in running]
        if missing:
            chosen.append(
                Chosen(name, skipped=f"it needs the {', '.join(missing)} lens, which this check does not run")
            )
            continue
        mine = CheckContext(context.check, runs={need: out / need for need in part.needs})
        try:
            with blame(cls, "failed in its check part's options()"):
                run = lens_tool(cls)(_config(cls, context.budget, mine, out))
        except PluginError as exc:  # a plug-in's failure is its own line, not the whole check's
            chosen.append(Chosen(name, skipped=f"the plug-in {exc.problem}"))
            continue
        chosen.append(Chosen(name, run=run, fingerprint=fingerprint_of(name, run.lens, specs, options)))
        running.add(name)
    return chosen
