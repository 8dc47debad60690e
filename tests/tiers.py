"""The test tiers: ``unit`` (the default run), ``e2e`` and ``slow``, and the guard that keeps ``unit`` honest.

A test's tier is its marker: ``@pytest.mark.slow`` (simulations, long sweeps), ``@pytest.mark.e2e`` (the CLI end
to end, subprocesses, the real tiny models, the harness libraries, a browser; ``gpu`` tests count as e2e), and
unmarked tests are ``unit``. ``pytest`` with no test paths runs the unit tier; naming files or node ids runs every
tier of what was named; ``--tier unit,e2e,slow`` or ``--tier all`` chooses explicitly (CI: ``--tier all``).

A unit test that starts a subprocess, runs the CLI's ``main()`` or a typer runner, or reaches one of the real
embedded models fails with a line saying which marker it needs, so the default run stays fast by construction.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

TIERS = ("unit", "e2e", "slow")


def add_tier_option(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        default=None,
        metavar="TIERS",
        help="comma list of unit, e2e, slow, or 'all' (default: unit; every tier when test paths are named)",
    )


def tier_of(item: pytest.Item) -> str:
    """``slow`` beats ``e2e`` beats ``unit``; a GPU test is an e2e test."""
    if item.get_closest_marker("slow"):
        return "slow"
    if item.get_closest_marker("e2e") or item.get_closest_marker("gpu"):
        return "e2e"
    return "unit"


_MODULE_MARKS = re.compile(r"^pytestmark = (.*)$", re.M)


def module_tier(path: Path) -> str | None:
    """The tier a whole test module declares (``pytestmark = pytest.mark.e2e``), read without importing it."""
    found = _MODULE_MARKS.search(path.read_text(encoding="utf-8"))
    marks = set(re.findall(r"pytest\.mark\.(\w+)", found.group(1))) if found else set()
    if "slow" in marks:
        return "slow"
    return "e2e" if marks & {"e2e", "gpu"} else None


def left_out_module(path: Path, config: pytest.Config) -> bool:
    """A test module whose declared tier this run leaves out is not even imported (its heavy imports cost nothing)."""
    if path.suffix != ".py" or not path.name.startswith("test_"):
        return False
    tier = module_tier(path)
    if tier is None or tier in chosen_tiers(config):
        return False
    left_out = config.stash.setdefault(_LEFT_OUT_FILES, {})
    left_out[tier] = left_out.get(tier, 0) + 1
    return True


def _named_paths(config: pytest.Config) -> bool:
    return config.args_source == pytest.Config.ArgsSource.ARGS


def chosen_tiers(config: pytest.Config) -> set[str]:
    """The tiers this run selects; a bad ``--tier`` is a usage error in one line."""
    raw = config.getoption("--tier")
    if raw is None:
        return set(TIERS) if _named_paths(config) else {"unit"}
    names = {part.strip() for part in str(raw).split(",") if part.strip()}
    if names == {"all"}:
        return set(TIERS)
    unknown = sorted(names - set(TIERS))
    if unknown or not names:
        raise pytest.UsageError(f"--tier {raw}: choose from {', '.join(TIERS)} or all")
    return names


def select_tiers(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the items outside the chosen tiers (``-m`` still filters what is left)."""
    chosen = chosen_tiers(config)
    if chosen == set(TIERS):
        return
    kept = [item for item in items if tier_of(item) in chosen]
    dropped = [item for item in items if tier_of(item) not in chosen]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    config.stash[_LEFT_OUT] = {tier: sum(tier_of(i) == tier for i in dropped) for tier in TIERS if tier not in chosen}


_LEFT_OUT = pytest.StashKey[dict[str, int]]()
_LEFT_OUT_FILES = pytest.StashKey[dict[str, int]]()


def tier_summary(config: pytest.Config) -> str | None:
    """One closing line naming the tiers left out, with how to run them."""
    tests, files = config.stash.get(_LEFT_OUT, {}), config.stash.get(_LEFT_OUT_FILES, {})
    parts = [f"{n} {tier} tests" for tier, n in tests.items() if n]
    parts += [f"{n} {tier} files" for tier, n in files.items() if n]
    return f"tiers not run: {', '.join(parts)} (--tier all runs every tier)" if parts else None


def _refuse(what: str) -> Callable[..., NoReturn]:
    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        pytest.fail(f"a unit test {what}: mark it @pytest.mark.e2e (tests/tiers.py)", pytrace=False)

    return refused


def _patch_if_loaded(patch: pytest.MonkeyPatch, module: str, name: str, what: str) -> None:
    loaded = sys.modules.get(module)
    if loaded is not None and hasattr(loaded, name):
        patch.setattr(loaded, name, _refuse(what))


@contextmanager
def unit_tier_guard(item: pytest.Item) -> Iterator[None]:
    """Around a unit test's setup and call: a subprocess, the CLI's ``main()`` or a real embedded model fails it.

    Its setup is guarded too, so a module or session fixture that a unit test is the first to need counts.
    """
    if tier_of(item) != "unit":
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "__init__", _refuse("started a subprocess"))
        _patch_if_loaded(patch, "chronoprobe.cli.main", "_register", "ran the CLI's main()")
        for name in ("smollm2_gguf", "gemma3_gguf", "minilm_dir"):
            _patch_if_loaded(patch, "chronoprobe.models.embedded", name, "reached a real embedded model")
        _patch_if_loaded(patch, "chronoprobe.judges.embedding", "minilm_dir", "reached the embedded MiniLM")
        runner = sys.modules.get("typer.testing")
        if runner is not None:
            patch.setattr(runner.CliRunner, "invoke", _refuse("ran the CLI through typer's runner"))
        yield
