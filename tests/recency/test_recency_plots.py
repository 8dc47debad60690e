"""The confusion matrices can be read where the report card shows them."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.lenses.recency.report import confusion_figure, confusion_png

pytestmark = pytest.mark.e2e

CARD_IMAGE_BOX = (522, 360)
"""The largest a figure's image gets on the card, in CSS pixels (reports/card.py: a 540 px figure with
8 px padding and a border, images at most 360 px high); test_card_browser.py measures it in Chromium."""
READABLE_PX = 9.5


def _matrix() -> tuple[list[list[int]], list[str]]:
    labels = [c.label for c in RecencyClass]
    return [[(row * 7 + col) % 5 for col in range(len(labels) + 1)] for row in range(len(labels))], labels


def _shown_scale(width_px: float, height_px: float) -> float:
    return min(1.0, CARD_IMAGE_BOX[0] / width_px, CARD_IMAGE_BOX[1] / height_px)


def test_every_text_is_readable_at_card_size(tmp_path: Path) -> None:
    matrix, labels = _matrix()
    title = "a-rather-long-model-name · chain-of-thought · without context (n=1234)"
    path = tmp_path / "c.png"
    confusion_png(path, matrix, labels, title)
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the PNG's IHDR
    figure = confusion_figure(matrix, labels, title)
    dpi = width / figure.get_figwidth()
    assert abs(height / figure.get_figheight() - dpi) < 1
    scale = _shown_scale(width, height)
    ax = figure.axes[0]
    texts = [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts, ax.title, ax.xaxis.label, ax.yaxis.label]
    assert len(ax.get_xticklabels()) == len(labels) + 1 and len(ax.texts) > 100
    smallest = min(float(t.get_fontsize()) for t in texts if t.get_text())
    assert smallest / 72 * dpi * scale >= READABLE_PX
    assert width * scale <= CARD_IMAGE_BOX[0] and height * scale <= CARD_IMAGE_BOX[1] + 1
