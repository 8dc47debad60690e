"""Hugging Face transformers backend with our own batched decode loop.

Why our own loop rather than ``model.generate``: we need (a) n samples that
share one prompt forward pass (the KV cache is computed once per prompt and
then repeated n times), (b) the mean next-token distribution per sample,
accumulated on the device without keeping per-position vocabulary vectors, and
(c) exact per-token log-probabilities, all in one pass.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import (
    LOCAL_DECODER_CAPABILITIES,
    Backend,
    BackendInfo,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
    Sample,
    render_with_tokenizer,
)
from chronoprobe.models.chat_dates import ChatDates
from chronoprobe.models.defaults import DEFAULT_BATCH_ROWS as DEFAULT_BATCH_ROWS  # the hf backend's one default
from chronoprobe.models.defaults import SAMPLED_BATCH_PROMPTS as SAMPLED_BATCH_PROMPTS
from chronoprobe.models.kv_buffer import cache_argument, cache_of, preallocate
from chronoprobe.models.loading import (
    PROBE_NEW_TOKENS,
    HFConfig,
    available_ram,
    chunks,
    forward_of,
    free_memory,
    largest_fitting,
    load_model,
    rows_that_fit,
)
from chronoprobe.models.prefill_groups import length_groups, merge, mergeable, repeated
from chronoprobe.models.sampling import pick_tokens, pick_tokens_multinomial
from chronoprobe.threads import AdaptiveThreads

NOMINAL_NEW_TOKENS = 32
"""Tokens a --batch-size auto estimate allows for while planning, before the request's own limit is known."""


AUTO_PROBE_ROWS = 64
"""The longest prompts of a request that --batch-size auto probes with."""


def default_batch_prompts(params: DecodingParams | None, fitting_rows: int) -> int:
    """Prompts per batch when no --batch-size is given.

    Greedy: as many prompts as make :data:`DEFAULT_BATCH_ROWS` rows (``n`` rows each), within the
    ``fitting_rows`` free memory holds; greedy answers do not depend on the batch (the cache assumes it).
    Sampled: :data:`SAMPLED_BATCH_PROMPTS`, so that samples stay those of every earlier release.
    """
    if params is not None and not params.greedy:
        return SAMPLED_BATCH_PROMPTS
    n = params.n if params is not None else 1
    return max(1, min(DEFAULT_BATCH_ROWS, fitting_rows) // n)


_MIN_SHARED_PREFIX = 8
"""Shorter shared prefixes are not worth a separate forward pass."""


def _common_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Tokens shared by every row, leaving each row at least one token of its own."""
    if not rows:
        return 0
    limit = min(len(r) for r in rows) - 1
    first = rows[0]
    length = 0
    while length < limit and all(r[length] == first[length] for r in rows):
        length += 1
    return max(length, 0)


class HFBackend(Backend):
    prefill_groups = True
    """Prefill rows of very different lengths in separate groups (``models/prefill_groups.py``)."""
    drop_finished_rows = True
    """Stop running the model on rows that have finished their answer."""

    capabilities = LOCAL_DECODER_CAPABILITIES

    def __init__(self, config: HFConfig) -> None:
        self.config = config
        loaded = load_model(config)  # placement, dtype, quantisation, adapter; refuses what cannot work first
        self.device = loaded.device
        self.torch_dtype = loaded.torch_dtype
        self.tokenizer = loaded.tokenizer
        self.model = loaded.model
        self.model.eval()
        self._caches_merge = True
        """False once a prefill returned cache layers that models/prefill_groups.py cannot lay side by side."""
        self._auto_batch: tuple[int, int] | None = None
        """(longest prompt it was found for, size) under --batch-size auto."""
        # on CPU, set torch's threads by chronoprobe's policy: every usable core, waiting passively (chronoprobe.threads)
        self.cpu_threads = AdaptiveThreads() if torch.device(self.device).type == "cpu" else None
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        self.use_chat_template = self.has_chat_template if config.chat_template is None else config.chat_template
        if self.use_chat_template and not self.has_chat_template:
            raise ConfigError(f"model {config.spec or config.model}", "--chat-template on, but the tokenizer has none")
        self.dates = ChatDates.of(
            getattr(self.tokenizer, "chat_template", None), config.template_date, used=self.use_chat_template
        )
        self.eos_ids = self._eos_ids()
        forward_params = inspect.signature(forward_of(self.model)).parameters
        self._cache_kwarg = cache_argument(self.model)
        # Only the last position's logits are needed; skipping the rest saves the
        # vocabulary projection of every prompt token.
        self._keep_last = {"logits_to_keep": 1} if "logits_to_keep" in forward_params else {}
        self._info = BackendInfo(
            spec=config.spec or f"hf:{config.model}",
            backend="hf",
            model_id=loaded.model_id,
            revision=config.revision_label or self._resolved_revision(),
            dtype=loaded.dtype,
            device=self.device,
            batch_size=config.batch_size if isinstance(config.batch_size, int) else None,
            chat_template=self.use_chat_template,
            is_chat_model=self.has_chat_template,
            extra=loaded.extra,
            sampler=config.sampler,
        )
        self._info.record_dates(self.dates)
        if loaded.adapter_revision is not None:  # the adapter's files are part of what produced an output
            self._info.revision = f"{self._info.revision}+{loaded.adapter_revision}"
        if not isinstance(config.batch_size, int):
            self._info.extra["batch_size"] = config.batch_size or "default"

    def _resolved_revision(self) -> str:
        commit = getattr(self.model.config, "_commit_hash", None)
        if commit:
            return str(commit)
        if Path(self.config.model).exists():
            return f"local:{self.config.revision}"
        return self.config.revision

    def _eos_ids(self) -> list[int]:
        ids: set[int] = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        if isinstance(configured, int):
            ids.add(configured)
        elif isinstance(configured, list):
            ids.update(int(i) for i in configured)
        return sorted(ids)

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        return render_with_tokenizer(self.tokenizer, prompt, chat_template=self.use_chat_template, dates=self.dates)

    def producer(self) -> Producer:
        import transformers  # deferred: transformers

        on_cpu = torch.device(self.device).type == "cpu"
        return (
            super()
            .producer()
            .model_copy(
                update={
                    "version": f"torch {torch.__version__}, transformers {transformers.__version__}",
                    "threads": torch.get_num_threads() if on_cpu else None,
                }
            )
        )

    def _token_ids(self, rendered: Sequence[str]) -> list[list[int]]:
        # A rendered chat template already holds its special tokens.
        encoded = self.tokenizer(list(rendered), add_special_tokens=not self.use_chat_template)
        return [list(ids) for ids in encoded["input_ids"]]

    def plan_batches(self, rendered_prompts: Sequence[str], params: DecodingParams | None = None) -> list[list[int]]:
        token_ids = self._token_ids(rendered_prompts)
        lengths = [len(ids) for ids in token_ids]
        order = sorted(range(len(rendered_prompts)), key=lambda i: (-lengths[i], i))
        size = self.config.batch_size
        if size == "auto":
            size = self._auto_size([token_ids[i] for i in order[:AUTO_PROBE_ROWS]]) if order else 1
        elif size is None:
            longest = lengths[order[0]] if order else 1
            size = default_batch_prompts(params, self._rows_in_free_memory(longest, params))
            self._info.batch_size = size
        return [order[i : i + size] for i in range(0, len(order), size)]

    def _rows_in_free_memory(self, longest: int, params: DecodingParams | None) -> int:
        """Rows of ``longest`` prompt tokens plus the answer that half the free memory holds (the default's cap)."""
        free = free_memory(self.device, self.config.device_map)
        if free is None:
            return DEFAULT_BATCH_ROWS
        new_tokens = params.max_new_tokens if params is not None else NOMINAL_NEW_TOKENS
        return rows_that_fit(
            self.model.config,
            sequence=longest + new_tokens,
            dtype_bytes=self.torch_dtype.itemsize,
            available=free[0],
            cap=DEFAULT_BATCH_ROWS,
        )

    def _auto_size(self, longest_first: Sequence[Sequence[int]]) -> int:
        """--batch-size auto: the largest batch that fits for prompts as long as this request's longest.

        Found again only when a request brings longer prompts; recorded as the batch size.
        """
        longest = len(longest_first[0])
        if self._auto_batch is not None and longest <= self._auto_batch[0]:
            return self._auto_batch[1]
        if torch.device(self.device).type == "cuda":
            probe = DecodingParams(max_new_tokens=PROBE_NEW_TOKENS)

            def trial(size: int) -> None:
                self._decode([longest_first[i % len(longest_first)] for i in range(size)], probe)

            size = largest_fitting(trial)
        else:
            size = rows_that_fit(
                self.model.config,
                sequence=longest + NOMINAL_NEW_TOKENS,
                dtype_bytes=self.torch_dtype.itemsize,
                available=available_ram(),
            )
        self._auto_batch = (longest, size)
        self._info.batch_size = size
        return size

    def _decode_fitting(self, token_ids: Sequence[Sequence[int]], params: DecodingParams) -> list[Sample]:
        """Under --batch-size auto, a planned batch whose n samples or token limit would not fit runs in parts."""
        if self.config.batch_size != "auto":
            return self._decode(token_ids, params)
        if torch.device(self.device).type != "cuda":
            rows = rows_that_fit(
                self.model.config,
                sequence=max(len(r) for r in token_ids) + params.max_new_tokens,
                dtype_bytes=self.torch_dtype.itemsize,
                available=available_ram(),
            )
            parts = chunks(range(len(token_ids)), max(1, rows // params.n))
            return [s for part in parts for s in self._decode([token_ids[i] for i in part], params)]
        try:
            return self._decode(token_ids, params)
        except torch.cuda.OutOfMemoryError:
            pass  # retried below, once this frame's references to the failed attempt are gone
        torch.cuda.empty_cache()
        if len(token_ids) == 1:
            raise ConfigError(
                f"model {self._info.spec}", "--batch-size auto: not even one prompt fits next to the weights"
            )
        half = (len(token_ids) + 1) // 2
        self._auto_batch = ((self._auto_batch or (0, 0))[0], half)  # later requests plan with the smaller size
        self._info.batch_size = half
        parts = chunks(range(len(token_ids)), half)
        return [s for part in parts for s in self._decode_fitting([token_ids[i] for i in part], params)]

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        if self.cpu_threads is not None:
            self.cpu_threads.adjust()
        rendered = [self.render(p) for p in prompts]
        per_row = self._decode_fitting(self._token_ids(rendered), params)
        n = params.n
        return [
            Generation(rendered_prompt=rendered[i], samples=per_row[i * n : (i + 1) * n]) for i in range(len(prompts))
        ]

    def _left_pad(self, rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(r) for r in rows)
        pad_id = int(self.tokenizer.pad_token_id)
        ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            if row:
                ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
                mask[i, width - len(row) :] = 1
        return ids.to(self.device), mask.to(self.device)

    def _prefill(
        self, token_ids: Sequence[Sequence[int]], *, grouped: bool = True
    ) -> tuple[torch.Tensor, Any, torch.Tensor, torch.Tensor]:
        """Run the prompts; return (last logits, KV cache, attention mask, last positions).

        Prompts in a batch usually share a long prefix (system prompt, instruction,
        few-shot examples). That prefix is run once and its KV cache repeated for
        every row; only the differing suffixes are run batched, left-padded after
        the prefix. Suffixes of very different lengths (a question with and
        without a passage) run in groups of similar length, so that short rows
        are not padded to the longest; the groups' caches are then laid side by
        side, padded where the mask hides them. Positions and the attention mask
        make all of this equivalent to running each full prompt. ``grouped=False``
        keeps one padded prefill, as releases before 0.2.0 ran it.
        """
        shared = _common_prefix_length(token_ids)
        if len(token_ids) < 2 or shared < _MIN_SHARED_PREFIX:
            shared = 0
        prefix_cache = None
        if shared:
            prefix = torch.tensor([list(token_ids[0][:shared])], dtype=torch.long, device=self.device)
            prefix_cache = cache_of(self.model(input_ids=prefix, use_cache=True, **self._keep_last))
        suffixes = [row[shared:] for row in token_ids]
        groups = (
            length_groups([len(s) for s in suffixes]) if grouped and self.prefill_groups and self._caches_merge else []
        )
        if len(groups) > 1:
            parts = []
            for group in groups:
                parts.append(self._prefill_group([suffixes[i] for i in group], shared, prefix_cache, keep_prefix=True))
                if not mergeable(parts[-1][1]):  # sliding-window or other cache layers: learnt once per model
                    self._caches_merge = False
                    break
            else:
                return merge(parts, groups, shared)
        return self._prefill_group(suffixes, shared, prefix_cache, keep_prefix=False)

    def _prefill_group(
        self, suffixes: Sequence[Sequence[int]], shared: int, prefix_cache: Any, *, keep_prefix: bool
    ) -> tuple[torch.Tensor, Any, torch.Tensor, torch.Tensor]:
        suffix_ids, suffix_mask = self._left_pad(suffixes)
        rows = len(suffixes)
        positions = shared + (suffix_mask.cumsum(-1) - 1).clamp(min=0)
        attention = suffix_mask
        extra: dict[str, Any] = {}
        if prefix_cache is not None:
            extra[self._cache_kwarg] = repeated(prefix_cache, rows, keep_original=keep_prefix)
            prefix_mask = torch.ones((rows, shared), dtype=suffix_mask.dtype, device=self.device)
            attention = torch.cat([prefix_mask, suffix_mask], dim=-1)
        out = self.model(
            input_ids=suffix_ids,
            attention_mask=attention,
            position_ids=positions,
            use_cache=True,
            **self._keep_last,
            **extra,
        )
        return out.logits[:, -1, :].float(), cache_of(out), attention, positions[:, -1:]

    @torch.inference_mode()
    def _decode(self, token_ids: Sequence[Sequence[int]], params: DecodingParams) -> list[Sample]:
        """Decode every row to its end of answer; rows that finish early leave the batch.

        Finished rows are dropped from the KV cache once they are a quarter of
        those still decoding, so the model no longer runs on them. Each step
        draws one uniform number for every original row (see
        ``models/sampling.py``), so when rows leave changes nothing for the
        others. Under ``--sampler multinomial`` sampled calls run as releases
        before 0.2.0 ran them, so that their samples come out identical.
        """
        device = self.device
        legacy = self.config.sampler == "multinomial" and not params.greedy
        logits, cache, attention, last_position = self._prefill(token_ids, grouped=not legacy)
        n = params.n
        if not preallocate(cache, repeats=n, extra_tokens=params.max_new_tokens) and n > 1:
            cache.batch_repeat_interleave(n)
        if n > 1:
            logits = logits.repeat_interleave(n, dim=0)
            attention = attention.repeat_interleave(n, dim=0)
            last_position = last_position.repeat_interleave(n, dim=0)
        rows = logits.shape[0]
        next_position = last_position + 1
        generator = torch.Generator(device=device).manual_seed(params.seed)
        eos = torch.tensor(self.eos_ids or [-1], device=device)
        pad_id = int(self.tokenizer.pad_token_id)
        steps = params.max_new_tokens
        can_drop = self.drop_finished_rows and not legacy and hasattr(cache, "batch_select_indices")

        present = torch.arange(rows, device=device)  # the original row of each row still in the batch
        finished = torch.zeros(rows, dtype=torch.bool, device=device)
        tokens = torch.full((rows, steps), pad_id, dtype=torch.long, device=device)
        token_logprobs = torch.zeros((rows, steps), dtype=torch.float32, device=device)
        steps_taken = torch.zeros(rows, dtype=torch.long, device=device)
        dist_sum = torch.zeros_like(logits) if params.mean_distribution else None

        for step in range(steps):
            log_norm = torch.logsumexp(logits, dim=-1, keepdim=True)
            if legacy:
                token = pick_tokens_multinomial(logits, params, generator)
            else:
                uniforms = None if params.greedy else torch.rand(rows, generator=generator, device=device)[present]
                token = pick_tokens(logits, params, uniforms)
            token = torch.where(finished, torch.full_like(token, pad_id), token)
            active = ~finished
            if dist_sum is not None:  # one vocabulary-wide temporary, exponentiated in place; masked only when needed
                probabilities = (logits - log_norm).exp_()
                if not bool(active.all()):
                    probabilities *= active.unsqueeze(-1)
                dist_sum.index_add_(0, present, probabilities)
            tokens[present, step] = token
            token_logprobs[present, step] = (logits.gather(-1, token.unsqueeze(-1)) - log_norm).squeeze(-1)
            steps_taken.index_add_(0, present, active.long())
            finished = finished | torch.isin(token, eos)
            done = int(finished.sum())
            if done == len(present) or step == steps - 1:
                break
            if can_drop and done and 4 * done >= len(present):
                keep = (~finished).nonzero().squeeze(-1)
                cache.batch_select_indices(keep)
                present, finished, token = present[keep], finished[keep], token[keep]
                attention, next_position = attention[keep], next_position[keep]
            attention = torch.cat(
                [attention, torch.ones((len(present), 1), dtype=attention.dtype, device=device)], dim=-1
            )
            out = self.model(
                input_ids=token.unsqueeze(-1),
                attention_mask=attention,
                position_ids=next_position,
                use_cache=True,
                **{self._cache_kwarg: cache},
            )
            next_position = next_position + 1
            logits = out.logits[:, -1, :].float()

        return self._samples(tokens.cpu(), token_logprobs.cpu(), steps_taken.cpu(), dist_sum, params)

    def _samples(
        self,
        tokens: torch.Tensor,
        token_logprobs: torch.Tensor,
        lengths: torch.Tensor,
        dist_sum: torch.Tensor | None,
        params: DecodingParams,
    ) -> list[Sample]:
        means = None
        if dist_sum is not None:
            # float32 already (the logits are cast to it): astype would copy every row's vocabulary once more
            means = (dist_sum.cpu() / lengths.clamp(min=1).unsqueeze(-1)).numpy().astype(np.float32, copy=False)
        eos_set = set(self.eos_ids)
        samples: list[Sample] = []
        for row in range(tokens.shape[0]):
            length = int(lengths[row])
            ids = tokens[row, :length].tolist()
            hit_eos = bool(ids) and ids[-1] in eos_set
            text_ids = ids[:-1] if hit_eos else ids
            lps = token_logprobs[row, :length].tolist()
            text = self._text(text_ids, skip_special_tokens=True)
            finish: Literal["stop", "length"] = "stop" if hit_eos else "length"
            if params.stop:
                cut = min((text.find(s) for s in params.stop if s in text), default=-1)
                if cut >= 0:
                    text, finish = text[:cut], "stop"
            samples.append(
                Sample(
                    text=text,
                    token_ids=ids,
                    token_logprobs=lps if params.token_logprobs or params.first_token_prob else None,
                    finish_reason=finish,
                    first_token_prob=float(np.exp(lps[0])) if params.first_token_prob and lps else None,
                    mean_distribution=None if means is None else means[row],
                )
            )
        return samples

    def token_strings(self, token_ids: Sequence[int]) -> list[str]:
        """Decoded text of each token, for metrics that look at individual tokens."""
        return [self._text([t]) for t in token_ids]

    def _text(self, ids: list[int], *, skip_special_tokens: bool = False) -> str:
        # decode() is annotated str | list[str]; a flat id list always gives one string
        text = self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)
        if not isinstance(text, str):
            raise TypeError(f"tokenizer.decode returned {type(text).__name__}, expected str")
        return text

    def close(self) -> None:
        del self.model
