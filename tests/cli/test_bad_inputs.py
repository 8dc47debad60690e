"""A sweep of careless inputs across every command: each is one clean line, exit 2, and nothing left behind.

Beyond the option values of ``test_cli_validation.py``: wrong paths, files of the wrong kind or
shape, corrupted run folders, bad specs, dates and names. Each case runs the real ``main()`` in
this process with model loading refused, so a case that gets as far as loading a model fails
(exit 3). After it, no file or folder may have appeared (the cache and ``CHRONOPROBE_HOME`` aside).
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.cli.main import main
from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import changes, said_lines, tree_state

ASSETS = Path(__file__).resolve().parents[1] / "assets"
EDIT_SET = (
    ASSETS / "editing_results" / "models_editing" / "editing_datasets" / "llama2-7b-chat" / "editing_dataset.json"
)
EDIT_RESULTS = ASSETS / "editing_results" / "models_editing" / "results"
MULAN = (
    f"--data {ASSETS / 'mulan_queries.jsonl'} --templates {ASSETS / 'mulan_templates.json'} "
    f"--aliases-file {ASSETS / 'mulan_aliases.jsonl'}"
)
DYNAMICQA = f"--data {ASSETS / 'dynamicqa_small'}"
RECENCY = f"--data {ASSETS / 'recency_sample.json'}"
MOCK = "-m mock:constant=Paris"


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real two-fact outdated run of a mock model, copied and damaged by the cases that need one."""
    tmp = tmp_path_factory.mktemp("good")
    register_mock("bad-inputs", lambda prompt, params: "Mario Draghi")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHRONOPROBE_HOME", str(tmp / "home"))
        try:
            run = cp.run("outdated", models="mock:bad-inputs", limit=2, out=tmp / "run", cache=tmp / "c.sqlite")
        finally:
            unregister_mock("bad-inputs")
    return run.path


# --- damaged inputs: each writes its thing under tmp and returns nothing ------------------------------


def _edit_run_json(change: Callable[[dict[str, object]], object]) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        path = tmp / "run" / "run.json"
        log = json.loads(path.read_text())
        change(log)
        path.write_text(json.dumps(log))

    return damage


def _set(key: str, value: object) -> Callable[[dict[str, object]], object]:
    def change(log: dict[str, object]) -> None:
        *parents, last = key.split(".")
        target = log
        for part in parents:
            target = target[part]  # type: ignore[assignment]
        target[last] = value

    return change


def _delete(key: str) -> Callable[[dict[str, object]], object]:
    def change(log: dict[str, object]) -> None:
        *parents, last = key.split(".")
        target = log
        for part in parents:
            target = target[part]  # type: ignore[assignment]
        del target[last]

    return change


def _write(name: str, text: str) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)

    return damage


def _run_json_folder(tmp: Path) -> None:
    (tmp / "run" / "run.json").unlink()
    (tmp / "run" / "run.json").mkdir()


def _no_run_json(tmp: Path) -> None:
    (tmp / "run" / "run.json").unlink()


def _no_result_files(tmp: Path) -> None:
    (tmp / "run" / "run.json").unlink()
    (tmp / "run" / "summary.json").unlink()


def _lm_samples(tmp: Path) -> None:
    """lm-eval --log_samples output under ``lm/``: one answered paraphrase of a catalogue fact."""
    doc = {"fact_id": "countries_byGDP/Italy/President of Italy", "template_index": 0}
    row = {"doc_id": 0, "doc": doc, "filtered_resps": ["Sergio Mattarella"]}
    _write("lm/my-model/samples_chronoprobe_outdated_2026-01-01T00-00-00.jsonl", json.dumps(row) + "\n")(tmp)


def _future_snapshot(tmp: Path) -> None:
    """A user snapshot ``future`` whose retrieval date is after today."""
    shipped = Path(cp.__file__).parent / "data" / "snapshots" / "dyknow-2023-12-18.json"
    data = json.loads(shipped.read_text(encoding="utf-8"))
    _write("home/snapshots/future.json", json.dumps({**data, "name": "future", "retrieved": "2999-01-01"}))(tmp)


def _write_bytes(name: str) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_bytes(b"\xff\xfe\x00 not text")

    return damage


def _damaged_holder(tmp: Path) -> None:
    """``holder/``: a folder whose only run folder has a damaged run.json."""
    shutil.copytree(tmp / "run", tmp / "holder" / "run")
    (tmp / "holder" / "run" / "run.json").write_text("{not json")


def _unreachable_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on: bound, then released
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Case:
    name: str
    argv: str
    expected: str
    """Text the error line must contain (the place it names)."""
    damage: Callable[[Path], object] | None = None
    spec: bool = False
    default_out: bool = False
    """Leave --out out: the command picks a folder under results/."""
    """The bad value is a model or judge spec: the loader itself refuses it, so loading is not refused here."""


RUN_DAMAGE: list[tuple[str, Callable[[Path], None], str]] = [
    ("summary-list", _edit_run_json(_set("summary", [1, 2])), "run.json"),
    ("summary-string", _edit_run_json(_set("summary", "x")), "run.json"),
    ("summary-missing", _edit_run_json(_delete("summary")), "run.json"),
    ("detail-string", _edit_run_json(_set("summary.detail", "x")), "run.json"),
    # results and the card read the metric records, not the lens's own layout (detail)
    ("metrics-number", _edit_run_json(_set("summary.metrics", 5)), "run.json"),
    ("metrics-list-of-numbers", _edit_run_json(_set("summary.metrics", [1])), "run.json"),
    ("provenance-string", _edit_run_json(_set("provenance", "x")), "run.json"),
    ("run-json-invalid", _write("run/run.json", "{not json"), "run.json"),
    ("run-json-array", _write("run/run.json", "[1, 2]"), "run.json"),
    ("run-json-empty", _write("run/run.json", ""), "run.json"),
    ("run-json-folder", _run_json_folder, "run.json"),
]
"""Ways to damage a run folder's run.json; results and card must name the file for each."""

CASES: list[Case] = [
    # --- the top level
    Case("unknown-command", "audit", "audit"),
    Case("unknown-subcommand", "outdated audit", "audit"),
    Case("unknown-option", "outdated run --colour", "--colour"),
    Case("extra-argument", f"outdated run {MOCK} surplus", "surplus"),
    Case("missing-option-value", "outdated run --limit", "--limit"),
    # --- outdated run
    Case("outdated-facts-missing", f"outdated run {MOCK} --facts {{tmp}}/nope.json", "nope.json"),
    Case("outdated-facts-folder", f"outdated run {MOCK} --facts {{tmp}}/folder", "folder"),
    Case("outdated-facts-empty", f"outdated run {MOCK} --facts {{tmp}}/empty.json", "empty.json"),
    Case("outdated-facts-invalid", f"outdated run {MOCK} --facts {{tmp}}/bad.json", "bad.json"),
    Case("outdated-facts-list", f"outdated run {MOCK} --facts {{tmp}}/list.json", "list.json"),
    Case("outdated-facts-object", f"outdated run {MOCK} --facts {{tmp}}/obj.json", "obj.json"),
    Case("outdated-instruction-missing", f"outdated run {MOCK} --instruction-file {{tmp}}/nope.txt", "nope.txt"),
    Case("outdated-instruction-no-slot", f"outdated run {MOCK} --instruction-file {{tmp}}/notes.txt", "notes.txt"),
    Case("outdated-model-empty", "outdated run -m ''", "model", spec=True),
    Case("outdated-model-unknown-kind", "outdated run -m banana:split", "banana:split", spec=True),
    Case("outdated-model-unknown-mock", "outdated run -m mock:no-such-mock", "mock:no-such-mock", spec=True),
    Case("outdated-model-openai-no-url", "outdated run -m openai:gpt", "openai:gpt", spec=True),
    Case("outdated-model-gguf-folder", "outdated run -m gguf:{tmp}/folder", "folder", spec=True),
    Case("outdated-as-of-word", f"outdated run {MOCK} --as-of yesterday", "--as-of"),
    Case("outdated-as-of-month-13", f"outdated run {MOCK} --as-of 2024-13-01", "--as-of"),
    Case("outdated-as-of-slashes", f"outdated run {MOCK} --as-of 2024/01/01", "--as-of"),
    Case("outdated-limit-word", f"outdated run {MOCK} --limit ten", "--limit"),
    Case("outdated-limit-float", f"outdated run {MOCK} --limit 2.5", "--limit"),
    Case("outdated-snapshot-file-missing", f"outdated run {MOCK} --snapshot {{tmp}}/nope.json", "nope.json"),
    Case("outdated-snapshot-file-invalid", f"outdated run {MOCK} --snapshot {{tmp}}/bad.json", "bad.json"),
    Case("outdated-snapshot-file-list", f"outdated run {MOCK} --snapshot {{tmp}}/list.json", "list.json"),
    Case("outdated-out-is-file", f"outdated run {MOCK} --out {{tmp}}/notes.txt", "notes.txt"),
    Case("outdated-out-under-file", f"outdated run {MOCK} --out {{tmp}}/notes.txt/report", "notes.txt"),
    Case("outdated-engine-unknown", f"outdated run {MOCK} --engine spark", "--engine"),
    Case("outdated-engine-bad-port", f"outdated run {MOCK} --engine ray:localhost:99999", "--engine"),
    Case("outdated-engine-unreachable", f"outdated run {MOCK} --engine ray:127.0.0.1:{{port}}", "--engine"),
    Case("outdated-max-new-tokens-word", f"outdated run {MOCK} --max-new-tokens many", "--max-new-tokens"),
    Case("outdated-concurrency-word", f"outdated run {MOCK} --concurrency lots", "--concurrency"),
    Case("outdated-no-such-cache-parent", f"outdated run {MOCK} --cache {{tmp}}/notes.txt/c.sqlite", "--cache"),
    Case("outdated-default-out", f"outdated run {MOCK} --facts {{tmp}}/n.json", "n.json", default_out=True),
    Case("conflicts-default-out", f"conflicts run dynamicqa {MOCK} --data {{tmp}}/n", "n", default_out=True),
    Case("recency-default-out", f"recency eval {MOCK} --data {{tmp}}/n.json", "n.json", default_out=True),
    Case(
        "editing-default-out", f"editing run {MOCK} --method ike --dataset {{tmp}}/n.json", "n.json", default_out=True
    ),
    # --- outdated score
    Case("score-generations-missing", "outdated score --generations {tmp}/nope --out {tmp}/scored", "nope"),
    Case("score-generations-file", "outdated score --generations {tmp}/notes.txt --out {tmp}/scored", "notes.txt"),
    Case("score-generations-empty", "outdated score --generations {tmp}/folder --out {tmp}/scored", "folder"),
    Case("score-gold-missing", "outdated score --generations {tmp}/gens --gold {tmp}/nope.json --out {tmp}/s", "nope"),
    Case(
        "score-gold-invalid", "outdated score --generations {tmp}/gens --gold {tmp}/bad.json --out {tmp}/s", "bad.json"
    ),
    Case("score-as-of-word", "outdated score --generations {tmp}/gens --as-of soon --out {tmp}/s", "--as-of"),
    Case("score-missing-out", "outdated score --generations {tmp}/gens", "--out"),
    # --- conflicts run
    Case("conflicts-unknown-dataset", f"conflicts run triviaqa {MOCK}", "triviaqa"),
    Case("conflicts-unknown-methodology", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --methodology x", "x"),
    Case("conflicts-data-missing", f"conflicts run dynamicqa {MOCK} --data {{tmp}}/nope", "nope"),
    Case("conflicts-data-empty-folder", f"conflicts run dynamicqa {MOCK} --data {{tmp}}/folder", "folder"),
    Case("conflicts-mulan-data-invalid", f"conflicts run mulan {MOCK} {MULAN} --data {{tmp}}/bad.json", "bad.json"),
    Case(
        "conflicts-unknown-judge",
        f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --judge telepathy",
        "telepathy",
        spec=True,
    ),
    Case("conflicts-unknown-fidelity", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --fidelity perfect", "perfect"),
    Case("conflicts-prompt-missing", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --wording {{tmp}}/n.json", "n.json"),
    Case(
        "conflicts-prompt-invalid",
        f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --wording {{tmp}}/bad.json",
        "bad.json",
    ),
    Case("conflicts-templates-missing", f"conflicts run mulan {MOCK} {MULAN} --templates {{tmp}}/n.json", "n.json"),
    Case(
        "conflicts-aliases-invalid", f"conflicts run mulan {MOCK} {MULAN} --aliases-file {{tmp}}/bad.json", "bad.json"
    ),
    Case("conflicts-samples-word", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --samples few", "--samples"),
    Case("conflicts-engine-unknown", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --engine spark", "--engine"),
    # --- conflicts contexts
    Case(
        "contexts-data-missing",
        f"conflicts contexts {MOCK} --data {{tmp}}/nope.jsonl --out {{tmp}}/ctx/c.jsonl",
        "nope.jsonl",
    ),
    Case("contexts-templates-invalid", f"conflicts contexts {MOCK} {MULAN} --templates {{tmp}}/bad.json", "bad.json"),
    Case("contexts-out-folder", f"conflicts contexts {MOCK} {MULAN} --out {{tmp}}/folder", "folder"),
    Case("contexts-prompt-missing", f"conflicts contexts {MOCK} {MULAN} --wording {{tmp}}/n.json", "n.json"),
    # --- recency eval
    Case("recency-unknown-strategy", f"recency eval {MOCK} {RECENCY} --strategy guess", "guess"),
    Case("recency-unknown-context", f"recency eval {MOCK} {RECENCY} --context-mode sometimes", "sometimes"),
    Case("recency-data-missing", f"recency eval {MOCK} --data {{tmp}}/nope.json", "nope.json"),
    Case("recency-data-invalid", f"recency eval {MOCK} --data {{tmp}}/bad.json", "bad.json"),
    Case("recency-data-empty", f"recency eval {MOCK} --data {{tmp}}/empty.json", "empty.json"),
    Case("recency-data-object", f"recency eval {MOCK} --data {{tmp}}/obj.json", "obj.json"),
    Case("recency-data-folder", f"recency eval {MOCK} --data {{tmp}}/folder", "folder"),
    Case("recency-data-bad-hub-id", f"recency eval {MOCK} --data hf:not/a/repo/id", "hf:not/a/repo/id"),
    Case("recency-prompt-missing", f"recency eval {MOCK} {RECENCY} --prompt-file {{tmp}}/n.txt", "n.txt"),
    Case("recency-sample-word", f"recency eval {MOCK} {RECENCY} --sample half", "--sample"),
    Case("recency-temperature-word", f"recency eval {MOCK} {RECENCY} --temperature warm", "--temperature"),
    Case("recency-out-is-file", f"recency eval {MOCK} {RECENCY} --out {{tmp}}/notes.txt", "notes.txt"),
    Case("recency-engine-unreachable", f"recency eval {MOCK} {RECENCY} --engine ray:127.0.0.1:{{port}}", "--engine"),
    # --- recency label
    Case("label-questions-missing", f"recency label {{tmp}}/nope.jsonl --labeller {MOCK[3:]}", "nope.jsonl"),
    Case("label-questions-empty", f"recency label {{tmp}}/empty.json --labeller {MOCK[3:]}", "empty.json"),
    Case("label-questions-invalid", f"recency label {{tmp}}/bad.json --labeller {MOCK[3:]}", "bad.json"),
    Case("label-questions-folder", f"recency label {{tmp}}/folder --labeller {MOCK[3:]}", "folder"),
    Case("label-labeller-bad-spec", "recency label {tmp}/q.jsonl --labeller banana:split", "banana:split", spec=True),
    Case("label-too-many-voters", "recency label {tmp}/q.jsonl " + " ".join(["--voter " + MOCK[3:]] * 4), "--voter"),
    Case("label-prompt-missing", f"recency label {{tmp}}/q.jsonl --labeller {MOCK[3:]} --label-prompt {{tmp}}/n", "n"),
    Case("label-out-folder", f"recency label {{tmp}}/q.jsonl --labeller {MOCK[3:]} --out {{tmp}}/folder", "folder"),
    # --- recency gate
    Case("gate-no-question", f"recency gate {MOCK}", "question"),
    Case("gate-question-and-file", f"recency gate 'Who?' --questions {{tmp}}/q.jsonl {MOCK}", "question"),
    Case("gate-questions-missing", f"recency gate --questions {{tmp}}/nope.jsonl {MOCK}", "nope.jsonl"),
    Case("gate-unknown-threshold", f"recency gate 'Who is the CEO?' {MOCK} --threshold often", "often"),
    Case("gate-empty-question", f"recency gate '  ' {MOCK}", "QUESTION"),
    Case("gate-bad-model", "recency gate 'Who is the CEO?' -m banana:split", "banana:split", spec=True),
    Case("gate-min-share-word", f"recency gate 'Who is the CEO?' {MOCK} --min-share most", "--min-share"),
    Case("gate-router-unknown", "recency gate 'Who is the CEO?' --router smart", "--router"),
    Case("gate-trained-with-context", "recency gate 'Who is the CEO?' --context 'at a meeting'", "--context"),
    Case("gate-weights-missing", "recency gate 'Who is the CEO?' --weights {tmp}/nope", "nope"),
    # --- recency route (the trained router): refused before the embedding model loads
    Case("route-no-question", "recency route", "question"),
    Case("route-empty-file", "recency route --questions {tmp}/empty.json", "holds no questions"),
    Case(
        "route-bad-jsonl-line",
        "recency route --questions {tmp}/lines.jsonl",
        "lines.jsonl line 2",
        _write("lines.jsonl", '{"question": "Who?"}\n{not json\n'),
    ),
    Case("route-weights-missing", "recency route 'Who is the CEO?' --weights {tmp}/nope", "nope"),
    Case(
        "route-weights-not-a-router",
        "recency route 'Who is the CEO?' --weights {tmp}/folder",
        "holds no router weights",
    ),
    Case("route-cut-off-above-one", "recency route 'Who is the CEO?' --min-share 1.5", "--min-share"),
    Case("route-unknown-threshold", "recency route 'Who is the CEO?' --threshold often", "often"),
    # --- snapshot
    Case("snapshot-show-missing", "snapshot show no-such-snapshot", "no-such-snapshot"),
    Case("snapshot-show-unknown-fact", "snapshot show --fact Q0-no-such-fact", "Q0-no-such-fact"),
    Case("snapshot-show-invalid-file", "snapshot show {tmp}/bad.json", "bad.json"),
    Case("snapshot-diff-missing", "snapshot diff no-such-a no-such-b", "no-such"),
    Case("snapshot-diff-one-argument", "snapshot diff only-one", "NEW"),
    Case("snapshot-fetch-bad-endpoint", "snapshot fetch --endpoint ftp://x", "--endpoint"),
    Case("snapshot-fetch-catalogue-missing", "snapshot fetch --catalogue {tmp}/nope.json", "nope.json"),
    Case("snapshot-fetch-timeout-zero", "snapshot fetch --timeout 0", "--timeout"),
    Case("snapshot-fetch-output-dir-file", "snapshot fetch --output-dir {tmp}/notes.txt", "notes.txt"),
    # --- editing dataset
    Case("dataset-no-source", "editing dataset", "--from/--dataset"),
    Case("dataset-two-sources", f"editing dataset --from {{tmp}}/run --dataset {EDIT_SET}", "--from/--dataset"),
    Case("dataset-from-missing", "editing dataset --from {tmp}/nope --out {tmp}/e.json", "nope"),
    Case("dataset-from-not-a-run", "editing dataset --from {tmp}/folder --out {tmp}/e.json", "folder"),
    Case(
        "dataset-from-unknown-model", "editing dataset --from {tmp}/run --for-model gpt-9 --out {tmp}/e.json", "gpt-9"
    ),
    Case("dataset-read-missing", "editing dataset --dataset {tmp}/nope.json", "nope.json"),
    Case("dataset-read-invalid", "editing dataset --dataset {tmp}/bad.json", "bad.json"),
    Case("dataset-read-object", "editing dataset --dataset {tmp}/obj.json", "obj.json"),
    Case("dataset-read-with-out", f"editing dataset --dataset {EDIT_SET} --out {{tmp}}/e.json", "--out"),
    Case("dataset-unknown-select", "editing dataset --from {tmp}/run --select newest", "newest"),
    Case(
        "dataset-from-summary-list",
        "editing dataset --from {tmp}/run --out {tmp}/e.json",
        "run.json",
        _edit_run_json(_set("summary", [1])),
    ),
    Case(
        "dataset-from-items-garbage",
        "editing dataset --from {tmp}/run --out {tmp}/e.json",
        "items.jsonl",
        _write("run/items.jsonl", "garbage\n"),
    ),
    # --- editing score
    Case(
        "score-edit-generations-missing",
        f"editing score --generations {{tmp}}/nope --dataset {EDIT_SET} --out {{tmp}}/s",
        "nope",
    ),
    Case(
        "score-edit-dataset-missing",
        f"editing score --generations {EDIT_RESULTS} --dataset {{tmp}}/n.json --out {{tmp}}/s",
        "n.json",
    ),
    Case(
        "score-edit-unknown-labels",
        f"editing score --generations {EDIT_RESULTS} --dataset {EDIT_SET} --out {{tmp}}/s --labels theirs",
        "theirs",
    ),
    Case(
        "score-edit-out-is-file",
        f"editing score --generations {EDIT_RESULTS} --dataset {EDIT_SET} --out {{tmp}}/notes.txt",
        "notes.txt",
    ),
    # --- editing run
    Case("edit-no-source", f"editing run {MOCK}", "--from/--dataset"),
    Case("edit-from-missing", f"editing run {MOCK} --method ike --from {{tmp}}/nope", "nope"),
    Case("edit-dataset-invalid", f"editing run {MOCK} --method ike --dataset {{tmp}}/bad.json", "bad.json"),
    Case("edit-unknown-method", f"editing run {MOCK} --dataset {EDIT_SET} --method finetune", "finetune"),
    Case("edit-unknown-mode", f"editing run {MOCK} --dataset {EDIT_SET} --mode parallel", "parallel"),
    Case("edit-batch-rome", f"editing run {MOCK} --dataset {EDIT_SET} --method rome --mode batch", "--mode"),
    Case("edit-scaling-word", f"editing run {MOCK} --dataset {EDIT_SET} --scaling half", "--scaling"),
    Case("edit-scaling-above-one", f"editing run {MOCK} --dataset {EDIT_SET} --scaling 1.5", "--scaling"),
    Case("edit-unknown-select", f"editing run {MOCK} --from {{tmp}}/run --select newest", "newest"),
    Case("edit-rome-on-mock", f"editing run {MOCK} --dataset {EDIT_SET} --method rome --out {{tmp}}/e", "rome"),
    Case(
        "edit-hparams-missing",
        f"editing run {MOCK} --dataset {EDIT_SET} --hparams {{tmp}}/n.yaml --out {{tmp}}/e",
        "n.yaml",
    ),
    Case(
        "edit-hparams-unknown-key",
        f"editing run {MOCK} --dataset {EDIT_SET} --hparams {{tmp}}/obj.json --out {{tmp}}/e",
        "obj.json",
    ),
    Case(
        "edit-hparams-wrong-type",
        f"editing run {MOCK} --dataset {EDIT_SET} --hparams {{tmp}}/hp.yaml --out {{tmp}}/e",
        "v_lr",
        _write("hp.yaml", "v_lr: fast\n"),
    ),
    Case(
        "edit-hparams-empty-layers",
        f"editing run {MOCK} --dataset {EDIT_SET} --hparams {{tmp}}/hp.yaml --out {{tmp}}/e",
        "layers",
        _write("hp.yaml", "layers: []\n"),
    ),
    Case("edit-serac-scope-unknown", f"editing run {MOCK} --dataset {EDIT_SET} --serac-scope keywords", "keywords"),
    Case(
        "edit-serac-scope-missing-nli",
        f"editing run {MOCK} --dataset {EDIT_SET} --method serac --serac-scope nli:{{tmp}}/no-such-nli --out {{tmp}}/e",
        "no-such-nli",
    ),
    Case(
        "edit-serac-threshold-above-one",
        f"editing run {MOCK} --dataset {EDIT_SET} --serac-threshold 2",
        "--serac-threshold",
    ),
    Case(
        "edit-prompts-missing",
        f"editing run {MOCK} --dataset {EDIT_SET} --wording {{tmp}}/n.json --out {{tmp}}/e",
        "n.json",
    ),
    Case(
        "edit-prompts-invalid",
        f"editing run {MOCK} --dataset {EDIT_SET} --wording {{tmp}}/bad.json --out {{tmp}}/e",
        "bad.json",
    ),
    Case(
        "edit-stats-corpus-missing",
        f"editing run {MOCK} --dataset {EDIT_SET} --method memit --stats-corpus {{tmp}}/n.txt --out {{tmp}}/e",
        "n.txt",
    ),
    Case("edit-ray-with-rome", f"editing run {MOCK} --dataset {EDIT_SET} --method rome --engine ray", "--engine"),
    Case(
        "edit-engine-unreachable",
        f"editing run {MOCK} --dataset {EDIT_SET} --method ike --out {{tmp}}/e --engine ray:127.0.0.1:{{port}}",
        "--engine",
    ),
    Case("edit-limit-word", f"editing run {MOCK} --dataset {EDIT_SET} --balanced-limit few", "--balanced-limit"),
    # --- second round: damaged data of the right name
    Case("outdated-instruction-folder", f"outdated run {MOCK} --instruction-file {{tmp}}/folder", "folder"),
    Case(
        "outdated-snapshot-user-damaged",
        f"outdated run {MOCK} --snapshot mine",
        "mine",
        _write("home/snapshots/mine.json", "{not json"),
    ),
    Case("outdated-model-openai-bad-port", "outdated run -m openai:m@http://127.0.0.1:99999/v1", "openai", spec=True),
    Case("outdated-model-empty-name", "outdated run -m =mock:constant=x", "=mock:constant=x", spec=True),
    Case("outdated-model-hf-bad-id", "outdated run -m 'hf:not a/valid id'", "not a/valid id", spec=True),
    Case(
        "outdated-facts-rows-wrong",
        f"outdated run {MOCK} --facts {{tmp}}/facts.json",
        "facts.json",
        _write("facts.json", '{"facts": [{"fact_id": 3}]}'),
    ),
    Case(
        "score-gold-list", "outdated score --generations {tmp}/gens --gold {tmp}/list.json --out {tmp}/s", "list.json"
    ),
    Case("score-unknown-snapshot", "outdated score --generations {tmp}/gens --snapshot nope --out {tmp}/s", "nope"),
    Case(
        "score-answers-invalid",
        "outdated score --generations {tmp}/gens2 --out {tmp}/s",
        "countries_byGDP",
        _write("gens2/countries_byGDP_answers.json", "{not json"),
    ),
    Case("score-out-is-file", "outdated score --generations {tmp}/gens --out {tmp}/notes.txt", "notes.txt"),
    Case(
        "conflicts-dynamicqa-csv-columns",
        f"conflicts run dynamicqa {MOCK} --data {{tmp}}/dq",
        "dq",
        _write("dq/Temporal_final.csv", "a,b\n1,2\n"),
    ),
    Case("conflicts-mulan-rows-wrong", f"conflicts run mulan {MOCK} {MULAN} --data {{tmp}}/q.jsonl", "q.jsonl"),
    Case("conflicts-templates-invalid", f"conflicts run mulan {MOCK} {MULAN} --templates {{tmp}}/bad.json", "bad.json"),
    Case("conflicts-out-is-file", f"conflicts run dynamicqa {MOCK} {DYNAMICQA} --out {{tmp}}/notes.txt", "notes.txt"),
    Case("contexts-data-rows-wrong", f"conflicts contexts {MOCK} {MULAN} --data {{tmp}}/obj.json", "obj.json"),
    Case(
        "recency-data-rows-wrong",
        f"recency eval {MOCK} --data {{tmp}}/rows.json",
        "rows.json",
        _write("rows.json", '[{"question": 3}]'),
    ),
    Case("recency-prompt-no-question", f"recency eval {MOCK} {RECENCY} --prompt-file {{tmp}}/notes.txt", "notes.txt"),
    Case("label-questions-rows-wrong", f"recency label {{tmp}}/obj.json --labeller {MOCK[3:]}", "obj.json"),
    Case("label-voter-bad-spec", "recency label {tmp}/q.jsonl --voter banana:split", "banana:split", spec=True),
    Case("gate-questions-invalid", f"recency gate --questions {{tmp}}/bad.json {MOCK}", "bad.json"),
    Case("gate-two-models", f"recency gate 'Who?' {MOCK} {MOCK}", "--model"),
    Case("snapshot-show-user-damaged", "snapshot show mine", "mine", _write("home/snapshots/mine.json", "[1]")),
    Case(
        "snapshot-diff-damaged",
        "snapshot diff mine 2023-12-18",
        "mine",
        _write("home/snapshots/mine.json", "{not json"),
    ),
    Case(
        "dataset-from-other-lens",
        "editing dataset --from {tmp}/run --out {tmp}/e.json",
        "run.json",
        _edit_run_json(_set("lens", "recency")),
    ),
    Case(
        "dataset-from-config-list",
        "editing dataset --from {tmp}/run --out {tmp}/e.json",
        "run.json",
        _edit_run_json(_set("config", [1])),
    ),
    Case(
        "dataset-from-no-items",
        "editing dataset --from {tmp}/run --out {tmp}/e.json",
        "items.jsonl",
        lambda tmp: (tmp / "run" / "items.jsonl").unlink(),
    ),
    Case("dataset-out-folder", "editing dataset --from {tmp}/run --out {tmp}/folder", "folder"),
    Case("dataset-out-not-ours", "editing dataset --from {tmp}/run --out {tmp}/obj.json", "obj.json"),
    Case(
        "score-edit-generations-file",
        f"editing score --generations {{tmp}}/notes.txt --dataset {EDIT_SET} --out {{tmp}}/s",
        "notes.txt",
    ),
    Case(
        "score-edit-dataset-invalid",
        f"editing score --generations {EDIT_RESULTS} --dataset {{tmp}}/bad.json --out {{tmp}}/s",
        "bad.json",
    ),
    Case(
        "score-edit-unknown-model",
        f"editing score --generations {EDIT_RESULTS} --dataset {EDIT_SET} --out {{tmp}}/s --only-model gpt-9",
        "gpt-9",
    ),
    Case(
        "edit-from-other-lens",
        f"editing run {MOCK} --method ike --from {{tmp}}/run",
        "run.json",
        _edit_run_json(_set("lens", "conflicts")),
    ),
    Case(
        "edit-from-items-garbage",
        f"editing run {MOCK} --method ike --from {{tmp}}/run",
        "items.jsonl",
        _write("run/items.jsonl", "garbage\n"),
    ),
    Case("edit-scaling-zero", f"editing run {MOCK} --dataset {EDIT_SET} --scaling 0", "--scaling"),
    Case(
        "edit-save-edited-file",
        f"editing run {MOCK} --dataset {EDIT_SET} --method ike --save-edited {{tmp}}/notes.txt",
        "notes.txt",
    ),
    Case(
        "edit-stats-corpus-empty",
        f"editing run {MOCK} --dataset {EDIT_SET} --method memit --stats-corpus {{tmp}}/empty.json",
        "empty.json",
    ),
    Case(
        "edit-counterfactual-bad-spec",
        f"editing run {MOCK} --dataset {EDIT_SET} --method serac --serac-counterfactual banana:split",
        "banana:split",
        spec=True,
    ),
    Case("edit-dataset-rows-wrong", f"editing run {MOCK} --method ike --dataset {{tmp}}/list.json", "list.json"),
    Case(
        "results-old-summary-invalid",
        "results {tmp}/run",
        "summary.json",
        lambda tmp: (_no_run_json(tmp), (tmp / "run" / "summary.json").write_text("{not json")),
    ),
    Case(
        "results-old-summary-layout",
        "results {tmp}/run",
        "summary.json",
        lambda tmp: (_no_run_json(tmp), (tmp / "run" / "summary.json").write_text('{"models": 1, "overall_key": 2}')),
    ),
    Case(
        "card-old-summary-layout",
        "card {tmp}/run --out {tmp}/c.html",
        "summary.json",
        lambda tmp: (_no_run_json(tmp), (tmp / "run" / "summary.json").write_text('{"models": [1], "overall_key": 2}')),
    ),
    Case("card-out-under-file", "card {tmp}/run --out {tmp}/notes.txt/c.html", "notes.txt"),
    Case("results-out-under-file", "results {tmp}/run --out {tmp}/notes.txt/t.csv", "notes.txt"),
    Case(
        "edit-model-bad-spec",
        f"editing run -m banana:split --dataset {EDIT_SET} --method ike",
        "banana:split",
        spec=True,
    ),
    Case("outdated-second-model-bad", f"outdated run {MOCK} -m banana:split", "banana:split"),
    Case("outdated-model-openai-no-host", "outdated run -m openai:m@http:///v1", "openai:m@http:///v1", spec=True),
    # --- results and card
    Case("results-missing", "results {tmp}/nope", "nope"),
    Case("results-file", "results {tmp}/notes.txt", "notes.txt"),
    Case("results-empty-folder", "results {tmp}/folder", "folder"),
    Case("results-unknown-format", "results {tmp}/run --format xml", "--format"),
    Case("results-table-to-file", "results {tmp}/run --format table --out {tmp}/t.csv", "--format"),
    Case("results-parquet-to-terminal", "results {tmp}/run --format parquet", "--format"),
    Case("results-unknown-suffix", "results {tmp}/run --out {tmp}/t.txt", "--out"),
    Case("results-out-folder", "results {tmp}/run --out {tmp}/folder", "--out"),
    Case("results-out-inside-run", "results {tmp}/run --out {tmp}/run/t.csv", "--out"),
    Case("card-missing", "card {tmp}/nope --out {tmp}/c.html", "nope"),
    Case("card-out-folder", "card {tmp}/run --out {tmp}/folder", "--out"),
    Case("card-out-not-a-card", "card {tmp}/run --out {tmp}/notes.txt", "notes.txt"),
    *(Case(f"results-{name}", "results {tmp}/run", where, damage) for name, damage, where in RUN_DAMAGE),
    *(Case(f"card-{name}", "card {tmp}/run --out {tmp}/c.html", where, damage) for name, damage, where in RUN_DAMAGE),
    Case("card-no-run-json-nor-summary", "card {tmp}/run --out {tmp}/c.html", "run", _no_result_files),
    # --- compare, and the check's comparisons (issue 35)
    Case("compare-one-run", "compare {tmp}/run", "compare"),
    Case("compare-missing", "compare {tmp}/run {tmp}/nope", "nope"),
    Case("compare-parquet-to-terminal", "compare {tmp}/run {tmp}/run --format parquet", "--format"),
    Case("compare-out-not-a-table", "compare {tmp}/run {tmp}/run --out {tmp}/notes.txt", "notes.txt"),
    Case("compare-out-inside-run", "compare {tmp}/run {tmp}/run --out {tmp}/run/t.csv", "--out"),
    # a user's own empty JSON list carries no mark of a table of ours: never overwritten (issue 44 §3)
    Case("compare-out-user-empty-list", "compare {tmp}/run {tmp}/run --out {tmp}/user_empty_list.json", "user_empty"),
    Case("results-out-user-empty-list", "results {tmp}/run --out {tmp}/user_empty_list.json", "user_empty_list"),
    *(Case(f"compare-{name}", "compare {tmp}/run {tmp}/run", where, damage) for name, damage, where in RUN_DAMAGE),
    Case("check-baseline-not-a-check", f"check {MOCK} --lens outdated --baseline {{tmp}}/run", "--baseline"),
    Case("check-delta-without-baseline", f"check {MOCK} --require outdated.inconsistency_pct.delta<=0", "--require"),
    Case("check-precision-zero", f"check {MOCK} --lens outdated --precision 0", "--precision"),
    Case("check-precision-not-a-number", f"check {MOCK} --lens outdated --precision abc", "--precision: "),
    Case("outdated-limit-not-a-number", f"outdated run {MOCK} --limit abc", "--limit: "),
    Case("outdated-dtype-unknown", f"outdated run {MOCK} --dtype float8", "--dtype: 'float8' is not one of"),
    # --- the knowledge-date options (issue 24 §3)
    Case("outdated-cutoff-twice", f"outdated run -m m={MOCK[3:]} --cutoff m=2023-01 --cutoff m=2024-01", "already has"),
    Case(
        "outdated-cutoff-twice-by-two-names",
        f"outdated run -m m={MOCK[3:]} --cutoff m=2023-01 --cutoff {MOCK[3:]}=2024-01",
        "'mock:constant=Paris' already has a cutoff ('m=2023-01')",
    ),
    Case("outdated-cutoff-unknown-lists-each-name-once", "outdated run --cutoff x=2023", "models: smollm2"),
    Case("outdated-deployed-at-empty", f"outdated run {MOCK} --deployed-at ''", "--deployed-at"),
    Case("outdated-deployed-at-before-snapshot", f"outdated run {MOCK} --deployed-at 1300", "before 1396-01-01"),
    Case(
        "score-deployed-at-empty",
        "outdated score --generations {tmp}/gens --out {tmp}/s --deployed-at ''",
        "--deployed-at",
    ),
    Case(
        "score-deployed-at-before-gold",
        "outdated score --generations {tmp}/gens --out {tmp}/s --deployed-at 1300",
        "1396",
    ),
    Case(
        "score-log-deployed-at-empty",
        "outdated score --generations {tmp}/lm --out {tmp}/s --deployed-at ''",
        "--deployed-at",
        _lm_samples,
    ),
    Case(
        "score-log-deployed-at-before-snapshot",
        "outdated score --generations {tmp}/lm --out {tmp}/s --deployed-at 1300",
        "before 1396-01-01",
        _lm_samples,
    ),
    Case(
        "score-log-cutoff-by-folder-name",
        "outdated score --generations {tmp}/lm --out {tmp}/s --cutoff lm=2023-06",
        "no model named 'lm'; models: my-model",
        _lm_samples,
    ),
    Case(
        "score-log-cutoff-twice",
        "outdated score --generations {tmp}/lm --out {tmp}/s --cutoff my-model=2023-06 --cutoff 2024-01",
        "'my-model' already has a cutoff",
        _lm_samples,
    ),
    # --- options and outputs (issue 24 §4): refused where the options are read, for every backend
    Case("outdated-max-new-tokens-too-many", f"outdated run {MOCK} --max-new-tokens 100000", "range, 1 to 4096"),
    Case("llamacpp-max-new-tokens-too-many", "outdated run -m llamacpp:smollm2 --max-new-tokens 100000", "1 to 4096"),
    Case("recency-max-new-tokens-too-many", f"recency eval {MOCK} {RECENCY} --max-new-tokens 5000", "1 to 4096"),
    Case(
        "editing-max-new-tokens-too-many",
        f"editing run {MOCK} --method ike --dataset {EDIT_SET} --max-new-tokens 5000",
        "--max-new-tokens: 5000 new tokens is outside the allowed range, 1 to 4096",
    ),
    Case(
        "contexts-max-new-tokens-too-many",
        f"conflicts contexts {MOCK} {MULAN} --max-new-tokens 5000 --out {{tmp}}/ctx.jsonl",
        "1 to 4096",
    ),
    Case(
        "llamacpp-device-map", "outdated run -m llamacpp:smollm2 --device-map auto", "--device-map auto does not apply"
    ),
    Case(
        "llamacpp-second-model-dtype-and-quantize",
        f"outdated run {MOCK} -m llamacpp:smollm2 --dtype float16 --quantize 8bit",
        "--dtype float16, --quantize 8bit do not apply",
    ),
    # --- issue 33 §2: the snapshot tools, results and card over damaged, mixed and future inputs
    Case("snapshot-show-empty-name", "snapshot show ''", "SNAPSHOT"),
    Case("snapshot-show-a-path-up", "snapshot show ../no-such/x.json", "snapshot file not found"),
    Case(
        "snapshot-show-from-the-future",
        "snapshot show future",
        "retrieved 2999-01-01, after today",
        _future_snapshot,
    ),
    Case("snapshot-diff-from-the-future", "snapshot diff dyknow-2023-12-18 future", "future.json", _future_snapshot),
    Case("snapshot-show-binary", "snapshot show mine", "is not UTF-8", _write_bytes("home/snapshots/mine.json")),
    Case(
        "snapshot-show-no-answers",
        "snapshot show mine",
        "missing 'answers'",
        _write("home/snapshots/mine.json", '{"name": "mine", "retrieved": "2023-01-01"}'),
    ),
    Case(
        "snapshot-show-fact-wrong",
        "snapshot show mine",
        "mine.json fact Q1",
        _write("home/snapshots/mine.json", '{"name": "m", "retrieved": "2023-01-01", "answers": {"Q1": 5}}'),
    ),
    Case("snapshot-fetch-name-shipped", "snapshot fetch --name dyknow-2023-12-18", "is a shipped snapshot's name"),
    Case("snapshot-fetch-name-up", "snapshot fetch --name ../evil", "--name"),
    Case("snapshot-fetch-name-empty", "snapshot fetch --name ''", "--name"),
    Case(
        "snapshot-fetch-name-taken",
        "snapshot fetch --name mine",
        "already exists; pass --replace",
        _write("home/snapshots/mine.json", "{}"),
    ),
    Case("results-only-run-damaged", "results {tmp}/holder", "holder/run/run.json", _damaged_holder),
    Case("card-only-run-damaged", "card {tmp}/holder --out {tmp}/c.html", "holder/run/run.json", _damaged_holder),
    Case("card-out-onto-run-json", "card {tmp}/run --out {tmp}/run/run.json", "exists and is not a chronoprobe card"),
    Case("card-out-onto-the-input", "card {tmp}/run --out {tmp}/run", "--out"),
    Case("card-out-onto-report-md", "card {tmp}/run --out {tmp}/run/report.md", "is not a chronoprobe card"),
    Case("results-out-onto-summary", "results {tmp}/run --out {tmp}/run/summary.json", "--out"),
    Case(
        "template-date-not-a-day",
        f"outdated run {MOCK} --template-date today",
        "--template-date: 'today' is not as-of, template or a date YYYY-MM-DD",
    ),
    Case(
        "template-date-no-such-day",
        f"recency eval {MOCK} {RECENCY} --template-date 2023-02-30",
        "--template-date: '2023-02-30'",
    ),
    Case("export-out-inside-run", "export lm-eval --out {tmp}/run/task", "lies inside"),
    Case("export-out-is-run", "export lm-eval --out {tmp}/run", "--out"),
    Case("outdated-out-inside-run", f"outdated run {MOCK} --out {{tmp}}/run/again", "lies inside"),
    Case("score-out-inside-run", "outdated score --generations {tmp}/gens --out {tmp}/run/scored", "lies inside"),
    # --- the call cache
    Case("cache-info-folder", "cache info --cache {tmp}/folder", "is a folder"),
    Case("cache-info-not-sqlite", "cache info --cache {tmp}/bad.json", "is not an SQLite database"),
    Case("cache-prune-nothing-chosen", "cache prune --cache {tmp}/calls.sqlite", "say what to remove"),
    Case("cache-prune-negative-age", "cache prune --older-than -1", "--older-than -1"),
    Case("cache-prune-age-word", "cache prune --older-than week", "--older-than"),
    Case("cache-prune-missing-cache", "cache prune --cache {tmp}/none.sqlite --model-id x", "none.sqlite"),
]


def _prepare(tmp: Path, good_run: Path) -> None:
    (tmp / "empty.json").write_text("")
    (tmp / "bad.json").write_text("{not json")
    (tmp / "list.json").write_text("[1, 2]")
    (tmp / "obj.json").write_text('{"surprise": 1}')
    (tmp / "notes.txt").write_text("my own notes\n")
    (tmp / "user_empty_list.json").write_text("[]")
    (tmp / "q.jsonl").write_text('{"question": "Who is the CEO of Walmart?"}\n')
    (tmp / "folder").mkdir()
    (tmp / "gens").mkdir()
    (tmp / "gens" / "countries_byGDP_answers.json").write_text("{}")
    shutil.copytree(good_run, tmp / "run")


def _paths(root: Path) -> set[Path]:
    ignored = ("home", "calls.sqlite")
    return {p for p in root.rglob("*") if not p.relative_to(root).parts[0].startswith(ignored)}


def _refuse_models(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("a model was loaded before the bad input was reported")


def _argv(case: Case, tmp: Path) -> list[str]:
    text = case.argv.replace("{tmp}", str(tmp)).replace("{port}", str(_unreachable_port()))
    argv = shlex.split(text)
    runs_models = argv[:2] in (["outdated", "run"], ["conflicts", "run"], ["conflicts", "contexts"], ["editing", "run"])
    runs_models = runs_models or (argv[:1] == ["recency"] and argv[:2] != ["recency", "route"])
    if runs_models and "--cache" not in argv:
        argv += ["--cache", str(tmp / "calls.sqlite")]
    if runs_models and "--out" not in argv and argv[:2] != ["recency", "gate"] and not case.default_out:
        argv += ["--out", str(tmp / "report")]  # the default folder under results/ is another case
    return argv


@pytest.mark.e2e
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input_is_one_clean_line(
    case: Case,
    good_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    if not case.spec:
        monkeypatch.setattr("chronoprobe.contract.runner.load_backend", _refuse_models)
        # where the name is used: a module imported while chronoprobe.judges.load_judge was replaced keeps the
        # replacement for good (the order-dependent failure of conflicts-unknown-judge)
        monkeypatch.setattr("chronoprobe.lenses.conflicts.lens.load_judge", _refuse_models)
        monkeypatch.setattr("chronoprobe.judges.embedding.Embedder.__init__", _refuse_models)
    _prepare(tmp_path, good_run)
    if case.damage is not None:
        case.damage(tmp_path)
    before, state = _paths(tmp_path), tree_state(tmp_path)
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *_argv(case, tmp_path)])
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main()
    err = capsys.readouterr().err
    lines = said_lines(err)
    assert stopped.value.code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "Invalid value for" not in err, err  # click's form, retired: the option, a colon, the problem
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert case.expected in lines[0], err
    left = sorted(str(p.relative_to(tmp_path)) for p in _paths(tmp_path) - before)
    assert not left, f"left behind: {left}"
    assert changes(state, tree_state(tmp_path)) == []  # nothing of what was there changed or went


def test_staleness_of_a_run_whose_block_lacks_a_key_names_file_and_key(good_run: Path, tmp_path: Path) -> None:
    """The staleness curves are the report's (its summary.json), not records: a damaged block there is named."""
    folder = tmp_path / "run"
    shutil.copytree(good_run, folder)
    layout = json.loads((folder / "summary.json").read_text())
    [key] = layout["models"]
    del layout["models"][key]["knowledge_date"]["per_category"]
    (folder / "summary.json").write_text(json.dumps(layout))
    with pytest.raises(cp.DataError) as refused:
        cp.staleness(folder)
    assert refused.value.where == str(folder / "summary.json")
    assert f"models.{key}.knowledge_date.per_category: Field required" in refused.value.problem
