"""Draw the trained router's reliability diagram from its manifest (docs/img/router_reliability.png).

    python scripts/router_reliability.py [--weights DIR] [--out docs/img/router_reliability.png]

The bins are the grouped-CV ones ``train_router.py`` wrote: for P(the answer changes within a year) and for
the top class's probability, each bin's mean forecast against the observed rate.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

from chronoprobe.router.model import MANIFEST_FILE, shipped_weights  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--weights", type=Path, default=shipped_weights())
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "router_reliability.png")
    args = parser.parse_args()
    calibration = json.loads((args.weights / MANIFEST_FILE).read_text(encoding="utf-8"))["calibration"]
    figure, axes = plt.subplots(1, 2, figsize=(8, 4), sharey=True)
    titles = {"gate_probability": "P(changes within a year)", "top_class": "top class probability"}
    for axis, (key, title) in zip(axes, titles.items(), strict=True):
        bins = calibration[key]["bins"]
        axis.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        axis.plot([b["forecast"] for b in bins], [b["observed"] for b in bins], marker="o")
        for b in bins:
            axis.annotate(str(b["n"]), (b["forecast"], b["observed"]), fontsize=7, xytext=(3, -9), textcoords="offset points")
        axis.set_title(f"{title}\nECE {calibration[key]['ece']:.3f}", fontsize=10)
        axis.set_xlabel("forecast (bin mean)")
    axes[0].set_ylabel("observed rate")
    figure.suptitle("Trained router, grouped 5-fold CV on RecencyQA (n per bin)", fontsize=10)
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
