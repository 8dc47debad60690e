"""A chat template shaped like Llama 3's, for trying what a model is told without Llama weights.

Llama 3.1-3.3 open every chat with a system header that states a fixed "Cutting Knowledge Date" and a
"Today Date" read from ``date_string``, else from ``strftime_now`` (the machine's clock under
transformers), else a date of their own. :data:`LLAMA3_SHAPED_TEMPLATE` does the same in SmolLM2's
turn markers (our own writing), so the embedded SmolLM2 weights can run it: :func:`smollm2_with_template`
lays out a model folder (``hf:<folder>``) that is the embedded SmolLM2 with this template. The
``mock:`` stand-in renders it too (``MockBackend(..., template=LLAMA3_SHAPED_TEMPLATE)``).
"""

from __future__ import annotations

from pathlib import Path

from chronoprobe.errors import ConfigError
from chronoprobe.models import embedded

__all__ = ["LLAMA3_SHAPED_TEMPLATE", "TEMPLATE_FILE", "smollm2_with_template"]

LLAMA3_SHAPED_TEMPLATE = (
    "{%- if date_string is not defined -%}"
    "{%- if strftime_now is defined -%}{%- set date_string = strftime_now('%d %b %Y') -%}"
    "{%- else -%}{%- set date_string = '26 Jul 2024' -%}{%- endif -%}"
    "{%- endif -%}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set system_text = messages[0]['content'] -%}{%- set turns = messages[1:] -%}"
    "{%- else -%}{%- set system_text = 'You are a helpful assistant.' -%}{%- set turns = messages -%}{%- endif -%}"
    "{{- '<|im_start|>system\\nCutting Knowledge Date: December 2023\\nToday Date: ' + date_string + '\\n\\n' -}}"
    "{{- system_text + '<|im_end|>\\n' -}}"
    "{%- for message in turns -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
"""Llama 3's dated system header around SmolLM2's turns: ``date_string``, else ``strftime_now``, else its own day."""
TEMPLATE_FILE = "chat_template.jinja"
"""Where a transformers model folder keeps its chat template."""


def smollm2_with_template(folder: Path, template: str = LLAMA3_SHAPED_TEMPLATE) -> Path:
    """``folder``: the embedded SmolLM2 (converted once, as ``smollm2`` loads it) with ``template`` as its chat
    template, every other file a link to the converted one. Load it as ``hf:<folder>``."""

    source, _ = embedded.converted_gguf(embedded.smollm2_gguf())
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"folder {folder}", "is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if entry.name != TEMPLATE_FILE:
            (folder / entry.name).symlink_to(entry.resolve())
    (folder / TEMPLATE_FILE).write_text(template, encoding="utf-8")
    return folder
