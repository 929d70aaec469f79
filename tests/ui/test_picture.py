"""``show --format svg|html``: parsed as XML, one cell per tile, cells in proportion to --shape, the
same cells and device ids as ``jax.debug.visualize_sharding`` on 8 CPU devices; ``_repr_html_``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from math import prod

import pytest
from support.cli_util import run, run_proc
from support.jax_child import run_jax

from shardconv.core.placement import placement
from shardconv.formats import parse_hlo, parse_sdy
from shardconv.ui.picture import svg

NS = {"s": "http://www.w3.org/2000/svg"}


def _tiles(doc: str) -> dict[tuple[int, ...], tuple[tuple[int, ...], tuple[float, float, float, float]]]:
    """Tile index -> (devices, (x, y, width, height) of its rect), from the SVG parsed as XML."""
    root = ET.fromstring(doc)
    out = {}
    for g in root.iterfind(".//s:g[@class='tile']", NS):
        index = tuple(int(i) for i in g.get("data-index", "").split(",") if i)
        devices = tuple(int(d) for d in g.get("data-devices", "").split(",") if d)
        rect = g.find("s:rect", NS)
        assert rect is not None
        box = tuple(float(rect.get(k, "nan")) for k in ("x", "y", "width", "height"))
        text = g.find("s:text", NS)
        assert text is not None and text.text
        assert index not in out
        out[index] = (devices, box)
    return out  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("hlo", "shape"),
    [
        ("{devices=[2,4]<=[8]}", "16x64"),
        ("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", "8x8"),
        ("{devices=[2,2,2]<=[8]}", "4x8x16"),
        ("{devices=[2,1,2,2]<=[2,2,2]T(2,1,0)}", "2x3x4x6"),
        ("{devices=[8]0,2,4,6,1,3,5,7}", "64"),
        ("{replicated}", "4x4"),
    ],
)
def test_svg_is_xml_with_one_cell_per_tile(hlo: str, shape: str) -> None:
    r = run_proc("show", hlo, "--shape", shape, "--format", "svg")
    assert r.code == 0, r.err
    tiles = _tiles(r.out)
    p = placement(parse_hlo(hlo), shape=tuple(map(int, shape.split("x"))))
    assert {t.index: t.devices for t in p.tiles} == {i: d for i, (d, _) in tiles.items()}
    rank = len(shape.split("x"))
    grids = ET.fromstring(r.out).findall(".//s:g[@class='grid']", NS)
    assert len(grids) == (prod(p.tile_counts[:-2]) if rank > 2 else 1)  # one grid per leading index


def test_cells_are_proportional_to_the_shape() -> None:
    # 10 rows in 4 tiles: XLA's shards hold 3, 3, 3 and 1 rows; 16 columns in 2 tiles of 8
    tiles = _tiles(svg(placement(parse_hlo("{devices=[4,2]<=[8]}"), shape=(10, 16))))
    heights = [tiles[(r, 0)][1][3] for r in range(4)]
    assert heights[0] == heights[1] == heights[2] == pytest.approx(3 * heights[3])
    widths = {tiles[(r, c)][1][2] for r in range(4) for c in range(2)}
    assert len(widths) == 1
    total_w = 2 * widths.pop()
    assert sum(heights) / total_w == pytest.approx(10 / 16)
    # a wide tensor gives a wide grid
    wide = _tiles(svg(placement(parse_hlo("{devices=[2,2]<=[4]}"), shape=(8, 32))))
    assert wide[(0, 0)][1][2] == pytest.approx(4 * wide[(0, 0)][1][3])


def test_replication_groups_share_a_colour_and_tiles_differ() -> None:
    root = ET.fromstring(svg(placement(parse_hlo("{devices=[2,2,2]<=[8] last_tile_dim_replicate}"))))
    fills = [g.find("s:rect", NS).get("fill") for g in root.iterfind(".//s:g[@class='tile']", NS)]  # type: ignore[union-attr]
    assert len(set(fills)) == 4
    groups = [g.get("data-groups") for g in root.iterfind(".//s:g[@class='tile']", NS)]
    assert groups == ["{0,1}", "{2,3}", "{4,5}", "{6,7}"]


def test_manual_subgroup_lists_each_device_as_its_own_group() -> None:
    root = ET.fromstring(svg(placement(parse_hlo("{devices=[2,2]<=[4] last_tile_dims={manual}}"))))
    groups = [g.get("data-groups") for g in root.iterfind(".//s:g[@class='tile']", NS)]
    assert groups == ["{0} {1}", "{2} {3}"]


def test_html_page_and_tuple() -> None:
    r = run("show", "{devices=[2,2]<=[4]}", "--shape", "4x4", "--format", "html")
    assert r.code == 0, r.err
    assert r.out.startswith("<!DOCTYPE html>") and r.out.count("<svg") == 1
    body = re.search(r"<svg.*</svg>", r.out, re.DOTALL)
    assert body is not None and len(_tiles(body.group(0))) == 4
    t = run("show", "{{devices=[2]<=[2]}, {replicated}}", "--format", "html")
    assert t.code == 0 and t.out.count("<svg") == 2 and "element 1: {replicated}" in t.out
    svg_of_tuple = run("show", "{{devices=[2]<=[2]}, {replicated}}", "--format", "svg")
    assert svg_of_tuple.code == 2 and "use --format html" in svg_of_tuple.err


def test_caption_is_escaped() -> None:
    doc = svg(placement(parse_hlo("{devices=[2]<=[2]}")), caption='<&"x">')
    assert ET.fromstring(doc).find("s:text[@class='caption']", NS).text == '<&"x">'  # type: ignore[union-attr]


def test_too_many_tiles_is_an_input_error() -> None:
    r = run("show", "{devices=[128,64]<=[8192]}", "--format", "svg")
    assert r.code == 2 and "too many to draw" in r.err and "Traceback" not in r.err


def test_repr_html_for_jupyter() -> None:
    import shardconv.ui.jupyter  # noqa: F401  registers the html printers (the package root's loader does it too)

    hlo = parse_hlo("{devices=[2,2]<=[4]}")
    html = hlo._repr_html_()
    assert html is not None and html.startswith('<div class="shardconv-sharding">')
    svg_part = re.search(r"<svg.*</svg>", html, re.DOTALL)
    assert svg_part is not None and len(_tiles(svg_part.group(0))) == 4
    inline = parse_sdy('#sdy.sharding<mesh<["a"=2, "b"=2]>, [{"b"}, {}]>')
    html2 = inline._repr_html_()
    assert html2 is not None
    tiles = _tiles(re.search(r"<svg.*</svg>", html2, re.DOTALL).group(0))  # type: ignore[union-attr]
    assert {i: d for i, (d, _) in tiles.items()} == {(0, 0): (0, 2), (1, 0): (1, 3)}
    assert parse_sdy('#sdy.sharding<@mesh, [{"b"}, {}]>')._repr_html_() is None  # mesh by name: text repr


_JAX = r"""
import contextlib, io, json, sys
import numpy as np
import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devs = np.array(jax.devices())
assert len(devs) == 8
meshes = {"iota": devs.reshape(2, 4), "permuted": devs[[0, 2, 4, 6, 1, 3, 5, 7]].reshape(2, 4)}
cases = [(m, spec, shape) for m in meshes for spec, shape in [
    (("x", "y"), (8, 16)), (("y", "x"), (16, 8)), (("x",), (8, 16)), ((None, "y"), (8, 16)),
    ((("x", "y"),), (16, 4)), ((), (4, 4)), (("y",), (16,)), ((("y", "x"),), (32,)),
]]
out = []
for m, spec, shape in cases:
    s = NamedSharding(Mesh(meshes[m], ("x", "y")), P(*spec))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.debug.visualize_sharding(shape, s, use_color=False)
    out.append({"hlo": str(s._to_xla_hlo_sharding(len(shape))), "shape": list(shape), "drawn": buf.getvalue(),
                "assignment": [d.id for d in s._device_assignment]})
print(json.dumps(out))
"""


def _jax_cells(drawn: str) -> list[list[tuple[int, ...]]]:
    """The rows of visualize_sharding's boxed table, each a list of the device ids written in its cells."""
    rows: list[list[str]] = []
    block: list[list[str]] = []
    for line in drawn.splitlines():
        if line[:1] in "┌├└":
            if block:
                rows.append([" ".join(col) for col in zip(*block)])
            block = []
        elif line.startswith("│"):
            block.append(line.strip().strip("│").split("│"))
    return [[tuple(int(d) for d in re.findall(r"\d+", cell)) for cell in row] for row in rows]


@pytest.mark.oracle
def test_same_cells_as_jax_visualize_sharding() -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", _JAX], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cases = json.loads(proc.stdout)
    assert len(cases) == 16
    for case in cases:
        shape = "x".join(map(str, case["shape"]))
        r = run("show", case["hlo"], "--shape", shape, "--mesh", "x=2,y=4", "--format", "svg")
        assert r.code == 0, (case["hlo"], r.err)
        tiles = _tiles(r.out)
        ours: dict[int, dict[int, tuple[int, ...]]] = {}
        for index, (devices, _) in tiles.items():
            row, col = (0, index[0]) if len(index) == 1 else index
            ours.setdefault(row, {})[col] = devices
        grid = [[ours[r][c] for c in sorted(ours[r])] for r in sorted(ours)]
        # jax writes device ids; an HLO sharding holds positions in the device assignment
        position = {d: i for i, d in enumerate(case["assignment"])}
        theirs = [[tuple(sorted(position[d] for d in cell)) for cell in row] for row in _jax_cells(case["drawn"])]
        assert grid == theirs, (case["hlo"], case["drawn"])
    assert any(case["assignment"] != sorted(case["assignment"]) for case in cases)  # the permuted mesh ran


def test_repr_html_through_the_package_root() -> None:
    """The pictures load on Jupyter's first ask, and str() alone never loads them (start-up stays lean)."""
    code = (
        "import sys, shardconv; h = shardconv.parse_hlo('{devices=[2]<=[2]}'); str(h); "
        "print('shardconv.ui.picture' in sys.modules, h._repr_html_() is not None)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.stdout.strip() == "False True", proc.stderr
