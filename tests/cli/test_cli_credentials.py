"""Credentials in an ``openai:`` spec's URL are used for the request but never recorded or printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.models.base import Capability
from chronoprobe.models.registry import canonical_spec, parse_model_spec
from chronoprobe.testing import MockBackend
from chronoprobe.testing.openai_server import OpenAIServer
from cli_driver import run_main

SECRET = "sk-Zq81TopSecretKey"


def echo() -> MockBackend:
    """A stand-in model for the loopback server: always answers " Paris"."""
    return MockBackend(
        lambda prompt, params: " Paris",
        name="echo",
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.CHAT_TEMPLATE},
    )


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    ran = run_main(monkeypatch, capsys, *args)
    return ran.code, ran.text


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        (f"openai:m@http://user:{SECRET}@127.0.0.1:8000/v1", "openai:m@http://127.0.0.1:8000/v1"),
        (f"openai:m@https://{SECRET}@api.example.org/v1", "openai:m@https://api.example.org/v1"),
        ("openai:m@http://127.0.0.1:8000/v1", "openai:m@http://127.0.0.1:8000/v1"),
        ("hf:org/model@v1", "hf:org/model@v1"),
    ],
)
def test_spec_is_recorded_without_userinfo(spec, shown):
    assert canonical_spec(spec) == shown
    parsed = parse_model_spec(spec)
    assert SECRET not in parsed.raw and SECRET not in (parsed.base_url or "")


@pytest.mark.e2e
def test_key_in_url_is_used_but_never_written_or_printed(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "report"
    with OpenAIServer(echo(), model_name="echo", api_key=SECRET) as server:
        spec = f"openai:echo@http://user:{SECRET}@127.0.0.1:{server.port}/v1"
        code, printed = _run(
            monkeypatch,
            capsys,
            [
                "outdated",
                "run",
                "--model",
                spec,
                "--limit",
                "2",
                "--out",
                str(out),
                "--cache",
                str(tmp_path / "c.sqlite"),
            ],
        )
        assert code == 0, printed
        assert server.stats.count > 0  # the key from the URL authenticated the requests
    assert (out / "summary.json").is_file() and (out / "responses.jsonl").is_file() and (out / "report.md").is_file()
    assert SECRET not in _all_text(out)
    assert SECRET not in printed
    assert f"127.0.0.1:{server.port}" in (out / "summary.json").read_text()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


@pytest.mark.e2e
def test_key_in_url_stays_out_of_error_messages(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    with OpenAIServer(echo(), model_name="echo", api_key="a-different-key") as server:
        spec = f"openai:echo@http://user:{SECRET}@127.0.0.1:{server.port}/v1"
        code, printed = _run(
            monkeypatch,
            capsys,
            [
                "outdated",
                "run",
                "--model",
                spec,
                "--limit",
                "1",
                "--out",
                str(tmp_path / "r"),
                "--cache",
                str(tmp_path / "c.sqlite"),
            ],
        )
    assert code == 2, printed
    assert "401" in printed and SECRET not in printed
