"""``--help`` that reads in 80 columns: each option on its own line, its description wrapped under it.

Typer draws a command's options as a table: the names, the short names, the negative flags and
the value type each take a column, and the description gets what is left. On a large command in
an 80-column terminal that is about 18 characters, and long option names are cut
(``--instruction-f…``). Where the table would leave the descriptions fewer than
:data:`MIN_HELP_WIDTH` columns, this layout is drawn instead, in the same panel:

    --instruction-file <path>
        The instruction wrapping each sentence, from a file ...

A wide terminal keeps typer's table. Typer has no hook for the layout, so :func:`install`
replaces its panel function (once, for every command, generated ones included); a typer
without it keeps its own layout.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text
from typer import rich_utils

MIN_HELP_WIDTH = 40
"""Fewer columns than this for the descriptions, and each option gets a line of its own."""
INDENT = 4


def option_names(param: Any) -> str:
    """``--model, -m``; ``--locality / --no-locality``; an argument's own name."""
    if not getattr(param, "opts", None) or param.param_type_name == "argument":
        name = getattr(param, "display_name_raw", None) or (param.name or "").upper()
        return name + ("..." if getattr(param, "nargs", 1) != 1 and param.metavar is None else "")
    names = ", ".join(
        [*(o for o in param.opts if o.startswith("--")), *(o for o in param.opts if not o.startswith("--"))]
    )
    negative = ", ".join(param.secondary_opts)
    return f"{names} / {negative}" if negative else names


def value_type(param: Any, ctx: Any) -> str:
    """What follows the option (``<path>``, ``<int range> [x>=1]``), empty for a flag."""

    shown = param.display_type_rich(ctx=ctx) or ""
    ranged = param._get_number_range_help_str() if hasattr(param, "_get_number_range_help_str") else ""
    if ranged:
        shown += rich_utils.RANGE_STRING.format(ranged)
    return str(shown)


def _row_width(param: Any, ctx: Any) -> int:
    """Columns the table gives this option's names and type (each cell padded by one on either side)."""
    cells = [*(o for o in param.opts if o.startswith("--")), *(o for o in param.opts if not o.startswith("--"))]
    cells += list(param.secondary_opts)
    return sum(len(c) + 2 for c in cells) + len(value_type(param, ctx)) + 2 + 2


def table_fits(params: list[Any], ctx: Any, width: int) -> bool:
    """Whether typer's table leaves the descriptions at least :data:`MIN_HELP_WIDTH` columns, and room for
    their longest word (a path pattern such as ``<METHOD>/<single_edits|batch_editing>/...``)."""
    widest = max((_row_width(p, ctx) for p in params), default=0)
    left = width - 4 - widest  # 4: the panel's borders and padding
    longest = max((len(word) for p in params for word in (getattr(p, "help", None) or "").split()), default=0)
    return left >= max(MIN_HELP_WIDTH, longest)


def _help(param: Any, ctx: Any, markup_mode: Any) -> RenderableType:

    parts = rich_utils._get_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode)
    pieces = list(getattr(parts, "renderables", [parts]))
    if all(isinstance(piece, Text) for piece in pieces):  # one paragraph, so the default wraps after the text
        return Text(" ").join(pieces)
    return Group(*pieces)


def stacked_panel(name: str, params: list[Any], ctx: Any, markup_mode: Any) -> Panel:
    """The options of one panel, each as a names line with its description indented below."""

    rows: list[RenderableType] = []
    for param in params:
        line = Text(overflow="fold")
        if param.required:
            line.append(rich_utils.REQUIRED_SHORT_STRING + " ", style=rich_utils.STYLE_REQUIRED_SHORT)
        line.append_text(rich_utils.highlighter(option_names(param)))
        shown = value_type(param, ctx)
        if shown:
            line.append(" ")
            line.append_text(rich_utils.types_highlighter(Text(shown, style=rich_utils.STYLE_TYPES)))
        rows.append(line)
        rows.append(Padding(_help(param, ctx, markup_mode), (0, 0, 0, INDENT)))
    return Panel(
        Group(*rows),
        border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER,
        title=name,
        title_align=rich_utils.ALIGN_OPTIONS_PANEL,
    )


def install() -> None:
    """Draw option panels that would squeeze their descriptions as :func:`stacked_panel` (idempotent)."""
    try:
        from typer import rich_utils  # optional: typer installed without rich has none
    except ImportError:  # typer without rich: click's own plain help
        return
    original = getattr(rich_utils, "_print_options_panel", None)
    if original is None or getattr(original, "_chronoprobe", False):
        return

    def print_options_panel(
        *, name: str, params: list[Any], ctx: Any, markup_mode: Any, console: Console, **rest: Any
    ) -> None:
        if not params or table_fits(params, ctx, console.width):
            original(name=name, params=params, ctx=ctx, markup_mode=markup_mode, console=console, **rest)
            return
        console.print(stacked_panel(name, params, ctx, markup_mode))

    print_options_panel._chronoprobe = True  # type: ignore[attr-defined]  # a marker on the function: patch typer once
    rich_utils._print_options_panel = print_options_panel
