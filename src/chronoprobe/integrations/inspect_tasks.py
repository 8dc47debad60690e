"""chronoprobe's questions as inspect_ai tasks: ``chronoprobe/outdated``, ``chronoprobe/recency``.

inspect finds them through the ``inspect_ai`` entry point (pyproject.toml), so after
``pip install 'chronoprobe[inspect]'``::

    inspect eval chronoprobe/outdated --model hf/<local folder> -T snapshot=<name> --limit 10

The model is inspect's; the prompts, the judge and the metrics are ours. ``chronoprobe/conflicts``
exists only to say why it cannot run there (docs/harnesses.md).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, cast

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    Value,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState, generate

from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.datasets.recencyqa import load_recencyqa, stratified_sample
from chronoprobe.errors import ChronoprobeError, ConfigError
from chronoprobe.integrations.outdated_items import judge, load_items
from chronoprobe.lenses.recency.evaluate import (
    DEFAULT_MAX_NEW_TOKENS,
    STRATEGIES,
    EvalConfig,
    FewShotPicker,
    build_items,
    build_prompt,
    resolve_templates,
)
from chronoprobe.lenses.recency.lens import default_data
from chronoprobe.lenses.recency.parse import parse_recency_answer
from chronoprobe.metrics.dyknow import VERDICTS, Verdict, soft_constraint
from chronoprobe.metrics.recency import macro_f1, tolerant_accuracy
from chronoprobe.models.base import Prompt

RATES: tuple[Verdict, ...] = VERDICTS
"""The verdicts whose rates the outdated task reports (per prompt and per fact)."""
MAX_NEW_TOKENS = 20
"""As ``outdated run``'s default --max-new-tokens."""


# --- outdated -------------------------------------------------------------------------------------


def _indicator(verdict: str) -> Callable[[Value], float]:
    def to_float(value: Value) -> float:
        return 1.0 if value == verdict else 0.0

    return to_float


def _prompt_rate(verdict: str) -> Metric:
    """Share of answers with ``verdict`` (every paraphrase counts once)."""
    share = accuracy(to_float=_indicator(verdict))

    @metric(name=verdict)
    def rate() -> Metric:
        return share

    return rate()


def _prompt_stderr(verdict: str) -> Metric:
    """inspect's standard error of that share, clustered by fact (its paraphrases are not independent)."""
    error = stderr(to_float=_indicator(verdict), cluster="fact_id")

    @metric(name=f"{verdict} stderr")
    def rate_stderr() -> Metric:
        return error

    return rate_stderr()


def _soft_verdicts(scores: Sequence[SampleScore]) -> list[SampleScore]:
    """One score per fact: DyKnow's soft constraint over its paraphrases' verdicts."""
    by_fact: dict[str, list[Verdict]] = defaultdict(list)
    for item in scores:
        fact_id = str((item.sample_metadata or {}).get("fact_id", item.sample_id))
        by_fact[fact_id].append(cast(Verdict, item.score.value))
    return [SampleScore(score=Score(value=v), sample_id=f) for f, v in soft_constraint(by_fact).items()]


def _fact_rate(verdict: str, *, with_stderr: bool) -> Metric:
    """Share of facts whose soft-constraint verdict is ``verdict`` (or inspect's stderr of it)."""
    chosen = stderr(to_float=_indicator(verdict)) if with_stderr else accuracy(to_float=_indicator(verdict))
    inner = cast(Callable[[list[SampleScore]], Value], chosen)

    @metric(name=f"per-fact {verdict}{' stderr' if with_stderr else ''}")
    def fact_rate() -> Metric:
        def compute(scores: list[SampleScore]) -> Value:
            return inner(_soft_verdicts(scores))

        return compute

    return fact_rate()


def outdated_metrics() -> list[Metric]:
    metrics: list[Metric] = []
    for verdict in RATES:
        metrics += [_prompt_rate(verdict), _prompt_stderr(verdict)]
    for verdict in RATES:
        metrics += [_fact_rate(verdict, with_stderr=False), _fact_rate(verdict, with_stderr=True)]
    return metrics


@scorer(metrics=outdated_metrics())
def outdated_verdict(
    snapshot: str | None = None, facts: str | None = None, aliases: bool = False, as_of: str | None = None
) -> Scorer:
    """The audit's classifier: the score value is the verdict (up-to-date, outdated, irrelevant, ambiguous).

    Any task whose samples carry ``fact_id`` and ``template_index`` metadata can use it. It takes
    names, not loaded data, so inspect's log records its options in a line.
    """

    items, gold = load_items(snapshot=snapshot, facts=Path(facts) if facts else None)
    by_id = {item.fact.fact_id: item.fact for item in items}
    when = _parse_date(as_of)

    async def score(state: TaskState, target: Target) -> Score:
        fact = by_id[str(state.metadata["fact_id"])]
        index = int(state.metadata["template_index"])
        text = state.output.completion
        found = judge(fact, index, text, gold.answers[fact.fact_id], use_aliases=aliases, as_of=when)
        matched = list(found.matched_labels)
        return Score(
            value=found.verdict,
            answer=text,
            explanation=f"matched {matched} by rule {found.rule}" if matched else "no gold answer named",
            metadata={
                "matched": matched,
                "matched_start_years": [y for y in found.start_years if y is not None],
                "rule": found.rule,
                "snapshot": gold.name,
                "as_of": as_of,
            },
        )

    return score


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """A user's mistake (bad snapshot, date, file) shows in inspect as one line, as in our CLI."""
    try:
        yield
    except ChronoprobeError as exc:
        raise _prerequisite_error(f"error: {exc}") from None


@task
def outdated(
    snapshot: str | None = None,
    as_of: str | None = None,
    facts: str | None = None,
    limit: int | None = None,
    aliases: bool = False,
) -> Task:
    """Is the model outdated? Every paraphrase of every catalogue fact, judged against a Wikidata snapshot.

    ``snapshot``: name or path (default: the shipped one); ``as_of``: judge against what was current
    on that date (YYYY-MM-DD); ``facts``: a catalogue JSON; ``limit``: the first N facts (inspect's
    own ``--limit`` counts samples); ``aliases``: also match Wikidata aliases.
    """

    with _one_line_errors():
        _parse_date(as_of)  # a bad date fails before the model loads
        items, gold = load_items(snapshot=snapshot, facts=Path(facts) if facts else None, limit=limit)
    samples = [
        Sample(input=item.user_message, target="", id=item.sample_id, metadata=item.metadata()) for item in items
    ]
    return Task(
        dataset=MemoryDataset(samples, name="chronoprobe-outdated"),
        solver=generate(),
        scorer=outdated_verdict(snapshot=snapshot, facts=facts, aliases=aliases, as_of=as_of),
        config=GenerateConfig(temperature=0.0, max_tokens=MAX_NEW_TOKENS, seed=0),
        # inspect's default reducer (mean) would turn the verdicts into numbers; mode keeps them.
        epochs=Epochs(1, "mode"),
        metadata={"chronoprobe": "outdated", "snapshot": gold.name, "as_of": as_of},
    )


def _parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError("-T as_of", f"{value!r} is not a date (use YYYY-MM-DD)") from None


# --- recency --------------------------------------------------------------------------------------


def _labels(scores: Sequence[SampleScore]) -> tuple[list[int], list[int | None]]:
    gold = [int((s.score.metadata or {})["gold_class"]) for s in scores]
    pred = [(s.score.metadata or {}).get("predicted_class") for s in scores]
    return gold, [None if p is None else int(p) for p in pred]


@metric(name="macro F1")
def recency_macro_f1() -> Metric:
    """Unweighted mean of per-class F1 over the classes seen (chronoprobe.metrics.recency)."""

    def compute(scores: list[SampleScore]) -> Value:
        return macro_f1(*_labels(scores)) or 0.0

    return compute


@metric(name="accuracy within 1 class")
def recency_tolerant_accuracy() -> Metric:
    """Share of predictions at most one class from gold on the ordered scale."""

    def compute(scores: list[SampleScore]) -> Value:
        return tolerant_accuracy(*_labels(scores)) or 0.0

    return compute


@metric(name="unparseable")
def recency_unparseable() -> Metric:
    def compute(scores: list[SampleScore]) -> Value:
        pred = _labels(scores)[1]
        return sum(p is None for p in pred) / len(pred) if pred else 0.0

    return compute


@scorer(metrics=[accuracy(), stderr(), recency_macro_f1(), recency_tolerant_accuracy(), recency_unparseable()])
def recency_label(*, last: bool = False) -> Scorer:
    """Our parser reads the label out of the answer; the value is 1 when it equals the gold class."""

    async def score(state: TaskState, target: Target) -> Score:
        gold = RecencyClass.parse(target.text)
        parsed = parse_recency_answer(state.output.completion, last=last)
        return Score(
            value=1.0 if parsed.label == gold else 0.0,
            answer=parsed.label.label if parsed.label is not None else None,
            explanation=f"parsed by {parsed.method}",
            metadata={
                "gold_class": int(gold),
                "predicted_class": int(parsed.label) if parsed.label is not None else None,
                "parsed_by": parsed.method,
            },
        )

    return score


def _messages(prompt: Prompt) -> list[ChatMessage]:
    assert prompt.messages is not None
    kinds: dict[str, type[ChatMessageSystem] | type[ChatMessageUser]] = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
    }
    return [kinds[m.role](content=m.content) for m in prompt.messages]


def _recency_samples(
    strategy: Literal["zero-shot", "few-shot", "cot"], context: Literal["with", "without"], sample: int | None
) -> list[Sample]:

    pool = load_recencyqa(default_data())
    questions = stratified_sample(pool, sample, 0)
    config = EvalConfig(strategy=(strategy,), context_mode=context)
    template = resolve_templates(config, strategy)[context]
    picker = FewShotPicker(pool, config.seed) if strategy == "few-shot" else None
    samples = []
    for item in build_items(questions, context):
        prompt = build_prompt(template, item, strategy, picker)
        samples.append(
            Sample(
                input=_messages(prompt) if prompt.messages else str(prompt.text),
                target=item.gold.label,
                id=item.item_id,
                metadata={
                    "q_id": item.q_id,
                    "stationarity": "Stationary" if item.stationary else "Non-Stationary",
                    "context_index": item.context_index,
                    "strategy": strategy,
                },
            )
        )
    return samples


@task
def recency(
    strategy: Literal["zero-shot", "few-shot", "cot"] = "zero-shot",
    context: Literal["with", "without"] = "without",
    sample: int | None = None,
    temperature: float = 0.5,
) -> Task:
    """Does the model know how fresh an answer must be? RecencyQA's classification, our prompts and parser.

    ``strategy``: zero-shot (default), few-shot or cot; ``context``: without (one item per question,
    gold = majority label) or with (one item per label context); ``sample``: a stratified sample of
    N questions; ``temperature``: as ``recency run``'s default.
    """

    with _one_line_errors():
        if strategy not in STRATEGIES:
            raise ConfigError("-T strategy", f"{strategy!r}: use one of {', '.join(STRATEGIES)}")
        if context not in ("with", "without"):
            raise ConfigError("-T context", f"{context!r}: use with or without")
        samples = _recency_samples(strategy, context, sample)
    return Task(
        dataset=MemoryDataset(samples, name="chronoprobe-recency"),
        solver=generate(),
        scorer=recency_label(last=strategy == "cot"),
        config=GenerateConfig(
            temperature=temperature,
            top_p=1.0,
            seed=0,
            max_tokens=DEFAULT_MAX_NEW_TOKENS[strategy],
            stop_seqs=["\nQuestion:"] if strategy == "few-shot" else None,
        ),
        metadata={"chronoprobe": "recency", "strategy": strategy, "context": context},
    )


# --- conflicts ------------------------------------------------------------------------------------

CONFLICTS_POINTER = (
    "chronoprobe/conflicts cannot run in inspect: it needs next-token distributions and sampling control "
    "that inspect's model API does not give; run `chronoprobe conflicts run` (chronoprobe docs harnesses)"
)


@task
def conflicts() -> Task:
    """Not available in inspect (needs next-token distributions); run ``chronoprobe conflicts run``."""
    raise _prerequisite_error(CONFLICTS_POINTER)


def _prerequisite_error(message: str) -> Exception:
    """inspect prints a PrerequisiteError as its message alone, without a traceback."""
    try:
        from inspect_ai._util.error import PrerequisiteError  # deferred: inspect_ai (an extra)
    except ImportError:  # moved in some inspect release: a plain error still says it
        return RuntimeError(message)
    error: Exception = PrerequisiteError(message)
    return error
