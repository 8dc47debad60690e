"""The model sweep table (the study's size sweep): one row per model, smallest first, with the temporal gap."""

from __future__ import annotations

from chronoprobe.lenses.conflicts.report import model_sweep_markdown
from chronoprobe.models.base import BackendInfo
from chronoprobe.provenance import Provenance

CLASSES = ("static", "temporal", "disputed")


def _persuasion(acc: dict[str, float | None], cp: dict[str, float]) -> dict[str, dict[str, object]]:
    return {c: {"facts": 2, "accuracy_no_context": acc[c], "accuracy_context": 0.5, "cp": cp[c]} for c in CLASSES}


def _provenance(*models: tuple[str, str | None, bool]) -> Provenance:
    infos = [
        BackendInfo(
            spec=s, backend="hf", model_id=s, revision="r", chat_template=chat, extra={"parameters": p} if p else {}
        )
        for s, p, chat in models
    ]
    return Provenance(models=infos)


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]


def test_persuasion_sweep_orders_by_size_and_gives_the_gap() -> None:
    summary = {
        "gemma3-270m": _persuasion(
            {"static": 0.5, "temporal": 0.0, "disputed": None}, {"static": 0.25, "temporal": 0.75, "disputed": 0.5}
        ),
        "smollm2": _persuasion(
            {"static": 1.0, "temporal": 0.5, "disputed": None}, {"static": 0.5, "temporal": 0.25, "disputed": 0.0}
        ),
    }
    provenance = _provenance(("smollm2", "134515008", True), ("gemma3-270m", "268098176", False))
    text = model_sweep_markdown(summary, CLASSES, provenance, "dynamicqa")
    assert text.startswith("\n## Model sweep")  # its own paragraph after the previous table
    header, *rows = _rows(text)
    assert header[:3] == ["Model", "Parameters", "Chat template"]
    assert "CP Temporal − Static" in header
    assert [r[0] for r in rows] == ["smollm2", "gemma3-270m"]  # smallest first
    smol, gemma = (dict(zip(header, r, strict=True)) for r in rows)
    assert smol["Parameters"] == "135M" and gemma["Parameters"] == "268M"
    assert (smol["Chat template"], gemma["Chat template"]) == ("yes", "no")
    assert smol["Temporal acc"] == "0.500" and smol["Disputed acc"] == "–"
    assert smol["CP Temporal − Static"] == "-0.250" and gemma["CP Temporal − Static"] == "0.500"


def test_completion_sweep_uses_f1_and_update_success() -> None:
    classes = ("immutable-1", "immutable-N", "mutable")
    per_class = {
        c: {"f1": 40.0, "confidence": 0.3, "update_success": u} for c, u in zip(classes, (0.5, 0.25, 0.75), strict=True)
    }
    text = model_sweep_markdown({"a": per_class, "b": per_class}, classes, _provenance(("a", None, True)), "mulan")
    header, *rows = _rows(text)
    assert "Mutable update" in header and "update Mutable − Imm-1" in header
    assert [r[0] for r in rows] == ["a", "b"]  # unknown sizes keep run order
    row = dict(zip(header, rows[0], strict=True))
    assert row["Parameters"] == "–" and row["update Mutable − Imm-1"] == "0.250"


def test_one_model_has_no_sweep() -> None:
    assert model_sweep_markdown({"a": {}}, CLASSES, _provenance(("a", None, True)), "dynamicqa") == ""
