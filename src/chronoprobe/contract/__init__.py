"""The run contract: what a lens or a tool is, the one runner that drives both, and what a run leaves behind.

- :mod:`~chronoprobe.contract.runlog`: the run folder's records (``run.json``, ``items.jsonl``, ``Metric``, ``Run``),
  which every reader uses;
- :mod:`~chronoprobe.contract.publish`: staging, claiming and replacing outputs whole;
- :mod:`~chronoprobe.contract.lens` and :mod:`~chronoprobe.contract.tool`: the shapes a question and a command take;
- :mod:`~chronoprobe.contract.runner`: the runner.

The records and the publishing sit with the calls layer (readers below the lenses import them); the shapes and
the runner above it (docs/architecture.md).
"""
