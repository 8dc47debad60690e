"""The models ``./setup.sh`` prepared, lent to a private home (the suite's, a wheel test's) without writing them.

Tests import it by file name: a module named ``conftest`` is ambiguous once several test folders have one.
"""

from __future__ import annotations

import shutil
from pathlib import Path


def link_prepared_models(user_models: Path, private_models: Path) -> None:
    """Let the private home read the models ``./setup.sh`` prepared, without writing the user's copy.

    Each converted model folder and assembled GGUF is a symlink (the loaders only read a
    prepared one); the hash index is copied, so a new entry lands in the private home.
    """
    private_models.mkdir(parents=True, exist_ok=True)
    if not user_models.is_dir():
        return  # nothing prepared: a test that needs a model converts it into the private home
    for entry in user_models.iterdir():
        if entry.name == "assembled":
            (private_models / "assembled").mkdir(exist_ok=True)
            for gguf in entry.iterdir():
                (private_models / "assembled" / gguf.name).symlink_to(gguf)
        elif entry.is_dir() and (entry / "config.json").is_file():
            (private_models / entry.name).symlink_to(entry)
        elif entry.is_file():
            shutil.copy2(entry, private_models / entry.name)
