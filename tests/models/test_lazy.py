"""A local backend loads on the first call the cache cannot answer; until then its last load describes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe.cache import CachedModel, CallCache, model_identity
from chronoprobe.errors import ConfigError
from chronoprobe.models import preview
from chronoprobe.models.base import Backend, Capability, DecodingParams, Prompt
from chronoprobe.models.lazy import LazyBackend, describe, open_backend
from chronoprobe.models.registry import BackendOptions, ModelRequest, parse_model
from chronoprobe.testing import MockBackend, MockPrompt

PROMPTS = [Prompt.chat(f"Who leads country {i}?", fallback_text=f"country {i}") for i in range(5)]


def answer(prompt: MockPrompt, params: DecodingParams) -> str:
    return f"leader of {prompt.request}"


class Loads:
    """A loader that counts its loads; each gives a fresh mock backend with a chat template."""

    def __init__(self, batch_size: int = 2) -> None:
        self.count = 0
        self.batch_size = batch_size

    def __call__(self) -> Backend:
        self.count += 1
        return MockBackend(
            answer,
            name="leader",
            batch_size=self.batch_size,
            capabilities={Capability.GENERATE, Capability.CHAT_TEMPLATE, Capability.TOKEN_LOGPROBS},
        )


def first_run(cache: CallCache, loads: Loads, key: str = "k") -> CachedModel:
    backend = loads()
    model = CachedModel(LazyBackend(key, cache, loads, backend=backend), cache)
    cache.put_load(key, describe(backend))
    model.generate(PROMPTS, DecodingParams())
    return model


def rerun(cache: CallCache, loads: Loads, key: str = "k") -> CachedModel:
    record = cache.get_load(key)
    assert record is not None
    return CachedModel(LazyBackend(key, cache, loads, description=record), cache)


def test_a_rerun_served_by_the_cache_loads_nothing(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "c.sqlite")
    loads = Loads()
    first = first_run(cache, loads)
    expected = first.generate(PROMPTS, DecodingParams())

    again = rerun(cache, loads)
    assert again.info == first.info and again.capabilities == first.capabilities
    served = again.generate(PROMPTS, DecodingParams())
    assert loads.count == 1 and not again.loaded and again.calls_made == 0
    assert [g.rendered_prompt for g in served] == [g.rendered_prompt for g in expected]
    assert [g.text for g in served] == [g.text for g in expected]
    assert (again.tally.answers, again.tally.from_cache) == (5, 5)


def test_the_first_miss_loads_the_backend_once_and_keys_come_from_it(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "c.sqlite")
    loads = Loads()
    first_run(cache, loads)
    again = rerun(cache, loads)
    again.info.name = "shown name"
    new = Prompt.chat("Who leads country 9?", fallback_text="country 9")
    [generation] = again.generate([new], DecodingParams())
    assert loads.count == 2 and again.loaded and again.calls_made == 1
    assert generation.text == "leader of Who leads country 9?" and "<|user|>" in generation.rendered_prompt
    assert again.info.name == "shown name"  # what was set on the description carries over
    again.generate([*PROMPTS, new], DecodingParams())
    assert loads.count == 2 and again.calls_made == 1


def test_anything_else_asked_of_it_loads_it(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "c.sqlite")
    loads = Loads()
    first_run(cache, loads)
    again = rerun(cache, loads)
    assert again.lazy_backend.handler is answer and loads.count == 2  # type: ignore[attr-defined]  # the mock's own
    assert isinstance(rerun(cache, loads).backend, MockBackend) and loads.count == 3


def test_a_load_that_differs_from_the_remembered_one_is_remembered_instead(tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "c.sqlite")
    first_run(cache, Loads(batch_size=2))
    again = rerun(cache, Loads(batch_size=7))
    again.generate([Prompt(text="new")], DecodingParams())
    record = cache.get_load("k")
    assert record is not None and record["info"]["batch_size"] == 7


LEADER = parse_model("mock:leader")


def test_open_backend_loads_the_first_time_and_not_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preview, "load_key", lambda request, options: f"key of {request}")
    cache = CallCache(tmp_path / "c.sqlite")
    loads = Loads()

    def load(request: ModelRequest, options: BackendOptions) -> Backend:
        return loads()

    first = CachedModel(open_backend(LEADER, BackendOptions(), cache, load), cache)
    assert first.loaded and loads.count == 1
    first.generate(PROMPTS, DecodingParams())
    again = CachedModel(open_backend(LEADER, BackendOptions(), cache, load), cache)
    assert not again.loaded and model_identity(again.info) == model_identity(first.info)
    again.generate(PROMPTS, DecodingParams())
    assert loads.count == 1 and not again.loaded


def test_a_remembered_record_it_cannot_read_means_a_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preview, "load_key", lambda raw, options: "k")
    cache = CallCache(tmp_path / "c.sqlite")
    cache.put_load("k", {"info": {"spec": 3}})  # written by some other release in another shape
    loads = Loads()
    backend = open_backend(LEADER, BackendOptions(), cache, lambda request, options: loads())
    assert isinstance(backend, LazyBackend) and backend.loaded and loads.count == 1
    assert cache.get_load("k") == describe(backend.load())


# --- load keys ------------------------------------------------------------------------------------------


@pytest.mark.e2e
def test_load_keys_follow_the_options_and_skip_what_cannot_be_pinned(tmp_path: Path) -> None:
    key = preview.load_key("smollm2", BackendOptions())
    assert key is not None and key == preview.load_key("smollm2", BackendOptions())
    others = {
        preview.load_key("smollm2", BackendOptions(batch_size=8)),
        preview.load_key("smollm2", BackendOptions(chat_template=False)),
        preview.load_key("smollm2", BackendOptions(dtype="bfloat16")),
        preview.load_key("llamacpp:smollm2", BackendOptions()),
        preview.load_key(f"gguf:{tmp_path / 'missing.gguf'}", BackendOptions()),
    }
    assert (
        key not in others and len(others - {None}) == 4 and None in others
    )  # no key for a missing file: it loads, and says so
    for spec in ("mock:echo", "openai:m@http://127.0.0.1:9/v1", "vllm:org/model", "hf:org/model+./adapter"):
        assert preview.load_key(spec, BackendOptions()) is None
    assert preview.load_key("hf:org/never-downloaded", BackendOptions()) is None


@pytest.mark.e2e
def test_a_bad_thread_setting_fails_when_the_key_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_CPU_THREADS", "many")
    with pytest.raises(ConfigError, match="CHRONOPROBE_CPU_THREADS"):
        preview.load_key("smollm2", BackendOptions())


@pytest.mark.e2e
def test_a_load_key_needs_neither_torch_nor_transformers() -> None:
    code = (
        "import sys; from chronoprobe.models.preview import load_key; from chronoprobe.models.registry import "
        "BackendOptions; assert load_key('smollm2', BackendOptions()); print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.replace("'", '"')) == []


# --- another --template-date ----------------------------------------------------------------------------

DATED_TEMPLATE = "{% for m in messages %}{{ m['content'] }} (today: {{ date_string }})\n{% endfor %}"
UNDATED_TEMPLATE = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"


def _open_told(cache: CallCache, day: str, template: str, loads: list[str]) -> CachedModel:
    """``mock:leader`` opened as a local model told ``day``, its load key covering the day as a real one does."""

    def load(request: ModelRequest, options: BackendOptions) -> Backend:
        loads.append(day)
        return MockBackend(answer, name="leader", template=template, template_date=options.value("template_date"))

    return CachedModel(open_backend(LEADER, BackendOptions(template_date=day), cache, load), cache)


@pytest.mark.parametrize(("template", "loaded"), [(UNDATED_TEMPLATE, ["2024-01-01"]), (DATED_TEMPLATE, None)])
def test_another_template_date_loads_only_a_template_that_takes_a_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str, loaded: list[str] | None
) -> None:
    """SmolLM2's template takes no date: every call of ``--template-date 2021-03-04`` was cached under another day,
    yet the model loaded (72.8 s). Now the description remembered under the undated key serves, told the new day;
    a template that takes a date renders other prompts, so that day's answers are not cached and it loads."""
    monkeypatch.setattr(preview, "load_key", lambda request, options: f"key told {options.value('template_date')}")
    monkeypatch.setattr(preview, "undated_key", lambda request, options: "key told no day")
    cache, loads = CallCache(tmp_path / "c.sqlite"), list[str]()
    first = _open_told(cache, "2024-01-01", template, loads)
    first.generate(PROMPTS, DecodingParams())
    again = _open_told(cache, "2021-03-04", template, loads)
    served = again.generate(PROMPTS, DecodingParams())
    if loaded is None:  # told another day, the prompts differ: computed, by a loaded model
        assert loads == ["2024-01-01", "2021-03-04"] and again.tally.computed == len(PROMPTS)
        assert "4 March 2021" in served[0].rendered_prompt or "2021" in served[0].rendered_prompt
        return
    assert loads == loaded and not again.loaded and again.tally.from_cache == len(PROMPTS)
    assert again.info.template_date == "2021-03-04" and first.info.template_date == "2024-01-01"
    assert again.info.template_takes_date == []
    assert [g.text for g in served] == [g.text for g in first.generate(PROMPTS, DecodingParams())]
