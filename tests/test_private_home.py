"""Tests never write into the user's CHRONOPROBE_HOME (tests/conftest.py), yet read the models ./setup.sh prepared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chronoprobe import paths


def test_the_library_writes_into_a_session_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    # the call cache, MEMIT's statistics, snapshots and converted models all live under paths.home()
    home = paths.home()
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    assert os.environ["CHRONOPROBE_HOME"] == str(home)  # so every CLI a test starts inherits it
    assert paths.default_call_cache().is_relative_to(home)
    assert paths.model_cache_dir().is_relative_to(home)


def test_prepared_models_are_links_and_new_files_stay_private(private_home: Path) -> None:
    models = private_home / "models"
    for entry in models.rglob("*"):
        if entry.is_symlink():  # a converted model or an assembled GGUF, read in place
            assert not entry.resolve().is_relative_to(private_home)
    index = models / "gguf-index.json"
    if index.exists():
        assert not index.is_symlink()  # a new hash is written into the private copy
