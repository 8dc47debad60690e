"""Is my model outdated? Ask 20 time-sensitive facts and print the soft-constraint shares.

python examples/outdated.py [MODEL]      # default: $CHRONOPROBE_EXAMPLE_MODEL, else smollm2
"""

import os
import sys

import chronoprobe as cp

model = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHRONOPROBE_EXAMPLE_MODEL", "smollm2")
limit = int(os.environ.get("CHRONOPROBE_EXAMPLE_LIMIT", "20"))

run = cp.run("outdated", models=model, limit=limit)
for spec, numbers in run.summary.headline.items():
    print(spec, {name.split(".")[-1]: round(value or 0.0, 1) for name, value in numbers.items()})
print(f"{len(run.rows)} answers; report: {run.path / 'report.md'}")

again = cp.load(run.path)  # a run folder reads back into the same typed summary and rows
assert again.summary == run.summary
