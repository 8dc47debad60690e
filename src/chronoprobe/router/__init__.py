"""The trained recency router: how soon a question's answer changes, and whether to retrieve, from a
small shipped classifier (``docs/router.md``). Prediction needs numpy and the embedded MiniLM only."""
