"""A chat template rendered as transformers renders it, for backends with no tokenizer of their own.

llama.cpp reads the template from the GGUF file, and the ``mock:`` stand-in may be given one; both
render it here, in the environment transformers uses (a sandbox that trims blocks and strips leading
space, ``loopcontrols``, ``raise_exception`` and ``strftime_now``), so a prompt reads the same on
every backend. What the template is told about the date comes from
:func:`chronoprobe.models.base.render_with_tokenizer` (:mod:`chronoprobe.models.chat_dates`).
"""

from __future__ import annotations

from typing import Any

from chronoprobe.models.chat_dates import clock_strftime

__all__ = ["JinjaChatTemplate"]


class JinjaChatTemplate:
    """A chat template with ``apply_chat_template`` as a transformers tokenizer has it (rendering only)."""

    def __init__(self, template: str, *, bos: str = "", eos: str = "") -> None:
        from jinja2.ext import loopcontrols  # jinja2 comes with transformers; imported when a template is built
        from jinja2.sandbox import ImmutableSandboxedEnvironment  # deferred: jinja2

        def raise_exception(message: str) -> None:
            raise ValueError(message)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = clock_strftime  # as transformers: the machine's clock unless told a day
        self.chat_template = template
        self._template = env.from_string(template)
        self._specials = {"bos_token": bos, "eos_token": eos}

    def apply_chat_template(
        self, messages: list[dict[str, str]], *, add_generation_prompt: bool, tokenize: bool, **variables: Any
    ) -> str:
        return self._template.render(
            messages=messages, add_generation_prompt=add_generation_prompt, **self._specials, **variables
        )
