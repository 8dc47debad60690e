"""chronoprobe inside other evaluation harnesses (inspect_ai, lm-evaluation-harness), and their logs back in.

Nothing here is imported by the rest of the package; each module imports its harness lazily or
only when the harness itself loads it. See docs/harnesses.md.
"""
