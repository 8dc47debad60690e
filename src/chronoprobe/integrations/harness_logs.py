"""Harness logs back into chronoprobe: answers from inspect_ai or lm-eval, judged and written as a run folder.

``chronoprobe outdated score --generations <log>`` accepts:

- an inspect log (``.eval`` or ``.json``), or a folder of them: every sample whose metadata
  carries a catalogue ``fact_id`` (our ``chronoprobe/outdated`` task's do, and any task may);
- lm-eval's ``--log_samples`` output: a ``samples_*.jsonl`` file, or a folder holding them (at any
  depth, as lm-eval nests them under the model's name), from the exported ``chronoprobe_outdated``
  task or any task whose documents carry ``fact_id``.

The answers are judged as ``outdated run`` judges its own (:mod:`chronoprobe.integrations.outdated_items`),
and the folder is the one ``outdated run`` writes (``run.json``, ``items.jsonl``, the report), so
``chronoprobe results``, ``chronoprobe card`` and the knowledge-date estimate read it as any run.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.integrations.outdated_items import response_record
from chronoprobe.integrations.run_folder import outdated_run
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import Fact
from chronoprobe.lenses.outdated.cutoffs import parse_cutoffs
from chronoprobe.lenses.outdated.knowledge_date import check_deployed_at

if TYPE_CHECKING:
    from chronoprobe.integrations.run_folder import HarnessRun

INSPECT_SUFFIXES = (".eval", ".json")
LM_EVAL_PATTERN = "samples_*.jsonl"


@dataclass(frozen=True)
class HarnessAnswer:
    """One generated answer to one paraphrase, as a harness logged it."""

    model: str
    fact_id: str
    template_index: int | None
    prompt: str
    text: str
    where: str


@dataclass
class HarnessLog:
    harness: str
    """``inspect_ai`` or ``lm-eval``."""
    files: list[Path]
    answers: list[HarnessAnswer]
    generation: dict[str, Any] = field(default_factory=dict)
    """Decoding settings as the log states them, per model."""
    versions: dict[str, str] = field(default_factory=dict)


# --- which harness --------------------------------------------------------------------------------


def _inspect_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix in INSPECT_SUFFIXES and not path.name.startswith("results_") else []
    return sorted(p for p in path.iterdir() if p.suffix == ".eval" or _is_inspect_json(p))


def _is_inspect_json(path: Path) -> bool:
    if path.suffix != ".json" or not path.is_file() or path.name.startswith("results_"):
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            head = handle.read(4096)
    except (OSError, UnicodeDecodeError):  # not text: not an inspect log (a .eval is read as a zip instead)
        return False
    return '"eval"' in head and '"version"' in head


def _lm_eval_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix == ".jsonl" else []
    return sorted(path.rglob(LM_EVAL_PATTERN))


def is_harness_log(path: Path) -> bool:
    """True when ``path`` is an inspect log or lm-eval samples (file or folder), not a DyKnow answers folder."""
    if not path.exists():
        return False
    if path.is_dir() and any(path.glob("*_answers.json")):
        return False
    return bool(_inspect_files(path) or _lm_eval_files(path))


def read_harness_log(path: Path, facts: dict[str, Fact]) -> HarnessLog:
    """Every answer to a catalogue fact in ``path``; a DataError when there is none."""
    if not path.exists():
        raise DataError(str(path), "no such file or folder")
    inspect_files, lm_eval_files = _inspect_files(path), _lm_eval_files(path)
    if inspect_files and lm_eval_files:
        raise DataError(str(path), "holds both inspect logs and lm-eval samples; point at one of them")
    log = _read_inspect(inspect_files) if inspect_files else _read_lm_eval(lm_eval_files)
    if not log.files:
        raise DataError(str(path), "not an inspect log (.eval/.json) nor lm-eval samples (samples_*.jsonl)")
    log.answers = [_with_template(a, facts) for a in log.answers]
    if not log.answers:
        raise DataError(str(path), "no sample carries a chronoprobe fact_id (metadata for inspect, doc for lm-eval)")
    seen: dict[tuple[str, str, int | None], str] = {}
    for answer in log.answers:
        key = (answer.model, answer.fact_id, answer.template_index)
        if key in seen:
            raise DataError(
                answer.where,
                f"answers {answer.fact_id!r} paraphrase {answer.template_index} for {answer.model} again "
                f"(first in {seen[key]}); score one log per model and task",
            )
        seen[key] = answer.where
    return log


def _with_template(answer: HarnessAnswer, facts: dict[str, Fact]) -> HarnessAnswer:
    """Check the fact id and find the paraphrase, from metadata or the prompt text."""
    fact = facts.get(answer.fact_id)
    if fact is None:
        raise DataError(answer.where, f"fact_id {answer.fact_id!r} is not in the catalogue")
    index = answer.template_index
    if index is None:
        found = [i for i, t in enumerate(fact.templates) if t in answer.prompt]
        if len(found) != 1:
            raise DataError(answer.where, "no template_index and the prompt names none of the fact's paraphrases")
        index = found[0]
    if not 0 <= index < len(fact.templates):
        raise DataError(answer.where, f"template_index {index} is out of range for {answer.fact_id!r}")
    return HarnessAnswer(answer.model, answer.fact_id, index, answer.prompt, answer.text, answer.where)


# --- inspect ----------------------------------------------------------------------------------------


def _read_inspect(files: list[Path]) -> HarnessLog:
    try:
        from inspect_ai.log import read_eval_log  # deferred: inspect_ai (an extra)
    except ImportError:
        raise ConfigError(
            "--generations", "reading inspect logs needs inspect_ai: pip install 'chronoprobe[inspect]'"
        ) from None
    log = HarnessLog(harness="inspect_ai", files=[], answers=[])
    for path in files:
        try:
            eval_log = read_eval_log(str(path))
        except Exception as exc:  # inspect raises many types for a damaged log
            raise DataError(str(path), f"inspect could not read it ({type(exc).__name__}: {exc})") from None
        _check_finished(eval_log, path)
        model = str(eval_log.eval.model)
        log.files.append(path)
        log.versions["inspect_ai"] = str(eval_log.eval.packages.get("inspect_ai", ""))
        log.generation[model] = eval_log.plan.config.model_dump(exclude_none=True) if eval_log.plan else {}
        for sample in eval_log.samples or []:
            metadata = sample.metadata or {}
            # A sample that failed has no answer to judge; later epochs repeat the first.
            if "fact_id" not in metadata or sample.epoch != 1 or sample.error is not None:
                continue
            where = f"{path} [sample {sample.id}]"
            log.answers.append(
                HarnessAnswer(
                    model=model,
                    fact_id=str(metadata["fact_id"]),
                    template_index=_template_index(metadata.get("template_index"), where),
                    prompt=sample.input if isinstance(sample.input, str) else _last_user_text(sample.input),
                    text=sample.output.completion if sample.output else "",
                    where=where,
                )
            )
    return log


def _check_finished(eval_log: Any, path: Path) -> None:
    """A log that did not finish, or whose every sample failed, has no answer to judge: say what happened."""
    samples = list(eval_log.samples or [])
    errored = [sample for sample in samples if sample.error is not None]
    status = str(eval_log.status)
    if status == "success" and (not samples or len(errored) < len(samples)):
        return
    first = eval_log.error or (errored[0].error if errored else None)
    message = _one_line(str(getattr(first, "message", "") or "")) if first is not None else ""
    what = "did not finish" if status != "success" else "finished, but every sample failed"
    counted = f"{len(errored)} of {len(samples)} samples errored"
    raise DataError(
        str(path),
        f"the inspect run {what} (status {status}; {counted})" + (f"; first error: {message}" if message else ""),
    )


def _one_line(text: str, limit: int = 240) -> str:
    joined = " ".join(text.split())
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def _template_index(value: Any, where: str) -> int | None:
    """A paraphrase number as a harness stored it: an integer (or its digits); None when it is absent."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    raise DataError(where, f"template_index {value!r} is not an integer")


def _last_user_text(messages: Any) -> str:
    texts = [m.text for m in messages if getattr(m, "role", None) == "user"]
    return str(texts[-1]) if texts else ""


# --- lm-eval ----------------------------------------------------------------------------------------


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(str(path), f"cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        broken = exc.object[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{broken}", "not UTF-8 text; lm-eval writes its samples as UTF-8 JSON lines") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataError(f"{path}:{number}", f"not valid JSON ({exc})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}:{number}", "expected one JSON object per line")
        yield number, row


def _lm_eval_model(samples_file: Path) -> tuple[str, dict[str, Any], str]:
    """Model name, generation settings and lm-eval version from the results file beside the samples."""
    results = sorted(samples_file.parent.glob("results_*.json"))
    if not results:
        return samples_file.parent.name, {}, ""
    path = results[-1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(str(path), f"cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:  # bad JSON, or not UTF-8
        raise DataError(str(path), f"not lm-eval's results file: not valid UTF-8 JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(str(path), f"not lm-eval's results file: expected a JSON object, found {_json_type(data)}")
    config = _object(data, "config", path)
    args = config.get("model_args")
    name = data.get("model_name") or (f"{config.get('model')}:{args}" if args else samples_file.parent.name)
    task_configs = _object(data, "configs", path)
    first = next(iter(task_configs.items()), None)
    generation = _object(first[1], "generation_kwargs", path, f"configs.{first[0]}") if first else {}
    chat = {"apply_chat_template": bool(data.get("chat_template"))}
    return str(name), {**generation, **chat}, str(data.get("lm_eval_version") or "")


def _object(data: Any, key: str, path: Path, within: str = "") -> dict[str, Any]:
    """``data[key]`` of lm-eval's results file, an object (absent or null: empty); a DataError naming it otherwise."""
    where = f"{within}.{key}" if within else key
    if not isinstance(data, dict):
        raise DataError(str(path), f"{within} is {_json_type(data)}, expected an object")
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(str(path), f"{where} is {_json_type(value)}, expected an object")
    return value


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), "null" if value is None else type(value).__name__)


def _response_text(row: dict[str, Any], where: str) -> str:
    filtered = row.get("filtered_resps")
    if isinstance(filtered, list) and filtered:
        first = filtered[0]
        if isinstance(first, list):  # unfiltered form: one list per request
            first = first[0] if first else ""
        if isinstance(first, str):
            return first
    raise DataError(where, "no generated text (filtered_resps): was this a generate_until task?")


def _request_prompt(row: dict[str, Any]) -> str:
    arguments = row.get("arguments")
    if isinstance(arguments, dict):
        first: Any = next(iter(arguments.values()), {})
        return str(first.get("arg_0", "")) if isinstance(first, dict) else ""
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], list):
        return str(arguments[0][0])
    return ""


def _read_lm_eval(files: list[Path]) -> HarnessLog:
    log = HarnessLog(harness="lm-eval", files=[], answers=[])
    for path in files:
        model, generation, version = _lm_eval_model(path)
        log.files.append(path)
        log.generation[model] = generation
        if version:
            log.versions["lm_eval"] = version
        for number, row in _jsonl(path):
            doc = row.get("doc")
            if not isinstance(doc, dict) or "fact_id" not in doc:
                continue
            where = f"{path}:{number}"
            log.answers.append(
                HarnessAnswer(
                    model=model,
                    fact_id=str(doc["fact_id"]),
                    template_index=_template_index(doc.get("template_index"), where),
                    prompt=_request_prompt(row) or str(doc.get("prompt", "")),
                    text=_response_text(row, where),
                    where=where,
                )
            )
    return log


# --- scoring into a run folder ------------------------------------------------------------------------


def judge_harness_log(
    path: Path,
    out: Path,
    *,
    snapshot: str | None = None,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
    cutoffs: Sequence[str] = (),
    deployed_at: str | None = None,
) -> HarnessRun:
    """Judge every answer in a harness log as ``outdated run`` judges it: the run folder ``out`` will hold.

    ``cutoffs``: ``--cutoff`` values, ``NAME=YYYY-MM`` with NAME the model as the log records it
    (a bare date when the log holds one model); ``deployed_at``: forecast the staleness from that date.
    """

    facts = {f.fact_id: f for f in load_catalogue()}
    gold = load_snapshot(snapshot)
    log = read_harness_log(Path(path), facts)
    models = list(dict.fromkeys(a.model for a in log.answers))
    published = parse_cutoffs(cutoffs, [[m] for m in models])
    check_deployed_at(deployed_at, gold.answers, f"snapshot {gold.name}")
    missing = sorted({a.fact_id for a in log.answers} - set(gold.answers))
    if missing:
        raise DataError(f"snapshot {gold.name}", f"has no answers for {len(missing)} fact(s), e.g. {missing[0]!r}")
    no_gold = {
        a.fact_id: facts[a.fact_id].category for a in log.answers if not gold.answers[a.fact_id].counted().statements
    }
    records = [
        response_record(
            a.model,
            facts[a.fact_id],
            int(a.template_index or 0),
            a.text,
            gold.answers[a.fact_id],
            rendered_prompt=a.prompt,
            use_aliases=use_aliases,
            as_of=as_of,
        )
        for a in log.answers
        if a.fact_id not in no_gold
    ]
    return outdated_run(
        out,
        records,
        gold,
        no_gold=no_gold,
        use_aliases=use_aliases,
        as_of=as_of,
        cutoffs=published,
        deployed_at=deployed_at,
        source={
            "harness": log.harness,
            "generations": str(path),
            "files": [str(f) for f in log.files],
            "harness_generation": log.generation,
            "harness_versions": log.versions,
        },
    )
