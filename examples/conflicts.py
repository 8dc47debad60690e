"""Does context override the model's memory? DynamicQA through its own methodology, 2 facts per class.

    python examples/conflicts.py [MODEL] [DYNAMICQA_FOLDER]   # default model: $CHRONOPROBE_EXAMPLE_MODEL, else smollm2

Without a folder, the DynamicQA CSVs are the copy shipped inside chronoprobe (MIT), or
$CHRONOPROBE_SHARED_DATA/dynamicqa when that is set (see `chronoprobe conflicts run --help`).
"""

import os
import sys

import chronoprobe as cp

model = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHRONOPROBE_EXAMPLE_MODEL", "smollm2")
data = sys.argv[2] if len(sys.argv) > 2 else None
limit = int(os.environ.get("CHRONOPROBE_EXAMPLE_LIMIT", "6"))
judge = os.environ.get("CHRONOPROBE_EXAMPLE_JUDGE", "embedding")  # the equivalence judge; "exact" needs no model

run = cp.run(
    "conflicts",
    models=model,
    dataset="dynamicqa",
    data=data,
    balanced_limit=limit,
    judge=judge,
    persuasion={"n_samples": 2},
)
for spec, numbers in run.summary.headline.items():
    cps = {name.split(".")[0]: value for name, value in numbers.items() if name.endswith(".cp")}
    print(spec, "coherent persuasion per class:", {c: round(v, 3) for c, v in cps.items() if v is not None})
print(f"{len(run.rows)} rows; report: {run.path / 'report.md'}")
