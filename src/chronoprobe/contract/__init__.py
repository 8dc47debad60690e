"""The run contract: what a command is, the one runner that drives every one, and what a run leaves behind.

- :mod:`~chronoprobe.records.runlog`: the run folder's records (``run.json``, ``items.jsonl``, ``Metric``, ``Run``),
  which every reader uses;
- :mod:`~chronoprobe.records.publish`: staging, claiming and replacing outputs whole;
- :mod:`~chronoprobe.records.fields`: a config field and its flag, one rule for every command;
- :mod:`~chronoprobe.contract.lens` and :mod:`~chronoprobe.contract.tool`: the shapes a question and a command take;
- :mod:`~chronoprobe.contract.check_part`: what ``chronoprobe check`` reads from a lens that gives it (its
  ``checkup``, an optional part; a run's plan line reads its ``sizing`` too);
- :mod:`~chronoprobe.contract.released_hooks`: 0.2.0's card and check members on a lens, read until 0.4.0;
- :mod:`~chronoprobe.contract.lens_run`: a lens's run as a command (the tool ``LensRun``);
- :mod:`~chronoprobe.contract.runner`: the one runner, ``produce``.

The records, the publishing and the field rule sit with the calls layer (readers below the lenses import them);
the shapes and the runner above it (docs/architecture.md).
"""
