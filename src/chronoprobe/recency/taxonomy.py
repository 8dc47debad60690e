"""Moved to :mod:`chronoprobe.datasets.recency_taxonomy`: the dataset layer owns the labels."""

from chronoprobe.datasets.recency_taxonomy import (
    ALIASES,
    CLASSES,
    LABEL_LIST_TEXT,
    LABELS,
    RecencyClass,
    Stationarity,
    normalise,
    parse_label,
)

__all__ = [
    "ALIASES",
    "CLASSES",
    "LABELS",
    "LABEL_LIST_TEXT",
    "RecencyClass",
    "Stationarity",
    "normalise",
    "parse_label",
]
