"""Model spec parsing: valid specs map to the right backend kind, bad ones fail in one line."""

from __future__ import annotations

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import BackendOptions, load_backend, parse_model_spec


@pytest.mark.parametrize(
    ("raw", "kind", "target", "revision", "base_url"),
    [
        ("smollm2", "smollm2", "smollm2", "main", None),
        ("default", "smollm2", "smollm2", "main", None),
        ("  smollm2 ", "smollm2", "smollm2", "main", None),
        ("hf:google/gemma-3-1b-it", "hf", "google/gemma-3-1b-it", "main", None),
        ("hf:Qwen/Qwen2.5-0.5B@a1b2c3", "hf", "Qwen/Qwen2.5-0.5B", "a1b2c3", None),
        ("hf:/models/local-folder", "hf", "/models/local-folder", "main", None),
        ("gguf:/tmp/model.Q4_K_M.gguf", "gguf", "/tmp/model.Q4_K_M.gguf", "main", None),
        ("llamacpp:/tmp/model.Q4_K_M.gguf", "llamacpp", "/tmp/model.Q4_K_M.gguf", "main", None),
        ("openai:gpt-4o-mini@https://api.openai.com/v1", "openai", "gpt-4o-mini", "main", "https://api.openai.com/v1"),
        ("openai:smollm2@http://127.0.0.1:8000/v1/", "openai", "smollm2", "main", "http://127.0.0.1:8000/v1"),
        ("vllm:meta-llama/Llama-3.1-8B@abc123", "vllm", "meta-llama/Llama-3.1-8B", "abc123", None),
    ],
)
def test_valid_specs(raw: str, kind: str, target: str, revision: str, base_url: str | None) -> None:
    spec = parse_model_spec(raw)
    expected = (raw.strip(), kind, target, revision, base_url)  # the canonical spec is trimmed
    assert (spec.raw, spec.kind, spec.target, spec.revision, spec.base_url) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "unknown model spec"),
        ("gpt2", "unknown model spec"),
        ("hf:", "unknown model spec"),
        ("openai:gpt-4o-mini", "expected openai:<model name>@<http(s) base url>"),
        ("openai:@https://api.openai.com/v1", "expected openai:<model name>@<http(s) base url>"),
        ("openai:m@ftp://host/v1", "expected openai:<model name>@<http(s) base url>"),
        ("openai:m@", "expected openai:<model name>@<http(s) base url>"),
        ("llama:model.gguf", "unknown backend 'llama'"),
    ],
)
def test_invalid_specs_fail_with_one_line(raw: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_spec(raw)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"model spec {raw!r}: ")
    assert expected in message


@pytest.mark.parametrize(
    ("raw", "hint"),
    [
        ("smolm2", "did you mean smollm2?"),
        ("gemma3-270", "did you mean gemma3-270m?"),
        ("hff:gpt2", "did you mean hf:gpt2?"),
        ("llama:model.gguf", "did you mean llamacpp:model.gguf?"),
        ("Qwen/Qwen2.5-0.5B-Instruct", "did you mean hf:Qwen/Qwen2.5-0.5B-Instruct?"),
        ("model.Q4_K_M.gguf", "did you mean gguf:model.Q4_K_M.gguf or llamacpp:model.Q4_K_M.gguf?"),
    ],
)
def test_an_unknown_spec_lists_every_form_and_suggests_the_close_one(raw: str, hint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_spec(raw)
    message = str(caught.value)
    assert message.endswith(hint)
    assert "llamacpp" in message and "vllm" in message


@pytest.mark.parametrize("raw", ["zzz", "hf:", ""])
def test_no_suggestion_when_nothing_is_close(raw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_model_spec(raw)
    assert "did you mean" not in str(caught.value)


def test_missing_gguf_file_is_a_config_error(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_backend(f"gguf:{tmp_path}/absent.gguf")


def test_openai_spec_builds_without_network() -> None:
    # Building the backend must not contact the server (port 9 on loopback is never served here).
    backend = load_backend("openai:some-model@http://127.0.0.1:9/v1", BackendOptions(concurrency=7, api_mode="chat"))
    info = backend.info
    assert (info.backend, info.model_id, info.batch_size) == ("openai", "some-model", 7)
    assert info.revision == "api@127.0.0.1:9/v1"
    # no --batch-size: the backend's one default, 4 prompts per request in flight
    assert backend.plan_batches([str(i) for i in range(30)]) == [list(range(28)), list(range(28, 30))]
    wide = load_backend("openai:m@http://127.0.0.1:9/v1", BackendOptions(concurrency=32, batch_size=16))
    assert [len(wave) for wave in wide.plan_batches([str(i) for i in range(40)])] == [32, 8]
    backend.close()


def test_bad_backend_options_are_config_errors_where_they_are_given() -> None:
    with pytest.raises(ConfigError, match=r"^concurrency: Input should be greater than or equal to 1"):
        BackendOptions(concurrency=0)
    with pytest.raises(ConfigError, match=r"^batch_size: "):
        BackendOptions(batch_size="lots")
    with pytest.raises(ConfigError, match=r"^backend option\(s\) colour: unknown; known: api_key_env, api_mode"):
        BackendOptions(colour="blue")
