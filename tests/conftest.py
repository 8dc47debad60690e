"""Shared fixtures: a private CHRONOPROBE_HOME, the real embedded tiny model and the shared data folder."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from chronoprobe import paths
from prepared_models import link_prepared_models
from tiers import add_tier_option, left_out_module, select_tiers, tier_summary, unit_tier_guard

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test (and every CLI it starts) writes into a session folder, never the user's CHRONOPROBE_HOME."""
    user_models = paths.home_dir() / "models"
    home = tmp_path_factory.mktemp("chronoprobe-home")
    link_prepared_models(user_models, home / "models")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHRONOPROBE_HOME", str(home))
        yield home


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def smollm2():
    """The embedded SmolLM2-135M-Instruct, loaded once per test session."""
    from chronoprobe.models.registry import BackendOptions, load_backend

    return load_backend("smollm2", BackendOptions(batch_size=4))


def pytest_addoption(parser: pytest.Parser) -> None:
    add_tier_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    """The CLI's consoles made before any test module or test sets COLUMNS: a rich Console made while COLUMNS is
    set keeps that width for good, and every later test in the process would read lines wrapped to it. An xdist
    worker starts with COLUMNS=80, which a serial run does not have: dropped, so both runs see the same."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.pop("COLUMNS", None)
    import chronoprobe.cli.main  # noqa: F401  # deferred: after COLUMNS is settled (its consoles read it once)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if left_out_module(collection_path, config) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select_tiers(config, items)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    line = tier_summary(config)
    if line:
        terminalreporter.write_line(line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    with unit_tier_guard(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    with unit_tier_guard(item):
        return (yield)
