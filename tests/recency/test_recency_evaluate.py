from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe.datasets.recency_taxonomy import CLASSES, RecencyClass
from chronoprobe.datasets.recencyqa import load_recencyqa
from chronoprobe.datasets.sources import packaged_dir
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency.evaluate import (
    EvalConfig,
    FewShotPicker,
    build_items,
    build_prompt,
    resolve_templates,
)
from chronoprobe.lenses.recency.prompts import builtin, load_template, parse_template

ASSETS = Path(__file__).resolve().parents[1] / "assets"
PROMPTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "recencyqa" / "Prompts"


def test_items_without_and_with_context() -> None:
    questions = load_recencyqa(ASSETS / "recency_sample.json")
    without = build_items(questions, "without")
    with_ = build_items(questions, "with")
    assert len(without) == 14
    assert len(with_) == sum(len(q.label_contexts) for q in questions) == 10 + 3 * 2 + 3
    q = next(q for q in questions if len(q.label_contexts) == 3)
    mine = [i for i in with_ if i.q_id == q.q_id]
    assert [i.gold for i in mine] == [c.recency_label for c in q.label_contexts]
    assert [i.context_index for i in mine] == [0, 1, 2]
    assert next(i for i in without if i.q_id == q.q_id).gold is q.majority_label


@pytest.mark.e2e
def test_few_shot_has_one_demo_per_class_and_never_the_question_itself() -> None:
    pool = load_recencyqa(packaged_dir("recencyqa") / "RecencyQA.json.gz")
    picker = FewShotPicker(pool, seed=0)
    demos = picker.demos(q_id=-1, with_context=False)
    assert sorted(c for _, c, _ in demos) == list(CLASSES)
    assert picker.demos(-1, False) == FewShotPicker(pool, seed=0).demos(-1, False)  # deterministic
    # evaluating a demo question swaps in the next candidate for that class only
    demo_question = demos[0][0]
    q_id = next(q.q_id for q in pool if q.question == demo_question and q.stationary)
    other = picker.demos(q_id, with_context=False)
    assert demo_question not in [q for q, _, _ in other] and len(other) == 12
    assert sum(a != b for a, b in zip(demos, other, strict=True)) == 1
    with_ctx = picker.demos(-1, with_context=True)
    assert all(ctx for _, _, ctx in with_ctx) and len(with_ctx) == 12


def test_our_prompts_fill_every_placeholder() -> None:
    questions = load_recencyqa(ASSETS / "recency_sample.json")
    picker = FewShotPicker(questions, seed=0)
    config = EvalConfig(strategy=("zero-shot", "few-shot", "cot"))
    for strategy in config.strategy:
        templates = resolve_templates(config, strategy)
        for mode in ("with", "without"):
            item = build_items(questions, mode)[0]
            prompt = build_prompt(templates[mode], item, strategy, picker)
            text = prompt.text or ""
            assert item.question in text and "A-Few-Months" in text
            assert "{" not in text.replace('{"', "")  # no placeholder left
            assert (
                (item.context in text)
                if item.context
                else "Context:" not in text.split("Question: " + item.question)[1]
            )
    for name in ("label", "label_with_context", "stationarity", "context_generation"):
        assert "{question}" in builtin(name).user


def test_original_prompt_files_load_with_their_placeholders() -> None:
    if not PROMPTS.is_dir():
        pytest.skip("../shared/data/recencyqa/Prompts is not present")
    zero = load_template(PROMPTS / "evaluation_zero_shot_withcontext.txt")
    assert zero.takes_context and zero.system and zero.system.startswith("You are an analyst")
    assert zero.user.startswith("Based on the question") and '"RecencyLabel"' in zero.user
    config = EvalConfig(
        strategy=("few-shot",),
        prompt_file=(
            PROMPTS / "evaluation_few_shot_without_context.txt",
            PROMPTS / "evaluation_few_shot_with_context.txt",
        ),
    )
    templates = resolve_templates(config, "few-shot")
    questions = load_recencyqa(ASSETS / "recency_sample.json")
    item = build_items(questions, "without")[0]
    text = build_prompt(templates["without"], item, "few-shot", None).messages[-1].content  # type: ignore[index]
    assert text.endswith(f"Question: {item.question}\nRecencyLabel:")
    assert text.count("RecencyLabel:") == 13  # 12 written-in demonstrations + the question


def test_prompt_file_without_question_placeholder_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("USER PROMPT:\n\nLabel this.")
    with pytest.raises(ConfigError, match=r"bad\.txt"):
        load_template(bad)
    with pytest.raises(ConfigError, match="no such file"):
        load_template(tmp_path / "missing.txt")


def test_a_labelling_prompt_is_refused_as_an_evaluation_prompt(tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.txt"
    leaky.write_text("USER PROMPT:\n\nQuestion: {question}\nLabel: {label}")
    with pytest.raises(ConfigError, match=r"leaky\.txt.*label"):
        resolve_templates(EvalConfig(context_mode="without", prompt_file=(leaky,)), "zero-shot")
    needs_context = tmp_path / "ctx.txt"
    needs_context.write_text("USER PROMPT:\n\nQuestion: {question}")
    with pytest.raises(ConfigError, match=r"ctx\.txt"):
        resolve_templates(EvalConfig(context_mode="with", prompt_file=(needs_context,)), "zero-shot")


def test_template_sections() -> None:
    t = parse_template("SYSTEM PROMPT:\n\nBe brief.\n\n==========\n\nUSER PROMPT (X):\n\nQ: {question}", "t")
    assert t.system == "Be brief." and t.user == "Q: {question}"
    bare = parse_template("Q: {question} {context}", "bare")
    assert bare.system is None and bare.takes_context
    prompt = bare.fill(question="Why?", context="{ctx}")
    assert prompt.messages[-1].content == "Q: Why? {ctx}"  # type: ignore[index]


def test_decoding_defaults() -> None:
    config = EvalConfig()
    assert config.temperature == 0.5 and config.modes == ("without", "with")
    assert config.decoding("cot").max_new_tokens > config.decoding("zero-shot").max_new_tokens
    assert config.decoding("few-shot").stop == ("\nQuestion:",)
    assert EvalConfig(max_new_tokens=7).decoding("cot").max_new_tokens == 7
    questions = load_recencyqa(ASSETS / "recency_sample.json")
    item = build_items(questions, "without")[0]
    forced = build_prompt(resolve_templates(config, "zero-shot")["without"], item, "zero-shot", None, "Label:")
    assert forced.answer_prefix == "Label:"
    assert RecencyClass.A_DAY.label == "A-Day"
