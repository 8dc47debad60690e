"""Recency classification: prompts -> cached model calls -> parsed labels (one row per prompt).

Items: without context, one item per question (gold = the majority label);
with context, one item per label context (gold = that context's label), so a
non-stationary question yields 2-4 items.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chronoprobe.cache import CachedModel, stable_hash
from chronoprobe.datasets.recency_taxonomy import CLASSES, RecencyClass
from chronoprobe.datasets.recencyqa import RecencyItem
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency.parse import parse_recency_answer
from chronoprobe.lenses.recency.prompts import (
    Template,
    eval_template,
    format_example,
    load_template,
)
from chronoprobe.models.base import DecodingParams, NewTokens, Prompt
from chronoprobe.records.fields import INTERNAL
from chronoprobe.renames import accept_renamed
from chronoprobe.values import comma_list

Strategy = Literal["zero-shot", "few-shot", "cot"]
ContextMode = Literal["with", "without", "both"]
STRATEGIES: tuple[Strategy, ...] = ("zero-shot", "few-shot", "cot")
DEFAULT_MAX_NEW_TOKENS: dict[str, int] = {"zero-shot": 16, "few-shot": 12, "cot": 160}


class EvalConfig(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    renamed_fields: ClassVar[dict[str, str]] = {
        "strategies": "strategy",
        "context": "context_mode",
        "prompt_files": "prompt_file",
    }
    """Keywords 0.1.0 released, accepted until 0.4.0 (:mod:`chronoprobe.renames`)."""

    strategy: tuple[Strategy, ...] = ("zero-shot",)
    """zero-shot, few-shot or cot (repeatable or comma-separated; 'all' for the three)."""
    context_mode: ContextMode = "both"
    """with, without or both (both gives the Table 6 Δ%)."""
    temperature: float = Field(0.5, ge=0.0)
    """Sampling temperature (paper: 0.5; 0 = greedy)."""
    top_p: Annotated[float, INTERNAL] = Field(1.0, gt=0.0, le=1.0)
    seed: int = Field(0, ge=0)
    """Decoding seed (also picks few-shot demonstrations)."""
    max_new_tokens: NewTokens | None = None
    """Tokens to generate per answer (default: 16 zero-shot, 12 few-shot, 160 CoT)."""
    prompt_file: tuple[Path, ...] = ()
    """Prompt file replacing ours (repeatable); one with {context} is the with-context prompt. The original
    RecencyQA files work."""
    tolerance: Annotated[int, INTERNAL] = 1
    answer_prefix: str = ""
    """Force the answer to start with this text, e.g. 'Label:' (helps tiny models that answer the question instead)."""

    @field_validator("strategy", mode="before")
    @classmethod
    def _strategy_list(cls, value: Any) -> Any:
        """``"few-shot,cot"``, ``["all"]`` ...: the strategies named, each once, in order."""
        if not isinstance(value, str | list | tuple):
            return value
        named = comma_list(value)
        for name in named:
            if name not in (*STRATEGIES, "all"):
                raise ValueError(f"{name!r} is not one of {', '.join(STRATEGIES)}, all")
        return tuple(dict.fromkeys(STRATEGIES if "all" in named else named))

    @property
    def modes(self) -> tuple[Literal["with", "without"], ...]:
        return ("without", "with") if self.context_mode == "both" else (self.context_mode,)

    def decoding(self, strategy: Strategy) -> DecodingParams:
        stop = ("\nQuestion:",) if strategy == "few-shot" else ()
        return DecodingParams(
            max_new_tokens=self.max_new_tokens or DEFAULT_MAX_NEW_TOKENS[strategy],
            temperature=self.temperature,
            top_p=self.top_p,
            seed=self.seed,
            stop=stop,
        )

    _renamed = accept_renamed()  # last: the validators above see the new names


class EvalItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    item_id: str
    q_id: int | str
    question: str
    context: str | None
    context_index: int | None
    n_contexts: int
    gold: RecencyClass
    stationary: bool


def build_items(questions: Sequence[RecencyItem], mode: Literal["with", "without"]) -> list[EvalItem]:
    items: list[EvalItem] = []
    for q in questions:
        if mode == "without":
            items.append(
                EvalItem(
                    item_id=f"{q.q_id}:without",
                    q_id=q.q_id,
                    question=q.question,
                    context=None,
                    context_index=None,
                    n_contexts=len(q.label_contexts),
                    gold=q.majority_label,
                    stationary=q.stationary,
                )
            )
            continue
        for index, ctx in enumerate(q.label_contexts):
            items.append(
                EvalItem(
                    item_id=f"{q.q_id}:with:{index}",
                    q_id=q.q_id,
                    question=q.question,
                    context=ctx.context,
                    context_index=index,
                    n_contexts=len(q.label_contexts),
                    gold=ctx.recency_label,
                    stationary=q.stationary,
                )
            )
    return items


class FewShotPicker:
    """One demonstration per class, fixed for a seed, never the evaluated question itself.

    Candidates for class c are ranked by stable_hash((seed, q_id)). Without
    context they are stationary questions whose majority label is c; with
    context, any label context of class c (stationary questions first). The
    demonstrations are shown in one seeded random order of the classes. A class
    with no candidate in the pool gets no demonstration.
    """

    def __init__(self, pool: Sequence[RecencyItem], seed: int = 0) -> None:
        def rank(item: RecencyItem) -> str:
            return stable_hash([seed, str(item.q_id)])

        ranked = sorted(pool, key=rank)
        self.without: dict[RecencyClass, list[tuple[RecencyItem, None]]] = {c: [] for c in CLASSES}
        self.with_: dict[RecencyClass, list[tuple[RecencyItem, str]]] = {c: [] for c in CLASSES}
        for item in ranked:
            if item.stationary:
                self.without[item.majority_label].append((item, None))
        for stationary_first in (True, False):
            for item in ranked:
                if item.stationary != stationary_first:
                    continue
                for ctx in item.label_contexts:
                    self.with_[ctx.recency_label].append((item, ctx.context))
        order = list(CLASSES)
        random.Random(seed).shuffle(order)
        self.order = order

    def demos(self, q_id: int | str, with_context: bool) -> list[tuple[str, RecencyClass, str | None]]:
        table = self.with_ if with_context else self.without
        chosen = []
        for cls in self.order:
            for item, context in table[cls][:2]:
                if str(item.q_id) != str(q_id):
                    chosen.append((item.question, cls, context))
                    break
        return chosen

    def examples_text(self, q_id: int | str, with_context: bool) -> str:
        return "\n\n".join(format_example(q, c, ctx) for q, c, ctx in self.demos(q_id, with_context))


def resolve_templates(config: EvalConfig, strategy: Strategy) -> dict[str, Template]:
    """The with/without-context templates for a strategy (--prompt-file overrides ours)."""
    templates = {"without": eval_template(strategy, False), "with": eval_template(strategy, True)}
    for path in config.prompt_file:
        template = load_template(path)
        mode = "with" if template.takes_context else "without"
        if mode not in config.modes:
            raise ConfigError(
                f"prompt file {path}",
                f"is a {mode}-context prompt ({'has' if mode == 'with' else 'no'} "
                f"{{context}} placeholder), but this run has --context-mode {config.context_mode}",
            )
        templates[mode] = template
    for mode in config.modes:
        if "label" in templates[mode].placeholders:
            raise ConfigError(
                f"prompt file {templates[mode].name}",
                "has a {label} placeholder: that is a labelling "
                "or context-generation prompt, not an evaluation prompt (it would reveal the answer)",
            )
        if (mode == "with") != templates[mode].takes_context:
            raise ConfigError(
                f"prompt file {templates[mode].name}",
                f"the {mode}-context prompt needs{'' if mode == 'with' else ' no'} {{context}} placeholder",
            )
    return templates


def build_prompt(
    template: Template, item: EvalItem, strategy: Strategy, picker: FewShotPicker | None, answer_prefix: str = ""
) -> Prompt:
    values = {"question": item.question}
    if item.context is not None:
        values["context"] = item.context
    if strategy == "few-shot" and "examples" in template.placeholders:
        if picker is None:
            raise ConfigError("few-shot", "no pool of demonstrations")
        values["examples"] = picker.examples_text(item.q_id, item.context is not None)
    return template.fill(answer_prefix=answer_prefix, **values)


def evaluate(
    questions: Sequence[RecencyItem],
    model: CachedModel,
    config: EvalConfig,
    *,
    pool: Sequence[RecencyItem] | None = None,
    progress: Callable[[str, int], Callable[[int], None]] | None = None,
) -> list[dict[str, Any]]:
    """Run every (strategy, context mode) on ``questions``; ``pool`` supplies few-shot demos (default: questions).

    ``progress(description, total)`` returns a callback that is told how many prompts finished.
    """
    picker = (
        FewShotPicker(pool if pool is not None else questions, config.seed) if "few-shot" in config.strategy else None
    )
    rows: list[dict[str, Any]] = []
    for strategy in config.strategy:
        templates = resolve_templates(config, strategy)
        params = config.decoding(strategy)
        for mode in config.modes:
            items = build_items(questions, mode)
            prompts = [build_prompt(templates[mode], item, strategy, picker, config.answer_prefix) for item in items]
            callback = progress(f"{strategy}, {mode} context", len(prompts)) if progress else None
            generations = model.generate(prompts, params, progress=callback)
            for item, generation in zip(items, generations, strict=True):
                sample = generation.samples[0]
                parsed = parse_recency_answer(sample.text, last=strategy == "cot")
                rows.append(
                    {
                        "model": model.info.label,
                        "strategy": strategy,
                        "context_mode": mode,
                        "item_id": item.item_id,
                        "q_id": item.q_id,
                        "question": item.question,
                        "context": item.context,
                        "context_index": item.context_index,
                        "n_contexts": item.n_contexts,
                        "stationarity": "Stationary" if item.stationary else "Non-Stationary",
                        "gold": item.gold.label,
                        "prediction": parsed.label.label if parsed.label is not None else None,
                        "parsed_by": parsed.method,
                        "correct": parsed.label == item.gold,
                        "answer": sample.text,
                        "finish_reason": sample.finish_reason,
                        "template": templates[mode].name,
                    }
                )
    return rows
