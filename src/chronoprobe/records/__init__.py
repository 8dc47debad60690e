"""What a run leaves behind, below the lenses: the run folder's records (``runlog``: ``Metric``, ``Summary``,
``Run``, run.json and items.jsonl), how a command claims, stages and publishes what it writes (``publish``),
and the one rule from a config field to its flag (``fields``). Readers below the lenses (the card, the tidy
table, ``compare``) import these; the lens layer (``chronoprobe.contract``) builds on them."""
