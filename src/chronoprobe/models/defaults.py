"""Each built-in backend's own batch size: the one table of the defaults of ``--batch-size``, one per backend.

Read by the backends themselves and by their registrations (``models/builtin.py``), whose ``defaults``
describe them to the ``--batch-size`` help (``cli/model_options.py`` builds it from the registrations: no number
is written there, or in a docstring, twice); this module imports nothing, so every backend can.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "LLAMACPP_BATCH",
    "MOCK_BATCH",
    "SAMPLED_BATCH_PROMPTS",
    "VLLM_BATCH",
    "WAVE_PER_REQUEST",
]

DEFAULT_BATCH_ROWS = 64
"""hf: rows (prompts x samples) a greedy batch holds by default: 64 prompts ran the audit 1.66x faster than 16."""
SAMPLED_BATCH_PROMPTS = 16
"""hf: prompts a sampled batch holds by default, as before 0.2.0: a sample's random numbers depend on its row's
place in the batch (models/sampling.py), so another size would draw other samples."""
LLAMACPP_BATCH = 16
"""llamacpp: prompts per generate call (each still decoded alone): how many answers one cache transaction stores."""
MOCK_BATCH = 16
"""mock: prompts per planned batch."""
VLLM_BATCH = 256
"""vllm: prompts per generate call (and per request of Ray's vLLM processor)."""
WAVE_PER_REQUEST = 4
"""openai: prompts per wave between cache writes, per request in flight (``concurrency``)."""
