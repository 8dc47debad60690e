"""``examples/*.py`` run as a user would run them, on mock models with small limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "tests" / "assets"
EXAMPLES = {
    "outdated.py": (["mock:constant=Sergio Mattarella"], "'up-to-date':", "answers; report:"),
    "recency.py": (["mock:constant=A-Year"], "zero-shot.without.accuracy", "RETRIEVE |"),
    "conflicts.py": (["mock:constant=Paris", str(ASSETS / "dynamicqa_small")], "coherent persuasion", "rows; report:"),
    "editing.py": (["mock:constant=nobody"], "rag-gold.harmonic_mean", "answers; report:"),
}


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in (REPO / "examples").glob("*.py")) == sorted(EXAMPLES)


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs(name: str, tmp_path: Path) -> None:
    args, *expected = EXAMPLES[name]
    env = {
        **os.environ,
        "CHRONOPROBE_HOME": str(tmp_path / "home"),
        "CHRONOPROBE_EXAMPLE_LIMIT": "3",
        "CHRONOPROBE_EXAMPLE_JUDGE": "exact",
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / name), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for text in expected:
        assert text in done.stdout
    assert any((tmp_path / "results").rglob("run.json"))
