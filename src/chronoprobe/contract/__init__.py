"""The run contract: what a command is, the one runner that drives every one, and what a run leaves behind.

- :mod:`~chronoprobe.contract.runlog`: the run folder's records (``run.json``, ``items.jsonl``, ``Metric``, ``Run``),
  which every reader uses;
- :mod:`~chronoprobe.contract.publish`: staging, claiming and replacing outputs whole;
- :mod:`~chronoprobe.contract.fields`: a config field and its flag, one rule for every command;
- :mod:`~chronoprobe.contract.lens` and :mod:`~chronoprobe.contract.tool`: the shapes a question and a command take;
- :mod:`~chronoprobe.contract.lens_run`: a lens's run as a command (the tool ``LensRun``);
- :mod:`~chronoprobe.contract.runner`: the one runner, ``produce``.

The records, the publishing and the field rule sit with the calls layer (readers below the lenses import them);
the shapes and the runner above it (docs/architecture.md).
"""
