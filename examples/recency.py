"""Does the model know how fresh an answer must be? Classify 20 RecencyQA questions, then gate two.

    python examples/recency.py [MODEL]       # default: $CHRONOPROBE_EXAMPLE_MODEL, else smollm2

The questions come from the copy of RecencyQA shipped with chronoprobe (pass data="RecencyQA.json"
to cp.run for another file); see `chronoprobe recency eval --help`.
"""

import os
import sys

import chronoprobe as cp

spec = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CHRONOPROBE_EXAMPLE_MODEL", "smollm2")
sample = int(os.environ.get("CHRONOPROBE_EXAMPLE_LIMIT", "20"))

model = cp.model(spec)  # loaded once: used by the evaluation and by every gate call below
run = cp.run("recency", models=model, sample=sample, strategy=("zero-shot",), context_mode="without")
for name, value in run.summary.headline[model.spec].items():
    print(f"{name}: {value:.3f}" if value is not None else f"{name}: -")

for question in ("What is the ECB's main interest rate?", "Who wrote Hamlet?"):
    decision = cp.recency_gate(question, model, samples=1)
    print("RETRIEVE" if decision.retrieve else "NO RETRIEVAL", "|", question, "|", decision.reason)
