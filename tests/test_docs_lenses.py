"""docs/api.md and docs/card.md cover every lens: its config, its rows, its place in the card."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.contract.lens import lens_class

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("lens", cp.lenses())
def test_the_api_page_gives_each_lens_its_config_and_rows(lens: str) -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{re.escape(lens)}` \| `([\w.]+)` \|", text, re.MULTILINE)
    assert row, f"docs/api.md has no config row for {lens}"
    module, _, name = row.group(1).rpartition(".")
    assert getattr(importlib.import_module(module), name) is lens_class(lens).config_type
    attributes = re.search(r"^\| `rows` \| (.*)$", text, re.MULTILINE)
    assert attributes and f"`{lens_class(lens).row_type.__name__}`" in attributes.group(1)
    assert re.search(rf"^\| `lens` \| .*`{lens}`", text, re.MULTILINE)


@pytest.mark.parametrize("lens", cp.lenses())
def test_the_card_page_names_each_lens(lens: str) -> None:
    text = (DOCS / "card.md").read_text(encoding="utf-8")
    column = re.search(r"^\| `lens` \| (.*)$", text, re.MULTILINE)
    assert column and f"`{lens}`" in column.group(1)
    order = re.search(r"One section per lens present \(any subset works\), in the order ([^.]*)\.", text)
    assert order and lens in order.group(1)
