"""Rich renderables for a Placement: a ``jax.debug.visualize_sharding``-style grid for any rank, or a tile
list when a grid would not fit the width. rich is imported only when these are called."""

from __future__ import annotations

from io import StringIO
from itertools import product
from typing import TYPE_CHECKING, Any

from shardconv.core.placement import Placement, Tile
from shardconv.ui.device_ids import compress_ids
from shardconv.ui.wrap import wrap_value

if TYPE_CHECKING:
    from rich.console import RenderableType

# Background colours for tiles (readable with black text); cycled by tile number.
PALETTE = (
    "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99", "#8dd3c7", "#bebada",
    "#fccde5", "#d9d9d9", "#ccebc5", "#ffed6f", "#80b1d3", "#fdb462", "#b3de69", "#bc80bd",
)
MAX_GRIDS = 16
MAX_GRID_TILES = 256
MAX_LIST_TILES = 512
_GAP = 3  # spaces between tile-list columns


def cell_text(tile: Tile, *, with_slice: bool) -> str:
    """What one grid cell says: the devices, and with a shape the slice they hold."""
    text = compress_ids(tile.devices)
    if with_slice and tile.slice is not None:
        text += "\n" + slice_text(tile.slice)
    return text


def slice_text(bounds: tuple[tuple[int, int], ...]) -> str:
    """``[0:8, 0:32]`` (numpy slice notation); rank 0 is ``[]``."""
    return "[" + ", ".join(f"{a}:{b}" for a, b in bounds) + "]"


def grid_fits(p: Placement, width: int, *, compact: bool = False) -> bool:
    """Whether the per-2-D-slice grids fit ``width`` columns and stay a sensible size; ``compact``
    grids are borderless and list devices only."""
    if p.rank == 0:
        return True
    cols = p.tile_counts[-1]
    limit = MAX_GRID_TILES * (4 if compact else 1)
    if len(p.tiles) > limit or _num_grids(p) > MAX_GRIDS:
        return False
    widest = max(max(len(s) for s in cell_text(t, with_slice=not compact).split("\n")) for t in p.tiles)
    return (cols * (widest + 1) if compact else 1 + cols * (widest + 3)) <= width


def _num_grids(p: Placement) -> int:
    n = 1
    for c in p.tile_counts[:-2]:
        n *= c
    return n


def render_placement(
    p: Placement, *, width: int, color: bool, wrap: int | None = None
) -> list[RenderableType]:
    """Boxed grid(s) with slices when they fit ``width``, else borderless device grids, else a tile
    list wrapped at ``wrap`` (rank > 2 gets one grid per leading index). Print them with crop off."""
    compact = not grid_fits(p, width)
    if compact and not grid_fits(p, width, compact=True):
        from rich.text import Text

        return [Text("\n".join(tile_list(p, wrap)), no_wrap=True, overflow="ignore")]
    by_index = {t.index: t for t in p.tiles}
    if p.rank <= 2:
        return [_grid(p, by_index, (), color, compact)]
    from rich.columns import Columns
    from rich.console import Group

    grids = []
    for lead in product(*(range(c) for c in p.tile_counts[:-2])):
        title = "[" + ", ".join([*map(str, lead), ":", ":"]) + "]"
        grids.append(Group(title, _grid(p, by_index, lead, color, compact)))
    return [Columns(grids, padding=(0, 2))]


def placement_text(p: Placement, *, width: int) -> str:
    """``render_placement`` as plain text (no colour), for places that show text, not a terminal."""
    from rich.console import Console

    out = StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False, highlight=False)
    for r in render_placement(p, width=width, color=False, wrap=width):
        console.print(r, crop=False, soft_wrap=True)
    return out.getvalue().rstrip("\n")


def _grid(
    p: Placement, by_index: dict[tuple[int, ...], Tile], lead: tuple[int, ...], color: bool, compact: bool
) -> Any:
    from rich import box
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    rows = p.tile_counts[-2] if p.rank >= 2 else 1
    cols = p.tile_counts[-1] if p.rank >= 1 else 1
    if compact:
        table = Table(show_header=False, box=None, padding=(0, 1, 0, 0), pad_edge=False)
    else:
        table = Table(show_header=False, show_lines=True, box=box.SQUARE, padding=0)
    for _ in range(cols):
        table.add_column(justify="center", vertical="middle")
    for r in range(rows):
        cells = []
        for c in range(cols):
            index = () if p.rank == 0 else (c,) if p.rank == 1 else (*lead, r, c)
            tile = by_index[index]
            style = _style(tile, p, color)
            text = Text(cell_text(tile, with_slice=not compact), justify="right" if compact else "center")
            cells.append(text if compact else Padding(text, (0, 1), style=style, expand=True))
        table.add_row(*cells)
    return table


def _style(tile: Tile, p: Placement, color: bool) -> str:
    if not color:
        return ""
    n = p.tiles.index(tile)
    return f"black on {PALETTE[n % len(PALETTE)]}"


def tile_list(p: Placement, wrap: int | None) -> list[str]:
    """One row per tile: index, slice (with a shape), devices, in plain columns; the devices wrap at
    commas to ``wrap`` columns (never when ``None``). Truncated after MAX_LIST_TILES rows."""
    rows = []
    for t in p.tiles[:MAX_LIST_TILES]:
        row = ["(" + ", ".join(map(str, t.index)) + ")"]
        if p.shape is not None and t.slice is not None:
            row.append(slice_text(t.slice))
        rows.append((row, compress_ids(t.devices)))
    head = ["tile", "slice"] if p.shape is not None else ["tile"]
    widths = [max(len(r[0][i]) for r in [(head, ""), *rows]) for i in range(len(head))]
    lead = sum(widths) + _GAP * len(widths)
    lines = ["".join(h.ljust(w + _GAP) for h, w in zip(head, widths)) + "devices"]
    body = []
    for row, devices in rows:
        cells = "".join(c.ljust(w + _GAP) for c, w in zip(row, widths))
        first, *more = wrap_value(devices, wrap, indent=lead, first=lead)
        body += [cells + first, *more]
    widest = max(map(len, lines + body))
    lines.append("─" * (min(widest, wrap) if wrap is not None else widest))
    lines.extend(body)
    if len(p.tiles) > MAX_LIST_TILES:
        lines.append(f"... {len(p.tiles) - MAX_LIST_TILES} more tiles (use --format json for all)")
    return lines
