"""``--engine`` parsing and the local engine: no Ray needed."""

from __future__ import annotations

import importlib.util

import pytest

import chronoprobe as cp
from chronoprobe.engines import LocalEngine, parse_engine
from chronoprobe.errors import ConfigError


@pytest.mark.parametrize("raw", ["ray:", "ray:host", "ray:host:99999", "ray:a b:1", "spark", "ray:host:0"])
def test_a_bad_engine_is_one_config_error(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_engine(raw)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"--engine {raw!r}")


def test_local_is_the_default() -> None:
    assert isinstance(parse_engine(None), LocalEngine) and isinstance(parse_engine("local"), LocalEngine)


def test_ray_missing_is_one_line_before_anything_loads(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ConfigError, match=r"Ray is not installed: pip install 'chronoprobe\[ray\]'"):
        cp.run("outdated", model="mock:echo", limit=1, out=tmp_path / "run", cache=tmp_path / "c.sqlite", engine="ray")
    assert not (tmp_path / "c.sqlite").exists()  # refused before the cache (and any model) was opened
