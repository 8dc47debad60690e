from chronoprobe.integrations.inspect_tasks import conflicts, outdated, recency  # noqa: F401
