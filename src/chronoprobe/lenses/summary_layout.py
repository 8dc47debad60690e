"""What the built-in lenses keep between ``summarise`` and ``report``: the summary layout they made."""

from __future__ import annotations

from typing import Any


class KeepsLayout:
    """A lens whose report and ``summary.json`` are written from the layout its ``summarise`` made."""

    layout: dict[str, Any] | None = None
    """Its summary layout once :meth:`summarise` ran: what its report and ``summary.json`` hold."""

    def _layout(self) -> dict[str, Any]:
        """The summary layout :meth:`summarise` made, for the report and the console."""
        assert self.layout is not None, "summarise() first"
        return self.layout
