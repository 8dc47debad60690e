"""Can it be fixed? Audit a model, then give the facts it got wrong to retrieval and in-context editing.

python examples/editing.py [MODEL] [METHODS]   # default: $CHRONOPROBE_EXAMPLE_MODEL, else smollm2;
                                               # methods: rag-gold,ike-null (add rome,memit for a local model)
"""

import os
import sys

import chronoprobe as cp

model = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHRONOPROBE_EXAMPLE_MODEL", "smollm2")
methods = tuple((sys.argv[2] if len(sys.argv) > 2 else "rag-gold,ike-null").split(","))
limit = int(os.environ.get("CHRONOPROBE_EXAMPLE_LIMIT", "20"))

audit = cp.run("outdated", models=model, limit=limit)
# A tiny model answers few facts outdated, so DyKnow's rule (the default, select="outdated") may leave none
# among 20; for a first look, edit every fact it does not answer up-to-date.
fixed = cp.run("editing", models=model, from_=audit.path, method=methods, select="not-up-to-date")
for spec, numbers in fixed.summary.headline.items():
    print(spec, {name: None if value is None else round(value, 1) for name, value in numbers.items()})  # in percent
print(f"{len(fixed.rows)} answers; report: {fixed.path / 'report.md'}")
