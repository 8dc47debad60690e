"""What inspect_ai loads through our ``inspect_ai`` entry point: importing the tasks registers them."""

from chronoprobe.integrations.inspect_tasks import conflicts, outdated, recency  # noqa: F401
