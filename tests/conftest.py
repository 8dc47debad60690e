"""Shared fixtures: the real embedded tiny model and the shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


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
