"""The day a chat template is told: detected at load, the audit's as-of date by default, recorded, and the
same prompts (and a rerun served whole from the call cache) on any day the machine's clock shows."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.errors import ConfigError
from chronoprobe.models import chat_dates
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.chat_dates import UNDATED_AS_OF, ChatDates, check_template_date, date_markers, told_text
from chronoprobe.models.preview import load_key
from chronoprobe.models.registry import BackendOptions
from chronoprobe.testing.dated_template import LLAMA3_SHAPED_TEMPLATE
from chronoprobe.testing.mock import MockBackend, MockPrompt, register_mock, unregister_mock
from cli_driver import run_main, run_ok

ASSETS = Path(__file__).resolve().parents[1] / "assets"
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
ALL_MARKERS = ("date_string", "strftime_now", "Today Date", "Cutting Knowledge Date")


def freeze(monkeypatch: pytest.MonkeyPatch, day: dt.date) -> None:
    """The machine's clock reads ``day``, for our renderer and for transformers' ``strftime_now``."""
    moment = dt.datetime(day.year, day.month, day.day, 9, 30)
    monkeypatch.setattr(chat_dates, "machine_now", lambda: moment)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("as-of", "as-of"), ("template", "template"), ("2024-02-29", "2024-02-29"), (" 2020-01-05 ", "2020-01-05")],
)
def test_the_option_is_as_of_template_or_a_date(given: str, expected: str) -> None:
    assert check_template_date(given) == expected


@pytest.mark.parametrize("given", ["today", "2023-02-30", "2023-12", "Dec 2023", ""])
def test_anything_else_is_refused_in_one_line(given: str) -> None:
    with pytest.raises(ConfigError, match=r"template_date: .* is not as-of, template or a date YYYY-MM-DD"):
        BackendOptions(template_date=given)


@pytest.mark.parametrize(
    ("template", "found"),
    [
        (LLAMA3_SHAPED_TEMPLATE, ALL_MARKERS),
        (SMOLLM2_TEMPLATE, ()),
        (
            "{{ 'Cutting Knowledge Date: December 2023\\nToday Date: 26 Jul 2024' }}",
            ("Today Date", "Cutting Knowledge Date"),
        ),
        ("{{ strftime_now('%Y-%m-%d') }}", ("strftime_now",)),
        ({"default": SMOLLM2_TEMPLATE, "tool_use": "{{ date_string }}"}, ("date_string",)),
        (None, ()),
    ],
)
def test_what_in_a_template_takes_a_date_is_found(template: object, found: tuple[str, ...]) -> None:
    assert date_markers(chat_dates.template_source(template)) == found


def test_the_mock_is_told_the_fixed_day_by_default_and_the_day_given_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    freeze(monkeypatch, dt.date(2031, 5, 6))
    prompt = Prompt.chat("Who?", fallback_text="Who")
    rendered = {
        choice: MockBackend(lambda p, q: "x", template=LLAMA3_SHAPED_TEMPLATE, template_date=choice).render(prompt)
        for choice in ("as-of", "2021-03-04", "template")
    }
    assert "Today Date: 18 Dec 2023\n" in rendered["as-of"]  # UNDATED_AS_OF, never the clock
    assert "Today Date: 04 Mar 2021\n" in rendered["2021-03-04"]
    assert "Today Date: 06 May 2031\n" in rendered["template"]  # the template's own: the machine's clock
    told = MockBackend(lambda p, q: "x", template=LLAMA3_SHAPED_TEMPLATE).info
    assert (told.template_date, told.template_takes_date) == ("2023-12-18", list(ALL_MARKERS))
    bare = MockBackend(lambda p, q: "x", template=LLAMA3_SHAPED_TEMPLATE, chat_template=False)
    assert bare.render(prompt) == "Who" and bare.info.template_date is None  # no template, no date


def test_strftime_now_formats_the_day_told_whatever_the_format() -> None:
    variables = ChatDates(told="2022-07-09", markers=("strftime_now",)).variables()
    assert variables["date_string"] == "09 Jul 2022"
    assert variables["strftime_now"]("%Y-%m-%d %H:%M") == "2022-07-09 00:00"
    assert ChatDates(told="template", markers=()).variables() == {}


def test_options_take_the_lens_as_of_date_unless_another_day_was_chosen() -> None:
    as_of = dt.date(2020, 5, 1)
    assert BackendOptions().told(as_of).chosen == {"template_date": "2020-05-01"}
    assert BackendOptions().told(None).chosen == {"template_date": UNDATED_AS_OF.isoformat()}
    assert BackendOptions(template_date="2019-01-02").told(as_of).chosen == {"template_date": "2019-01-02"}
    assert BackendOptions(template_date="template").told(as_of).chosen == {"template_date": "template"}


@pytest.mark.e2e
def test_the_load_key_holds_the_machine_day_only_when_the_template_keeps_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = {}
    for day in (dt.date(2030, 1, 1), dt.date(2030, 1, 2)):
        freeze(monkeypatch, day)
        keys[day] = (
            load_key("smollm2", BackendOptions()),
            load_key("smollm2", BackendOptions(template_date="template")),
        )
    (default_1, own_1), (default_2, own_2) = keys.values()
    if default_1 is None:
        pytest.skip("the embedded SmolLM2 package is not installed")
    assert default_1 == default_2 and own_1 != own_2
    assert load_key("smollm2", BackendOptions(template_date=UNDATED_AS_OF.isoformat())) == default_1  # one day, one key


@pytest.mark.parametrize(
    ("told", "markers", "chat", "backend", "words"),
    [
        ("2023-12-18", list(ALL_MARKERS), True, "hf", "told 18 Dec 2023 (2023-12-18; it reads date_string"),
        ("template", ["strftime_now"], True, "llamacpp", "the prompt changes with the day"),
        ("2023-12-18", [], True, "hf", "takes no date"),
        (None, [], False, "hf", "no chat template applied"),
        (None, ["Today Date"], True, "hf", "no chat template applied"),
        ("2023-12-18", ["Today Date"], True, "vllm", "states a date of its own (Today Date), which no option changes"),
        (None, None, True, "openai", "the server applies its own chat template, unknown here"),
        (None, None, False, "openai", "no chat template applied"),
        (None, None, True, "lm-eval", "lm-eval applied the chat template itself: a template that reads the date got"),
        (None, None, True, "hf", "not recorded"),
    ],
)
def test_what_a_template_was_told_reads_in_words(
    told: str | None, markers: list[str] | None, chat: bool, backend: str, words: str
) -> None:
    assert words in told_text(told, markers, chat_template=chat, backend=backend)


SEEN: list[str] = []
"""Every prompt the ``mock:dated`` stand-in was asked, as rendered."""


def _answer(prompt: MockPrompt, params: DecodingParams) -> str:
    SEEN.append(str(prompt))
    return "Sergio Mattarella"


@pytest.fixture
def dated_mock() -> Iterator[str]:
    SEEN.clear()
    register_mock("dated", _answer, template=LLAMA3_SHAPED_TEMPLATE)
    yield "mock:dated"
    unregister_mock("dated")


def _outdated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], out: Path, cache: Path, *extra: str
) -> dict[str, object]:
    run_ok(monkeypatch, capsys, "outdated", "run", "--model", "mock:dated", "--limit", "2", "--cache", str(cache),
           "--out", str(out), *extra)  # fmt: skip
    run: dict[str, object] = json.loads((out / "run.json").read_text())
    return run


def _prompts(out: Path) -> list[str]:
    return [json.loads(line)["rendered_prompt"] for line in (out / "items.jsonl").read_text().splitlines()]


@pytest.mark.e2e
def test_a_rerun_a_day_later_asks_the_same_prompts_and_is_served_whole_from_the_cache(
    dated_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "calls.sqlite"
    freeze(monkeypatch, dt.date(2030, 3, 1))
    first = _outdated(monkeypatch, capsys, tmp_path / "day1", cache)
    freeze(monkeypatch, dt.date(2030, 3, 2))
    second = _outdated(monkeypatch, capsys, tmp_path / "day2", cache)
    assert _prompts(tmp_path / "day1") == _prompts(tmp_path / "day2")
    assert all("Today Date: 18 Dec 2023\n" in p for p in _prompts(tmp_path / "day1"))  # the shipped snapshot's day
    served = second["provenance"]["answers"]["mock:dated"]  # type: ignore[index]
    assert served["answers"] == served["from_cache"] > 0
    assert second["provenance"]["extra"]["model_calls_made"] == {"mock:dated": 0}  # type: ignore[index]
    [model] = first["provenance"]["models"]  # type: ignore[index]
    assert model["template_date"] == "2023-12-18" and model["template_takes_date"] == list(ALL_MARKERS)
    report = (tmp_path / "day2" / "report.md").read_text()
    assert "told 18 Dec 2023 (2023-12-18; it reads date_string, strftime_now" in report


@pytest.mark.e2e
def test_the_outdated_lens_tells_its_as_of_date_and_a_chosen_day_overrides_it(
    dated_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "calls.sqlite"
    _outdated(monkeypatch, capsys, tmp_path / "as-of", cache, "--as-of", "2022-06-01")
    assert all("Today Date: 01 Jun 2022\n" in p for p in _prompts(tmp_path / "as-of"))
    chosen = _outdated(monkeypatch, capsys, tmp_path / "chosen", cache, "--as-of", "2022-06-01", "--template-date",
                       "2019-11-30")  # fmt: skip
    assert all("Today Date: 30 Nov 2019\n" in p for p in _prompts(tmp_path / "chosen"))
    assert chosen["provenance"]["models"][0]["template_date"] == "2019-11-30"  # type: ignore[index]


@pytest.mark.e2e
def test_under_template_the_prompt_follows_the_machine_clock_and_the_report_says_so(
    dated_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "calls.sqlite"
    freeze(monkeypatch, dt.date(2030, 3, 1))
    _outdated(monkeypatch, capsys, tmp_path / "day1", cache, "--template-date", "template")
    freeze(monkeypatch, dt.date(2030, 3, 2))
    second = _outdated(monkeypatch, capsys, tmp_path / "day2", cache, "--template-date", "template")
    assert all("Today Date: 01 Mar 2030\n" in p for p in _prompts(tmp_path / "day1"))
    assert all("Today Date: 02 Mar 2030\n" in p for p in _prompts(tmp_path / "day2"))
    assert second["provenance"]["answers"]["mock:dated"]["from_cache"] == 0  # type: ignore[index]
    report = (tmp_path / "day2" / "report.md").read_text()
    assert "change with the machine's date" in report and "the prompt changes with the day" in report


@pytest.mark.e2e
def test_a_lens_without_an_as_of_date_tells_a_fixed_day_whatever_the_clock(
    dated_mock: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    freeze(monkeypatch, dt.date(2030, 3, 1))
    run = cp.run("recency", models=dated_mock, data=str(ASSETS / "recency_sample.json"), sample=2, out=tmp_path / "r",
                 cache=tmp_path / "c.sqlite", progress=False)  # fmt: skip
    assert [m.template_date for m in run.provenance.models] == [UNDATED_AS_OF.isoformat()]
    assert SEEN and all("Today Date: 18 Dec 2023\n" in prompt for prompt in SEEN)


@pytest.mark.e2e
def test_a_bad_template_date_is_one_line_before_any_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = run_main(monkeypatch, capsys, "outdated", "run", "--template-date", "yesterday", "--out", str(tmp_path / "o"))
    assert ran.code == 2 and "is not as-of, template or a date YYYY-MM-DD" in ran.text
    assert not (tmp_path / "o").exists()
