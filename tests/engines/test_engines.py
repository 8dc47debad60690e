"""``--engine`` parsing and the local engine: no Ray needed."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.engines import Engine, LocalEngine, ModelSource, parse_engine
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt
from chronoprobe.testing import MockBackend, MockPrompt


@pytest.mark.parametrize("raw", ["ray:", "ray:host", "ray:host:99999", "ray:a b:1", "spark", "ray:host:0"])
def test_a_bad_engine_is_one_config_error(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_engine(raw)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"--engine {raw!r}")


def test_local_is_the_default() -> None:
    assert isinstance(parse_engine(None), LocalEngine) and isinstance(parse_engine("local"), LocalEngine)


def test_ray_missing_is_one_line_before_anything_loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ConfigError, match=r"Ray is not installed: pip install 'chronoprobe\[ray\]'"):
        cp.run("outdated", models="mock:echo", limit=1, out=tmp_path / "run", cache=tmp_path / "c.sqlite", engine="ray")
    assert not (tmp_path / "c.sqlite").exists()  # refused before the cache (and any model) was opened


class ReversedEngine(Engine):
    """A remote-style engine in this process: batches come back last first."""

    label = "reversed"
    local = False

    def run(
        self, backend: Backend, source: ModelSource | None, batches: Sequence[Sequence[Prompt]], params: DecodingParams
    ) -> Iterator[tuple[int, list[Generation]]]:
        for position in reversed(range(len(batches))):
            yield position, backend.generate(batches[position], params)


def _echo(prompt: MockPrompt, params: DecodingParams) -> str:
    return f"{prompt.request} #{params.seed}"


@pytest.mark.parametrize("engine", [LocalEngine(), ReversedEngine()], ids=["local", "out-of-order"])
def test_missed_batches_land_in_place_and_a_repeated_batch_is_read_back(engine: Engine, tmp_path: Path) -> None:
    backend = MockBackend(_echo, name="order", batch_size=2)
    model = CachedModel(backend, CallCache(tmp_path / "c.sqlite"), engine=engine)
    asked = ["a", "b", "c", "d", "a", "b", "e"]
    params = DecodingParams(temperature=0.7, n=2, seed=3)
    ticks: list[int] = []
    got = model.generate([Prompt(text=t) for t in asked], params, progress=ticks.append)
    assert [g.text for g in got] == [f"{t} #3" for t in asked]
    assert backend.batches == [["a", "b"], ["c", "d"], ["e"]] or sorted(backend.batches) == [
        ["a", "b"],
        ["c", "d"],
        ["e"],
    ]
    assert model.calls_made == 5 and sum(ticks) == len(asked)  # the second "a", "b" batch came from the cache


def test_edited_weights_never_reach_a_remote_engine(tmp_path: Path) -> None:
    backend = MockBackend(_echo, name="edited")
    backend.info.edit = "rome:abc"
    model = CachedModel(backend, CallCache(tmp_path / "c.sqlite"), engine=ReversedEngine())
    with pytest.raises(ConfigError, match="edited weights live in this process only; use --engine local"):
        model.generate([Prompt(text="a")], DecodingParams())
    assert backend.batches == []
