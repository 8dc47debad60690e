"""The secret sweep: every command that takes a model (``check`` with its JUnit file, ``history`` of what they
wrote), run against real loopback servers that want a key,
with the key in the model URL in each form a URL holds one (``user:KEY@``, a percent-encoded ``user:K%2FEY@``,
a query parameter ``?api_key=KEY``) and another in ``$OPENAI_API_KEY``; then commands that fail against
them (a wrong path, a wrong key). No key, in any spelling, may appear in any file the commands write (run
folders, the call cache, CHRONOPROBE_HOME, results and card files) nor on stdout or stderr."""

from __future__ import annotations

import gc
from pathlib import Path
from urllib.parse import quote

import pytest

from chronoprobe.testing import MockBackend
from chronoprobe.testing.mock import MOCK_CAPABILITIES
from chronoprobe.testing.openai_server import OpenAIServer
from cli_driver import run_main

pytestmark = pytest.mark.e2e

URL_KEY = "sk-url-Zq81TopSecret"
ENV_KEY = "sk-env-Hq27AlsoSecret"
QUERY_KEY = "sk-query-Wv53HiddenToo"
ENCODED_KEY = "sk-enc/Pm44:Se+cret@x"
"""Sent decoded; written in the URL percent-encoded (``/``, ``:``, ``@`` and ``+`` cannot stand in userinfo)."""
KEYS = (URL_KEY, ENV_KEY, QUERY_KEY, ENCODED_KEY, quote(ENCODED_KEY, safe=""))
ASSETS = Path(__file__).resolve().parents[1] / "assets"


def draghi() -> MockBackend:
    return MockBackend(
        lambda prompt, params: " Mario Draghi",
        name="echo",
        capabilities=MOCK_CAPABILITIES,
    )


def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    ran = run_main(monkeypatch, capsys, *args)
    return ran.code, ran.text


def commands(tmp: Path, specs: dict[str, str]) -> dict[str, list[str]]:
    """Every command that takes --model (or reads what one wrote), in an order where each has its input;
    each URL form of the key is used by several of them."""
    url_spec, query_spec, encoded_spec = specs["url"], specs["query"], specs["encoded"]
    cache = ["--cache", str(tmp / "c.sqlite")]
    questions = tmp / "questions.jsonl"
    questions.write_text('{"question": "Who is the prime minister of Italy?"}\n', encoding="utf-8")
    runs = [tmp / name for name in ("audit", "conflicts", "recency", "edit-from", "edit-dataset")]
    return {
        "outdated run": ["outdated", "run", "--model", url_spec, "--model", f"envy={specs['env']}",
                         "--model", f"q={query_spec}", "--model", f"enc={encoded_spec}", "--limit", "2",
                         "--out", str(runs[0]), *cache],
        "conflicts run": ["conflicts", "run", "mulan", "--data", str(ASSETS / "mulan_queries.jsonl"),
                          "--aliases-file", str(ASSETS / "mulan_aliases.jsonl"), "--templates", str(ASSETS / "mulan_templates.json"),
                          "--balanced-limit", "3", "--judge", "exact", "--model", query_spec, "--out", str(runs[1]), *cache],
        "conflicts contexts": ["conflicts", "contexts", "--model", encoded_spec, "--data", str(ASSETS / "mulan_queries.jsonl"),
                               "--aliases-file", str(ASSETS / "mulan_aliases.jsonl"), "--templates", str(ASSETS / "mulan_templates.json"),
                               "--no-nli-filter", "--balanced-limit", "2", "--out", str(tmp / "contexts" / "ctx.jsonl"), *cache],
        "recency eval": ["recency", "eval", "--data", str(ASSETS / "recency_sample.json"), "--model", query_spec,
                         "--strategy", "zero-shot", "--context-mode", "without", "--out", str(runs[2]), *cache],
        "recency label": ["recency", "label", str(questions), "--labeller", encoded_spec, "--samples", "2", "--verify-samples", "1", "--candidates", "1",
                          "--context-rounds", "1",
                          "--out", str(tmp / "labels" / "labels.jsonl"), *cache],
        "recency gate": ["recency", "gate", "Who is the prime minister of Italy?", "--model", url_spec, *cache],
        "editing dataset": ["editing", "dataset", "--from", str(runs[0]), "--for-model", url_spec,
                            "--out", str(tmp / "ds.json")],
        "editing run --from": ["editing", "run", "--from", str(runs[0]), "--model", query_spec, "--method", "rag-gold,ike",
                               "--no-locality", "--out", str(runs[3]), *cache],
        "editing run --dataset": ["editing", "run", "--dataset", str(tmp / "ds.json"), "--model", url_spec,
                                  "--method", "rag-gold", "--out", str(runs[4]), *cache],
        "check": ["check", "--model", url_spec, "--model", f"envy={specs['env']}", "--model", f"q={query_spec}",
                  "--lens", "recency", "--require", "recency.zero-shot.without.accuracy >= 0", "--out", str(tmp / "check"),
                  "--junit", str(tmp / "junit" / "check.xml"), *cache],
        "history": ["history", str(runs[0]), "--out", str(tmp / "history")],
        "results": ["results", *map(str, runs), str(tmp / "check")],
        "results --out": ["results", *map(str, runs), str(tmp / "check"), "--out", str(tmp / "tables" / "results.csv")],
        "card": ["card", *map(str, runs), str(tmp / "check"), "--out", str(tmp / "card" / "card.html")],
    }  # fmt: skip


def read(path: Path) -> str | None:
    """The file's bytes as text; None for a folder or a file gone since it was listed (SQLite's -shm)."""
    try:
        return path.read_bytes().decode("utf-8", "replace") if path.is_file() else None
    except FileNotFoundError:
        return None


def failing(tmp: Path, port: int) -> dict[str, list[str]]:
    """Commands that fail against the query-key server, each with a key in its URL: the error line names the URL."""
    base = f"http://127.0.0.1:{port}"
    return {
        "a path the server lacks": ["recency", "gate", "Who?", "--model", f"openai:echo@{base}/v2?api_key={QUERY_KEY}",
                                    "--cache", str(tmp / "f.sqlite")],
        "a wrong key": ["recency", "gate", "Who?", "--model", f"openai:echo@{base}/v1?key={URL_KEY}&x=1#{ENV_KEY}",
                        "--cache", str(tmp / "f.sqlite")],
        "a check with a wrong key": ["check", "--model", f"openai:echo@http://user:{URL_KEY}@127.0.0.1:{port}/v1",
                                     "--lens", "recency", "--out", str(tmp / "refused-check"), "--cache", str(tmp / "f.sqlite")],
    }  # fmt: skip


def test_no_key_in_any_output_file_or_on_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    printed: dict[str, str] = {}
    with (
        OpenAIServer(draghi(), model_name="echo", api_key=URL_KEY) as by_url,
        OpenAIServer(draghi(), model_name="echo", api_key=ENV_KEY) as by_env,
        OpenAIServer(draghi(), model_name="echo", api_key=QUERY_KEY) as by_query,
        OpenAIServer(draghi(), model_name="echo", api_key=ENCODED_KEY) as by_encoded,
    ):
        specs = {
            "url": f"openai:echo@http://user:{URL_KEY}@127.0.0.1:{by_url.port}/v1",
            "env": f"openai:echo@http://127.0.0.1:{by_env.port}/v1",
            "query": f"openai:echo@http://127.0.0.1:{by_query.port}/v1?api_key={QUERY_KEY}",
            "encoded": f"openai:echo@http://user:{quote(ENCODED_KEY, safe='')}@127.0.0.1:{by_encoded.port}/v1",
        }
        for name, args in commands(tmp_path, specs).items():
            code, printed[name] = cli(monkeypatch, capsys, *args)
            assert code == 0, f"{name}: {printed[name]}"
        for server in (by_url, by_env, by_query, by_encoded):  # every key was really used, and accepted
            assert server.stats.count > 0 and all(r.status == 200 for r in server.stats.requests)
        assert {r.path for r in by_query.stats.requests} <= {"/v1/chat/completions", "/v1/completions"}
        for name, args in failing(tmp_path, by_query.port).items():
            code, printed[name] = cli(monkeypatch, capsys, *args)
            assert code == 2 and f"127.0.0.1:{by_query.port}/v" in printed[name], f"{name}: {printed[name]}"
        assert "HTTP 404" in printed["a path the server lacks"] and "HTTP 401" in printed["a wrong key"]
        assert "HTTP 401" in printed["a check with a wrong key"] and not (tmp_path / "refused-check").exists()

    gc.collect()  # the failed commands' caches close: their -wal and -shm files fold into the .sqlite
    files = {str(p.relative_to(tmp_path)): read(p) for p in tmp_path.rglob("*") if p.name != "questions.jsonl"}
    files = {name: text for name, text in files.items() if text is not None}
    assert len(files) > 40 and any(name.endswith(".sqlite") for name in files)  # the call cache is swept too
    written = {"check/check.md", "check/check.json", "check/card.html", "check/.chronoprobe-run", "junit/check.xml"}
    assert written | {"check/recency/run.json", "history/history.json"} <= set(files)
    found = [
        f"{place}: {key}"
        for key in KEYS
        for place, text in [*files.items(), *((f"console of {name}", text) for name, text in printed.items())]
        if key in text
    ]
    print(f"secret sweep: {len(files)} files and {len(printed)} consoles checked, {len(found)} secret(s) found")
    assert found == []
