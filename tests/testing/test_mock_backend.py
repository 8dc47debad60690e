"""chronoprobe.testing.MockBackend and the ``mock:`` model specs."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.cli.main import app, main
from chronoprobe.cli.tool_command import lens_group
from chronoprobe.errors import CapabilityError, ConfigError
from chronoprobe.lenses.conflicts.lens import ConflictsLens
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.lenses.recency.lens import RecencyLens
from chronoprobe.models.base import Capability, DecodingParams, Prompt, require
from chronoprobe.models.registry import BackendOptions, load_backend, parse_model_spec
from chronoprobe.testing import MockBackend, MockPrompt, MockReply, register_mock, registered_mocks, unregister_mock
from chronoprobe.testing.mock import EOS_ID, token_id

conflicts_app = lens_group(ConflictsLens)
outdated_app = lens_group(OutdatedLens)
recency_app = lens_group(RecencyLens)
QUESTION = Prompt.chat("What is the capital of France?", system="Be brief.", fallback_text="The capital of France is")


def test_info_is_marked_as_a_mock_and_rendering_follows_the_chat_template_setting():
    seen: list[MockPrompt] = []

    def handler(prompt: MockPrompt, params: DecodingParams) -> str:
        seen.append(prompt)
        return "Paris"

    chat = MockBackend(handler, name="capitals")
    info = chat.info
    assert (info.spec, info.backend, info.model_id, info.revision) == ("mock:capitals", "mock", "mock:capitals", "mock")
    assert "no model" in info.extra["mock"] and info.extra["handler"].endswith("handler")
    [generation] = chat.generate([QUESTION], DecodingParams())
    assert generation.rendered_prompt == (
        "<|system|>\nBe brief.\n<|user|>\nWhat is the capital of France?\n<|assistant|>\n"
    )
    assert seen[0] == generation.rendered_prompt and seen[0].prompt is QUESTION
    assert seen[0].request == "What is the capital of France?"
    bare = MockBackend(handler, chat_template=False)
    assert bare.render(QUESTION) == "The capital of France is"
    assert bare.render(Prompt(text="Paris is", answer_prefix=" the")) == "Paris is the"
    assert not bare.info.chat_template and bare.info.spec == "mock:mock"


def test_tokens_logprobs_and_distributions_are_derived_deterministically():
    backend = MockBackend(lambda p, params: "The Eiffel Tower", vocab_size=16, token_prob=0.8)
    params = DecodingParams(token_logprobs=True, first_token_prob=True, mean_distribution=True)
    sample = backend.generate([QUESTION], params)[0].samples[0]
    assert sample.text == "The Eiffel Tower"
    assert sample.tokens == ["The", " Eiffel", " Tower"]
    assert sample.token_ids == [token_id(t, 16) for t in sample.tokens] and all(0 < i < 16 for i in sample.token_ids)
    assert sample.token_logprobs == pytest.approx([math.log(0.8)] * 3)
    assert sample.first_token_prob == pytest.approx(0.8)
    # four positions (three tokens and end-of-sequence), each 0.8 on its own id and 0.2 / 15 elsewhere
    expected = np.full(16, 0.0)
    for index in [*sample.token_ids, EOS_ID]:
        row = np.full(16, 0.2 / 15)
        row[index] = 0.8
        expected += row / 4
    assert sample.mean_distribution is not None and sample.mean_distribution.shape == (16,)
    assert np.allclose(sample.mean_distribution, expected, atol=1e-6)
    assert sample.mean_distribution.sum() == pytest.approx(1.0, abs=1e-5)
    again = MockBackend(lambda p, params: "The Eiffel Tower", vocab_size=16, token_prob=0.8)
    assert np.array_equal(again.generate([QUESTION], params)[0].samples[0].mean_distribution, sample.mean_distribution)
    other = MockBackend(lambda p, params: "Big Ben", vocab_size=16, token_prob=0.8).generate([QUESTION], params)
    assert not np.allclose(other[0].samples[0].mean_distribution, sample.mean_distribution)
    plain = backend.generate([QUESTION], DecodingParams())[0].samples[0]
    assert plain.token_logprobs is None and plain.mean_distribution is None and plain.first_token_prob is None


def test_replies_can_fix_every_detail_and_give_one_answer_per_sample():
    def handler(prompt: MockPrompt, params: DecodingParams) -> list[MockReply]:
        return [
            MockReply("Lyon", logprobs=[-0.5], distribution=[0.25, 0.75]),
            MockReply(" Paris, France", tokens=[" Par", "is", ",", " France"], prob=0.5),
        ][: params.n]

    backend = MockBackend(handler)
    params = DecodingParams(n=2, temperature=1.0, token_logprobs=True, mean_distribution=True)
    first, second = backend.generate([QUESTION], params)[0].samples
    assert (first.text, first.token_logprobs, first.mean_distribution.tolist()) == ("Lyon", [-0.5], [0.25, 0.75])
    assert second.tokens == [" Par", "is", ",", " France"]
    assert second.token_logprobs == pytest.approx([math.log(0.5)] * 4)
    with pytest.raises(ValueError, match="returned 2 answers for n=3"):
        backend.generate([QUESTION], params.model_copy(update={"n": 3}))
    with pytest.raises(ValueError, match="do not join"):
        MockBackend(lambda p, params: MockReply("ab", tokens=["a"])).generate([QUESTION], DecodingParams())


def test_stop_strings_and_the_token_budget_cut_the_answer():
    backend = MockBackend(lambda p, params: "one two three\nQuestion: four five")
    cut = backend.generate([QUESTION], DecodingParams(stop=("\nQuestion:",)))[0].samples[0]
    assert (cut.text, cut.finish_reason) == ("one two three", "stop")
    short = backend.generate([QUESTION], DecodingParams(max_new_tokens=2, token_logprobs=True))[0].samples[0]
    assert (short.text, short.finish_reason, len(short.token_logprobs or [])) == ("one two", "length", 2)
    mid_word = MockBackend(lambda p, params: "Paris.\nMore").generate([QUESTION], DecodingParams(stop=(".",)))
    assert mid_word[0].samples[0].text == "Paris" and mid_word[0].samples[0].tokens == ["Paris"]


def test_capabilities_can_be_restricted_and_are_enforced():
    text_only = MockBackend(lambda p, params: "x", capabilities={Capability.GENERATE})
    with pytest.raises(CapabilityError) as refused:
        require(text_only, DecodingParams(mean_distribution=True, n=3), purpose="coherent persuasion")
    message = str(refused.value)
    assert message.startswith("model mock:mock: coherent persuasion needs mean_distribution, sample_n")
    assert "the mock backend does not provide" in message and "\n" not in message
    with pytest.raises(CapabilityError, match="token_logprobs"):
        text_only.generate([QUESTION], DecodingParams(token_logprobs=True))  # a request beyond them fails too
    assert text_only.batches == []
    require(
        MockBackend(lambda p, params: "x"),
        DecodingParams(n=2, token_logprobs=True, mean_distribution=True, first_token_prob=True),
        purpose="everything",
    )


def test_goes_through_the_cache_like_any_backend(tmp_path: Path):
    backend = MockBackend(lambda p, params: p.request[::-1], batch_size=2)
    model = CachedModel(backend, CallCache(tmp_path / "c.sqlite"))
    prompts = [Prompt(text=t) for t in ("ab", "cd", "ef")]
    first = model.generate(prompts, DecodingParams(mean_distribution=True))
    assert [g.text for g in first] == ["ba", "dc", "fe"]
    assert backend.batches == [["ab", "cd"], ["ef"]] and backend.calls == 3
    second = CachedModel(MockBackend(lambda p, params: "changed"), CallCache(tmp_path / "c.sqlite"))
    again = second.generate(prompts, DecodingParams(mean_distribution=True))
    assert [g.text for g in again] == ["ba", "dc", "fe"] and second.calls_made == 0  # keyed by the mock's name
    assert np.array_equal(again[2].samples[0].mean_distribution, first[2].samples[0].mean_distribution)


def test_mock_specs_echo_constant_and_registered_names():
    assert parse_model_spec("mock:constant=Paris").model_dump() == {
        "raw": "mock:constant=Paris",
        "kind": "mock",
        "target": "constant=Paris",
        "revision": "mock",
        "base_url": None,
        "adapter": None,
        "adapter_revision": "main",
    }
    echo = load_backend("mock:echo")
    [generation] = echo.generate([Prompt.chat("Line one\nSay it back: hello there\n")], DecodingParams())
    assert generation.text == "Say it back: hello there"
    constant = load_backend("mock:constant=Sergio Mattarella", BackendOptions(chat_template=False, batch_size=3))
    assert isinstance(constant, MockBackend)
    assert constant.info.spec == "mock:constant=Sergio Mattarella" and constant.info.batch_size == 3
    assert not constant.info.chat_template
    assert constant.generate([QUESTION], DecodingParams())[0].text == "Sergio Mattarella"
    assert load_backend("mock:constant=").generate([QUESTION], DecodingParams())[0].text == ""

    register_mock("shouty", lambda p, params: p.request.upper(), capabilities={Capability.GENERATE})
    try:
        assert "shouty" in registered_mocks()
        shouty = load_backend("mock:shouty")
        assert shouty.generate([Prompt(text="hi")], DecodingParams())[0].text == "HI"
        assert shouty.capabilities == frozenset({Capability.GENERATE}) and shouty.info.spec == "mock:shouty"
    finally:
        unregister_mock("shouty")
    with pytest.raises(ConfigError, match=r"model spec 'mock:shouty': no mock named 'shouty'; known: echo"):
        load_backend("mock:shouty")
    for bad in ("echo", "constant", "has space", ""):
        with pytest.raises(ConfigError):
            register_mock(bad, lambda p, params: "")
    with pytest.raises(ConfigError, match="unknown options"):
        register_mock("fine", lambda p, params: "", temperature=0.3)


@pytest.mark.e2e
def test_cli_lists_mock_specs_and_refuses_an_unknown_mock_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    listed = CliRunner().invoke(app, ["models"])
    assert listed.exit_code == 0 and "mock:constant=<text>" in listed.output
    for lens_app, command in ((outdated_app, "run"), (conflicts_app, "run"), (recency_app, "eval")):
        helped = CliRunner().invoke(lens_app, [command, "--help"])
        assert "mock:constant=<text>" in " ".join(helped.output.replace("│", " ").split()), command
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "chronoprobe",
            "outdated",
            "run",
            "--model",
            "mock:nosuch",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--cache",
            str(tmp_path / "c.sqlite"),
        ],
    )
    with pytest.raises(SystemExit) as stopped:
        main()
    printed = capsys.readouterr().err
    assert stopped.value.code == 2, printed
    assert printed.strip().count("\n") == 0 and "model spec 'mock:nosuch': no mock named 'nosuch'" in printed
