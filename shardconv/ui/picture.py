"""The device grid as an SVG picture (and an HTML page or fragment holding it), drawn as
``jax.debug.visualize_sharding`` draws it: one cell per tile, sized in proportion to the slice of the
tensor shape it holds, the device ids written in it, a colour per tile (its replication group). Rank
> 2 gets one grid per leading index. Pure string generation: no dependency, nothing imported late."""

from __future__ import annotations

from dataclasses import KW_ONLY
from html import escape
from itertools import product

from shardconv.core.errors import ShardingValidationError
from shardconv.core.placement import Placement, Tile
from shardconv.core.records import record
from shardconv.ui.device_ids import compress_ids
from shardconv.ui.tiles import PALETTE

MAX_PICTURE_TILES = 4096
GRID_WIDTH = 480  # px of a grid's longer side before labels widen it
CHAR = 7.5  # px per character of the 12 px monospace label font
CELL_MIN = 28.0  # px: no cell is drawn thinner, so an empty (padding-only) tile stays visible
TITLE = 22  # px above each grid for its ``[i, :, :]`` title
GAP = 24  # px between grids
PER_ROW = 4  # grids side by side before the next row of grids


@record
class Cell:
    """One tile as drawn: position and size in px, its tile index and devices, its colour."""

    _: KW_ONLY
    x: float
    y: float
    width: float
    height: float
    tile: Tile
    colour: str
    groups: tuple[tuple[int, ...], ...]  # the tile's devices split into groups that hold the same data


def _extents(p: Placement, dim: int, count: int) -> list[float]:
    """The share of the tensor each tile index along ``dim`` holds (equal without a shape)."""
    if p.shape is None or dim < 0 or p.shape[dim] == 0:
        return [1.0 / count] * count
    sizes = [0.0] * count
    for t in p.tiles:
        if t.slice is not None:
            lo, hi = t.slice[dim]
            sizes[t.index[dim]] = (hi - lo) / p.shape[dim]
    return sizes


def _sides(p: Placement, rows: int, cols: int, label_chars: int) -> tuple[float, float]:
    """The grid's (width, height) in px: the tensor's aspect ratio (clamped to 1:4..4:1), widened so
    the longest label fits its cell."""
    if p.shape is not None and p.rank >= 2 and p.shape[-1] and p.shape[-2]:
        aspect = min(max(p.shape[-2] / p.shape[-1], 0.25), 4.0)
    elif p.rank >= 2:
        aspect = min(max(rows / cols, 0.25), 4.0)
    else:
        aspect = 0.0
    width = max(float(GRID_WIDTH), cols * (label_chars * CHAR + 12))
    height = width * aspect if aspect else 48.0
    return width, max(height, rows * CELL_MIN)


def _offsets(shares: list[float], total: float) -> list[tuple[float, float]]:
    """(start, size) of each share of ``total``, no size under CELL_MIN."""
    sizes = [max(s * total, CELL_MIN) for s in shares]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return list(zip(starts, sizes))


def grid_cells(p: Placement, lead: tuple[int, ...], groups_of: dict[int, tuple[tuple[int, ...], ...]]) -> list[Cell]:
    """The cells of the 2-D grid at leading index ``lead`` (rank <= 2: the only grid), at origin 0,0."""
    rows = p.tile_counts[-2] if p.rank >= 2 else 1
    cols = p.tile_counts[-1] if p.rank >= 1 else 1
    by_index = {t.index: t for t in p.tiles}
    number = {t.index: n for n, t in enumerate(p.tiles)}
    labels = max(len(compress_ids(t.devices)) for t in p.tiles)
    width, height = _sides(p, rows, cols, labels)
    xs = _offsets(_extents(p, p.rank - 1, cols), width)
    ys = _offsets(_extents(p, p.rank - 2, rows) if p.rank >= 2 else [1.0], height)
    cells = []
    for r, c in product(range(rows), range(cols)):
        index = () if p.rank == 0 else (c,) if p.rank == 1 else (*lead, r, c)
        tile = by_index[index]
        (x, w), (y, h) = xs[c], ys[r]
        colour = PALETTE[number[index] % len(PALETTE)]
        cells.append(
            Cell(
                x=x,
                y=y,
                width=w,
                height=h,
                tile=tile,
                colour=colour,
                groups=groups_of.get(number[index], (tile.devices,)),
            )
        )
    return cells


def _tile_groups(p: Placement) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Tile number -> the replication groups among its devices (several when manual/unreduced split it)."""
    owner = {d: n for n, t in enumerate(p.tiles) for d in t.devices}
    found: dict[int, list[tuple[int, ...]]] = {}
    for g in p.groups:
        if g:
            found.setdefault(owner[g[0]], []).append(g)
    return {n: tuple(gs) for n, gs in found.items()}


def _grid_svg(cells: list[Cell], dx: float, dy: float, title: str) -> list[str]:
    out = [f'<g class="grid" transform="translate({dx:g},{dy:g})">']
    if title:
        out.append(f'<text class="title" x="0" y="-8">{escape(title)}</text>')
    for cell in cells:
        t = cell.tile
        devices = ",".join(map(str, t.devices))
        groups = " ".join("{" + ",".join(map(str, g)) + "}" for g in cell.groups)
        where = f" [{', '.join(f'{a}:{b}' for a, b in t.slice)}]" if t.slice is not None else ""
        out.append(
            f'<g class="tile" data-index="{",".join(map(str, t.index))}" data-devices="{devices}"'
            f' data-groups="{escape(groups)}">'
            f"<title>devices {escape(groups)}{escape(where)}</title>"
            f'<rect x="{cell.x:g}" y="{cell.y:g}" width="{cell.width:g}" height="{cell.height:g}"'
            f' fill="{cell.colour}" stroke="#333" stroke-width="1"/>'
            f'<text x="{cell.x + cell.width / 2:g}" y="{cell.y + cell.height / 2:g}" text-anchor="middle"'
            f' dominant-baseline="central">{escape(compress_ids(t.devices))}</text></g>'
        )
    out.append("</g>")
    return out


def svg(p: Placement, *, caption: str = "") -> str:
    """The placement as a standalone SVG document: one grid per leading index of rank > 2."""
    if len(p.tiles) > MAX_PICTURE_TILES:
        raise ShardingValidationError(
            f"{len(p.tiles)} tiles are too many to draw (at most {MAX_PICTURE_TILES}); use --format json"
        )
    groups_of = _tile_groups(p)
    leads = list(product(*(range(c) for c in p.tile_counts[:-2]))) if p.rank > 2 else [()]
    grids = [grid_cells(p, lead, groups_of) for lead in leads]
    gw = max(c.x + c.width for c in grids[0])
    gh = max(c.y + c.height for c in grids[0])
    top = 20.0 if caption else 0.0
    titled = p.rank > 2
    body: list[str] = []
    for n, (lead, cells) in enumerate(zip(leads, grids)):
        col, row = n % PER_ROW, n // PER_ROW
        title = "[" + ", ".join([*map(str, lead), ":", ":"]) + "]" if titled else ""
        dy = top + (TITLE if titled else 0) + row * (gh + GAP + (TITLE if titled else 0))
        body += _grid_svg(cells, 1 + col * (gw + GAP), dy + 1, title)
    cols = min(len(leads), PER_ROW)
    rows = -(-len(leads) // PER_ROW)
    width = cols * gw + (cols - 1) * GAP + 2
    height = top + rows * (gh + (TITLE if titled else 0)) + (rows - 1) * GAP + 2
    head = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="shardconv-sharding" width="{width:g}" height="{height:g}"'
            f' viewBox="0 0 {width:g} {height:g}" font-family="monospace" font-size="12">'
        )
    ]
    if caption:
        head.append(f'<text class="caption" x="1" y="14">{escape(caption)}</text>')
    return "\n".join([*head, *body, "</svg>"]) + "\n"


def html_fragment(p: Placement, *, caption: str = "") -> str:
    """The SVG in a ``<div>``: what Jupyter's ``_repr_html_`` shows."""
    return f'<div class="shardconv-sharding">\n{svg(p, caption=caption)}</div>\n'


def html_page(p: Placement, *, caption: str = "") -> str:
    """A standalone HTML page holding the picture (for docs and PR comments)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(caption or 'sharding')}</title>\n</head>\n<body>\n"
        f"{html_fragment(p, caption=caption)}</body>\n</html>\n"
    )
