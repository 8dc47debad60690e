"""``chronoprobe conflicts``: does context override the model's memory? (DynamicQA + MuLan)"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.model_options import DEFAULT_MODEL_OPTIONS, ModelOptions, with_model_options
from chronoprobe.cli.options import ModelOpt
from chronoprobe.cli.progress_display import console, progress_bar
from chronoprobe.cli.runs import config_errors, load_models, open_cache
from chronoprobe.conflicts.lens import ConflictsLens
from chronoprobe.errors import ConfigError

RENAMED = {"--aliases": "--aliases-file", "--limit": "--balanced-limit", "--prompt-file": "--wording"}
"""Options renamed in 0.4.0 (one meaning per flag), their old spellings kept for a release."""

app = lens_app(
    ConflictsLens,
    help_text="Does context override the model's memory? DynamicQA and MuLan, each through either methodology.",
    deprecated=RENAMED,
)


def _judge_device(device: str) -> str:
    from chronoprobe.conflicts.lens import judge_device

    return judge_device(device)


CONTEXTS = "a contexts file written by `chronoprobe conflicts contexts`"
"""What ``conflicts contexts --out`` may replace (the refusal names it)."""


def _is_provenance(path: Path) -> bool:
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and {"command", "packages", "models"} <= set(record)


def _contexts_here(out: Path) -> bool:
    """A contexts file this command wrote: its provenance file sits beside it."""
    return _is_provenance(out.with_suffix(".provenance.json"))


@app.command("contexts")
@with_deprecated({**RENAMED, "--seed": "--sample-seed"})
@with_model_options("engine", "sampler")
def contexts(
    model: ModelOpt = None,
    data: Annotated[
        Path | None,
        typer.Option(
            help="Where the data comes from: a MuLan queries JSONL (default: the hub id coastalcph/fm_queries)."
        ),
    ] = None,
    aliases: Annotated[
        Path | None, typer.Option("--aliases-file", help="MuLan aliases (JSON map or fm_aliases JSONL).")
    ] = None,
    templates: Annotated[Path | None, typer.Option(help="MuLan clean.json templates.")] = None,
    nli: Annotated[
        str, typer.Option(help="NLI model (hub id or folder) for the entailment filter.")
    ] = "microsoft/deberta-large-mnli",
    no_nli_filter: Annotated[
        bool, typer.Option("--no-nli-filter", help="Keep every passage that mentions the object (recorded).")
    ] = False,
    min_entailment: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Keep passages whose entailment probability is at least this.")
    ] = 0.95,
    per_class: Annotated[int, typer.Option(min=1, help="Facts sampled per class.")] = 2500,
    seed: Annotated[int, typer.Option("--sample-seed", min=0, help="Seed of the per-class sample.")] = 0,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens to generate per passage.")] = 120,
    limit: Annotated[
        int | None,
        typer.Option(
            "--balanced-limit", min=1, help="At most N facts in total (not per class), spread evenly over the classes."
        ),
    ] = None,
    prompt_file: Annotated[
        Path | None, typer.Option("--wording", help="JSON file replacing our prompt wording (key passage).")
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            help="Where to write the contexts JSONL (a provenance JSON is written next to it). An earlier contexts "
            "file this command wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = Path("results/conflicts/mulan_contexts.jsonl"),
    backend: ModelOptions = DEFAULT_MODEL_OPTIONS,
) -> None:
    """Write Wikipedia-style contexts for MuLan facts (generate, NLI-filter, swap the object, subsample)."""
    from chronoprobe.conflicts.contexts import ContextsConfig, build_contexts
    from chronoprobe.conflicts.prompts import PromptWording
    from chronoprobe.conflicts.run import MULAN_ALIASES, MULAN_TEMPLATES, mulan_inputs
    from chronoprobe.conflicts.sources import Input, check_inputs, shared_path
    from chronoprobe.datasets import mulan as ml
    from chronoprobe.io import write_json_atomic, write_jsonl_atomic
    from chronoprobe.judges.embedding import Embedder
    from chronoprobe.provenance import build_provenance
    from chronoprobe.publish import check_not_input, check_output_file, staged_files

    extra = [Input("--wording", prompt_file)] if prompt_file is not None else []
    check_inputs([*mulan_inputs(data, templates, aliases), *extra], "conflicts contexts")  # every missing file at once
    record = out.with_suffix(".provenance.json")
    check_output_file(out, "--out", ours=_contexts_here, what=CONTEXTS)  # before any model loads
    check_output_file(record, "--out", ours=_is_provenance, what=f"the provenance of {out.name}")
    inputs = {"--data": data, "--aliases-file": aliases, "--templates": templates, "--wording": prompt_file}
    check_not_input(
        [out, record], {**inputs, "--nli": Path(nli) if Path(nli).exists() else None, "--cache": backend.cache}
    )
    wording = PromptWording.from_file(prompt_file)  # a bad prompt file fails before any model loads
    store = open_cache(backend.cache)
    with config_errors():
        config = ContextsConfig(
            min_entailment=None if no_nli_filter else min_entailment,
            per_class=per_class,
            seed=seed,
            max_new_tokens=max_new_tokens,
        )
    all_queries = ml.load_queries(data or ml.QUERIES_HUB_ID)
    queries = ml.take_balanced_facts(all_queries, limit)
    templates_map = ml.load_templates(templates or shared_path(MULAN_TEMPLATES, "--templates"))
    alias_map = ml.load_aliases(aliases or shared_path(MULAN_ALIASES, "--aliases"))
    judge_device = _judge_device(backend.device)
    entail = None
    nli_record = "none (--no-nli-filter)"
    if not no_nli_filter:
        from chronoprobe.judges.nli import NLIModel

        with console.status(f"loading NLI model {nli}"):
            nli_model = NLIModel(nli, cache=store, device=judge_device)
        entail = nli_model.entailment
        nli_record = f"nli:{nli_model.model_id}@{nli_model.revision} entailment >= {min_entailment}"
    embedder = Embedder(cache=store, device=judge_device)
    generators = load_models(model, backend.backend(), store)
    if len(generators) != 1:
        raise ConfigError("--model", "contexts takes exactly one generator model")
    generator = generators[0]
    with progress_bar() as bar:
        task = bar.add_task("passages", total=len({q.fact_id for q in queries}))
        rows, dropped = build_contexts(
            queries,
            templates_map,
            alias_map,
            generator,
            entail,
            embedder.embed,
            config,
            wording,
            lambda n: bar.advance(task, n),
            pool=all_queries,
        )
    provenance = build_provenance(
        [generator],
        decoding={"max_new_tokens": config.max_new_tokens, "temperature": 0.0},
        seeds=[seed],
        judge=nli_record,
        extra={"embedding": embedder.model_id, "dropped": dropped, "kept": len(rows), "per_class": per_class},
    ).model_dump(mode="json")
    with staged_files(out, ours=_contexts_here, what=CONTEXTS) as staging:
        write_jsonl_atomic(staging / out.name, [r.model_dump(mode="json") for r in rows])
        write_json_atomic(staging / record.name, provenance)
    console.print(f"wrote {len(rows)} contexts to {out} (dropped: {dropped})", highlight=False)
