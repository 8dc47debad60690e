"""chronoprobe inside other evaluation harnesses (inspect_ai, lm-evaluation-harness), and their logs back in.

Entry-point layer: only the CLI imports these modules, lazily. ``inspect_tasks`` is the one that
imports inspect_ai (inspect loads it through ``inspect_registry``); the lm-eval export and the log
readers need neither harness to import. See docs/harnesses.md.
"""
