"""One identity per model: a key in the URL is redacted in one place, models are matched in that
canonical form, and ``--model NAME=SPEC`` names the model wherever a person reads it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.cache import sample_key, speed_subject
from chronoprobe.models.base import Capability, DecodingParams
from chronoprobe.models.openai_backend import OpenAIBackend, OpenAIConfig
from chronoprobe.models.redact import join_api_path
from chronoprobe.models.registry import canonical_spec, parse_model, split_userinfo, strip_url_credentials
from chronoprobe.testing import MockBackend
from chronoprobe.testing.openai_server import OpenAIServer
from cli_driver import run_main

SECRET = "sk-Zq81TopSecretKey"
ASSETS = Path(__file__).resolve().parents[1] / "assets"


def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    ran = run_main(monkeypatch, capsys, *args)
    return ran.code, ran.text


def all_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


# --- one redaction, one canonical form ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"openai:m@http://user:{SECRET}@127.0.0.1:8000/v1", "openai:m@http://127.0.0.1:8000/v1"),
        (f"openai:m@https://{SECRET}@api.example.org/v1", "openai:m@https://api.example.org/v1"),
        ("openai:m@http://user:p@ss@host/v1", "openai:m@http://host/v1"),  # an '@' inside the password
        ("  openai:m@http://h/v1?a=b@c  ", "openai:m@http://h/v1?a=b@c"),  # '@' in a query is no userinfo
        ("hf:org/model@v1", "hf:org/model@v1"),
    ],
)
def test_one_redaction_for_specs_and_free_text(text: str, shown: str) -> None:
    assert canonical_spec(text) == shown
    assert (
        strip_url_credentials(f"chronoprobe run --model {text.strip()} --out x")
        == f"chronoprobe run --model {shown} --out x"
    )
    url = text.strip().partition("@")[2]
    if url.startswith("http"):
        assert split_userinfo(url)[0] == shown.partition("@")[2]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"openai:m@http://h/v1?api_key={SECRET}", "openai:m@http://h/v1?api_key=***"),
        (f"openai:m@http://h/v1?a=1&API-KEY={SECRET}&b=2", "openai:m@http://h/v1?a=1&API-KEY=***&b=2"),
        (
            f"openai:m@http://h/v1?Key={SECRET}&token={SECRET}&sig={SECRET}",
            "openai:m@http://h/v1?Key=***&token=***&sig=***",
        ),
        (f"openai:m@http://h/v1?access_token={SECRET}#{SECRET}", "openai:m@http://h/v1?access_token=***#***"),
        (f"openai:m@http://h/v1?api%5Fkey={SECRET}", "openai:m@http://h/v1?api%5Fkey=***"),  # an encoded name too
        (f"openai:m@http://u:{SECRET}@h/v1?monkey=1&keys=2", "openai:m@http://h/v1?monkey=1&keys=2"),
        # servers echo the path they were asked for, without scheme and host
        (
            f"HTTP 404: no route /v1/chat/completions?api_key={SECRET}",
            "HTTP 404: no route /v1/chat/completions?api_key=***",
        ),
    ],
)
def test_secret_query_parameters_and_fragments_are_masked(text: str, shown: str) -> None:
    assert strip_url_credentials(text) == shown
    assert strip_url_credentials(f"--model '{text}' --out x") == f"--model '{shown}' --out x"


def test_a_percent_encoded_key_in_the_userinfo_is_sent_decoded() -> None:
    assert split_userinfo("http://user:sk%2Fab%3A%40c+d@h/v1?x=1") == ("http://h/v1?x=1", "sk/ab:@c+d")
    assert split_userinfo("http://sk%2Dkey@h/v1") == ("http://h/v1", "sk-key")


def test_the_api_path_joins_the_path_and_the_query_stays_a_query() -> None:
    assert join_api_path("http://u:p@h:9/v1/?api_key=K&v=2#f", "chat/completions") == (
        "http://u:p@h:9/v1/chat/completions?api_key=K&v=2"
    )
    assert join_api_path("https://h", "completions") == "https://h/completions"


@pytest.mark.parametrize(
    ("url", "key", "speed"),
    [
        (
            "http://127.0.0.1:8000/v1",
            "39f8288d17571dadd643789eb38368551f16ff03250b907ec82ea8fdb1d84551",
            "27fa558711a63e852eab200630818fc12bdd13b156b5c7a7660140355a78d2a0",
        ),
        (
            "http://h:9/v1?api-version=2024-06-01",
            "bbc6a45f6e8a0a4f2cbac04257b7de08aff160f853bd754ed70e763315953184",
            "c77254f0776f004160f6bf15ea76c67d06ac6de726ecc11cc78cbe31686be432",
        ),
    ],
)
def test_urls_without_a_secret_keep_the_cache_keys_of_earlier_releases(url: str, key: str, speed: str) -> None:
    """The keys 0.2.0 wrote for these specs (computed with its code), so their caches are still served."""
    spec = f"openai:m@{url}"
    backend = OpenAIBackend(OpenAIConfig(model="m", base_url=url, spec=spec))
    assert canonical_spec(spec) == spec
    assert sample_key(backend.info, '{"messages":[]}', DecodingParams(), 0) == key
    assert speed_subject(spec) == speed


def test_a_password_holding_an_at_sign_is_used_whole_and_never_shown_in_part() -> None:
    assert split_userinfo("http://user:p@ss@host/v1") == ("http://host/v1", "p@ss")
    assert "ss@" not in strip_url_credentials("--model openai:m@http://user:p@ss@host/v1")


def model_label(value: str) -> str:
    return parse_model(value).label


def test_a_model_label_is_its_name_else_its_canonical_spec() -> None:
    assert model_label(f"fast=openai:m@http://u:{SECRET}@h/v1") == "fast"
    assert model_label(f"openai:m@http://u:{SECRET}@h/v1") == "openai:m@http://h/v1"
    assert model_label("mock:constant=x") == "mock:constant=x"


def test_the_request_keeps_the_url_as_given_for_the_requests_only() -> None:
    request = parse_model(f"fast=openai:m@http://u:{SECRET}@h/v1?api_key={SECRET}")
    assert request.given_url == f"http://u:{SECRET}@h/v1?api_key={SECRET}"
    assert SECRET not in str(request) and SECRET not in repr(request) and SECRET not in request.model_dump_json()
    assert request.spec.base_url == "http://h/v1?api_key=***"


# --- a key in the model URL, through the editing lens -------------------------------------------


def draghi() -> MockBackend:
    """Behind the loopback server: names an Italian prime minister of the past to every question."""
    return MockBackend(
        lambda prompt, params: " Mario Draghi",
        name="echo",
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.CHAT_TEMPLATE},
    )


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """A loopback server that wants SECRET, an audit of it at tmp_path/audit; yields the spec with the key in its URL."""
    with OpenAIServer(draghi(), model_name="echo", api_key=SECRET) as server:
        spec = f"openai:echo@http://user:{SECRET}@127.0.0.1:{server.port}/v1"
        code, text = cli(
            monkeypatch, capsys, "outdated", "run", "--model", spec, "--limit", "2",
            "--out", str(tmp_path / "audit"), "--cache", str(tmp_path / "c.sqlite"),
        )  # fmt: skip
        assert code == 0, text
        yield spec


@pytest.mark.e2e
def test_editing_a_dataset_with_a_key_in_the_url(
    keyed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = cli(
        monkeypatch, capsys, "editing", "dataset", "--from", str(tmp_path / "audit"), "--out", str(tmp_path / "ds.json")
    )
    assert code == 0, text
    code, text = cli(
        monkeypatch, capsys, "editing", "run", "--dataset", str(tmp_path / "ds.json"), "--model", keyed,
        "--method", "rag-gold", "--no-locality", "--out", str(tmp_path / "ed"), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    assert code == 0, text  # today: rc 3, KeyError
    assert SECRET not in text and SECRET not in all_text(tmp_path / "ed")
    assert (
        "facts to edit: Politicians (countries_byGDP) 1, Teams (athletes_byPayment) 0, Positions "
        f"(companies_byRevenue + organizations) 0, from {tmp_path / 'ds.json'} for {canonical_spec(keyed)}"
        in " ".join(text.split())
    )


@pytest.mark.e2e
def test_editing_an_audit_with_a_key_in_the_url(
    keyed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = cli(
        monkeypatch, capsys, "editing", "run", "--from", str(tmp_path / "audit"), "--model", keyed,
        "--method", "rag-gold", "--no-locality", "--out", str(tmp_path / "ed"), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    assert code == 0, text  # today: "not in this run", with the same string on both sides
    assert SECRET not in text and SECRET not in all_text(tmp_path / "ed")
    summary = json.loads((tmp_path / "ed" / "run.json").read_text())["summary"]
    assert summary["models"] == [canonical_spec(keyed)]


# --- display names ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["modèle", "模型", "Qwen2.5-0.5B+lora_v1"])
def test_a_name_in_any_script_is_a_name(name: str) -> None:
    request = parse_model(f"{name}=mock:x")
    assert (request.name, request.spec.raw) == (name, "mock:x")


def test_a_name_typed_with_a_combining_accent_is_the_same_name() -> None:
    assert parse_model("mode\u0300le=mock:x").name == "modèle"


@pytest.mark.e2e
@pytest.mark.parametrize("raw", ["my model=mock:x", "=mock:x", "_x=mock:x", "a/b=mock:x", "x@y=mock:x"])
def test_a_bad_name_says_what_a_name_may_hold(
    raw: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = cli(
        monkeypatch, capsys, "outdated", "run", "--model", raw, "--limit", "1", "--cache", str(tmp_path / "c.sqlite")
    )
    assert code == 2, text
    assert "is not a model name" in text and "letters (any script)" in text and "unknown backend" not in text
    assert len(text.strip().splitlines()) <= 2 and "Traceback" not in text  # one line (wrapped at most once)


@pytest.mark.e2e
def test_non_ascii_names_run_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, text = cli(
        monkeypatch, capsys, "outdated", "run", "--model", "modèle=mock:echo", "--model", "模型=mock:constant=Mario Draghi",
        "--limit", "2", "--out", str(out), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    assert code == 0, text  # today: unknown backend 'modèle=mock'
    assert "modèle:" in text and "模型:" in text and "Glyph" not in text
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert log["summary"]["models"] == ["modèle", "模型"]
    assert [m["spec"] for m in log["provenance"]["models"]] == ["mock:echo", "mock:constant=Mario Draghi"]


# --- NAME=SPEC everywhere a person reads ---------------------------------------------------------


EDITING_DATASET = (
    ASSETS / "editing_results" / "models_editing" / "editing_datasets" / "llama2-7b-chat" / "editing_dataset.json"
)


LENSES: dict[str, tuple[str, list[str]]] = {
    "outdated": ("mock:echo", ["outdated", "run", "--limit", "2"]),
    "conflicts": (
        "mock:constant=Paris",
        [
            "conflicts",
            "run",
            "dynamicqa",
            "--data",
            str(ASSETS / "dynamicqa_small"),
            "--judge",
            "exact",
            "--samples",
            "2",
            "--device",
            "cpu",
        ],
    ),
    "recency": (
        "mock:constant=Never",
        [
            "recency",
            "eval",
            "--data",
            str(ASSETS / "recency_sample.json"),
            "--strategy",
            "zero-shot",
            "--context-mode",
            "without",
        ],
    ),
    "editing": (
        "mock:constant=It is Andy Jassy.",
        [
            "editing",
            "run",
            "--dataset",
            str(EDITING_DATASET),
            "--balanced-limit",
            "2",
            "--method",
            "rag-gold",
            "--no-locality",
        ],
    ),
}


@pytest.mark.e2e
@pytest.mark.parametrize("lens", list(LENSES))
def test_the_given_name_is_used_wherever_a_person_reads(
    lens: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, args = LENSES[lens]
    out = tmp_path / "run"
    code, printed = cli(
        monkeypatch, capsys, *args, "--model", f"mine={spec}", "--out", str(out), "--cache", str(tmp_path / "c.sqlite")
    )
    assert code == 0, printed
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert log["summary"]["models"] == ["mine"] and list(log["summary"]["headline"]) == ["mine"]
    assert {json.loads(line)["model"] for line in (out / "items.jsonl").read_text().splitlines()} == {"mine"}
    report = (out / "report.md").read_text(encoding="utf-8")
    provenance = report.split("## Provenance", 1)
    assert spec not in provenance[0] and "mine" in provenance[0]  # the report's body names the model
    assert f"`{spec}` (mine)" in provenance[1]  # its provenance keeps the spec
    assert spec not in printed.replace(f"mine={spec}", "") and "mine" in printed  # and so does the console
    (model,) = log["provenance"]["models"]
    assert (model["spec"], model["name"], model["given_name"]) == (spec, "mine", "mine")
    # the readers agree: results and the card show the name, with the spec beside it in the card's provenance
    code, table = cli(monkeypatch, capsys, "results", str(out), "--format", "csv")
    assert code == 0, table
    assert {line.split(",")[1] for line in table.strip().splitlines()[1:]} == {"mine"}


@pytest.mark.e2e
@pytest.mark.parametrize("lens", list(LENSES))
def test_without_a_name_the_spec_keys_everything_as_before(
    lens: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, args = LENSES[lens]
    out = tmp_path / "run"
    code, printed = cli(
        monkeypatch, capsys, *args, "--model", spec, "--out", str(out), "--cache", str(tmp_path / "c.sqlite")
    )
    assert code == 0, printed
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert log["summary"]["models"] == [spec] and list(log["summary"]["headline"]) == [spec]
    assert {json.loads(line)["model"] for line in (out / "items.jsonl").read_text().splitlines()} == {spec}
    assert log["provenance"]["models"][0]["given_name"] is None


@pytest.mark.e2e
def test_editing_finds_a_named_audit_by_its_name_or_its_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = tmp_path / "audit"
    code, text = cli(
        monkeypatch, capsys, "outdated", "run", "--model", "old=mock:constant=Mario Draghi", "--limit", "2",
        "--out", str(audit), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    assert code == 0, text
    for n, model in enumerate(
        ("old=mock:constant=Mario Draghi", "mock:constant=Mario Draghi", "other=mock:constant=Mario Draghi")
    ):
        out = tmp_path / f"ed{n}"
        code, text = cli(
            monkeypatch, capsys, "editing", "run", "--from", str(audit), "--model", model, "--method", "rag-gold",
            "--select", "not-up-to-date", "--no-locality", "--out", str(out), "--cache", str(tmp_path / "c.sqlite"),
        )  # fmt: skip
        assert code == 0, (model, text)
        detail = json.loads((out / "summary.json").read_text())["models"]
        assert list(detail) == [model_label(model)] and detail[model_label(model)]["dataset"]["facts"] == 2
    code, text = cli(
        monkeypatch,
        capsys,
        "editing",
        "dataset",
        "--from",
        str(audit),
        "--model",
        "old",
        "--out",
        str(tmp_path / "ds.json"),
    )
    assert code == 0, text
    code, text = cli(
        monkeypatch,
        capsys,
        "editing",
        "dataset",
        "--from",
        str(audit),
        "--model",
        "mock:echo",
        "--out",
        str(tmp_path / "ds.json"),
    )
    assert code == 2 and "--model mock:echo: not in this run; its models are old" in " ".join(text.split())


@pytest.mark.e2e
def test_editing_refuses_two_models_of_one_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = cli(
        monkeypatch, capsys, "editing", "run", "--dataset", str(EDITING_DATASET), "--method", "rag-gold",
        "--model", "a=mock:echo", "--model", "a=mock:constant=x", "--out", str(tmp_path / "ed"),
    )  # fmt: skip
    assert code == 2 and "two models are named 'a'" in text, text  # the pre-flight's, before the editing lens's own
    assert not (tmp_path / "ed").exists()
