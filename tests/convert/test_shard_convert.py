"""MLIR's shard dialect to and from Shardy and HLO: grid axis i is the mesh's axis i, and a dim's split axes
are its Shardy axes, major to minor. XLA's own sdy -> HLO export is the oracle for the HLO side; what the
dialect says and the others cannot (halos, uneven offsets, dynamic grids), and the reverse (sub-axes,
unreduced axes, device orders), is refused with the reason."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli_util import run
from support.oracle_export import ExportCase, xla_export

from shardconv.convert.resolve import as_hlo, as_sdy
from shardconv.convert.shard_dialect import grid_mesh, mesh_grid, sdy_to_shard, shard_to_sdy
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import ShardGrid, ShardSharding
from shardconv.formats import parse_mesh, parse_sdy
from shardconv.formats.detect import parse_input
from shardconv.formats.shard.read import parse_shard_grid


@st.composite
def grid_cases(draw: st.DrawFn) -> tuple[ShardGrid, ShardSharding, int]:
    """A static grid, a tensor rank, and a sharding of that rank splitting dims over distinct grid axes."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    rank = draw(st.integers(1, 3))
    used = draw(st.permutations(range(len(shape))))[: draw(st.integers(0, len(shape)))]
    cuts = sorted(draw(st.lists(st.integers(0, len(used)), min_size=rank - 1, max_size=rank - 1)))
    bounds = [0, *cuts, len(used)]
    split = tuple(tuple(used[a:b]) for a, b in pairwise(bounds))
    return ShardGrid("grid", shape), ShardSharding("grid", split), rank


@settings(max_examples=15, deadline=None)
@given(st.lists(grid_cases(), min_size=20, max_size=20))
def test_shard_to_hlo_matches_xla_export_and_comes_back(batch: list[tuple[ShardGrid, ShardSharding, int]]) -> None:
    cases = []
    for grid, sharding, rank in batch:
        mesh = grid_mesh(grid)
        sdy = shard_to_sdy(sharding, mesh, rank=rank)
        cases.append((mesh, sdy))
        back = sdy_to_shard(sdy, mesh)
        trimmed = list(sharding.split_axes)
        while len(trimmed) > 1 and not trimmed[-1]:
            trimmed.pop()
        assert back == ShardSharding("grid", tuple(trimmed)), (str(sharding), str(sdy))
    want = xla_export([ExportCase(m, s) for m, s in cases])
    for (mesh, _), (grid, sharding, rank), w in zip(cases, batch, want):
        inp = parse_input(str(sharding))
        assert str(as_hlo(inp, mesh, rank=rank)) == w, (str(grid), str(sharding))


OPS = "llvm-project mlir/test/Dialect/Shard/ops.mlir"


@pytest.mark.parametrize(
    ("case", "grid", "text", "sdy"),
    [
        (f"{OPS} @grid_shard_op_1st_dim", "shard.grid @grid0(shape = 2x2x4)",
         "shard.sharding @grid0 split_axes = [[0]] : !shard.sharding",
         '#sdy.sharding<@grid0, [{"axis_0"}, {}]>'),
        (f"{OPS} @grid_shard_op_fully_replicated", "shard.grid @grid0(shape = 2x2x4)",
         "shard.sharding @grid0 split_axes = [[]] : !shard.sharding", "#sdy.sharding<@grid0, [{}, {}]>"),
        (f"{OPS} @grid_shard_op_two_users", "shard.grid @grid0(shape = 2x2x4)",
         "shard.sharding @grid0 split_axes = [[2]] : !shard.sharding", '#sdy.sharding<@grid0, [{"axis_2"}, {}]>'),
        # sharded_dims_offsets evenly spaced are what upstream's canonicalizer drops: an even split
        (f"{OPS} @grid_shard_dims_sizes (evenly spaced)", "shard.grid @grid4(shape = 3)",
         "shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6] : !shard.sharding",
         '#sdy.sharding<@grid4, [{"axis_0"}, {}]>'),
    ],
)
def test_ops_mlir_cases_on_their_grids(case: str, grid: str, text: str, sdy: str) -> None:
    mesh = grid_mesh(parse_shard_grid(grid))
    on = as_sdy(parse_input(text), mesh, rank=2)
    assert str(on.sharding) == sdy, case
    (want,) = xla_export([ExportCase(mesh, parse_sdy(sdy))])
    assert str(as_hlo(parse_input(text), mesh, rank=2)) == want, case


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # ops.mlir @grid_shard_halo_sizes and @grid_shard_dims_sizes
        ("shard.sharding @grid4 split_axes = [[0]] halo_sizes = [1, 4]", "halo_sizes = [1, 4]"),
        ("shard.sharding @grid4 split_axes = [[0]] halo_sizes = [4, %c3]", "halo_sizes = [4, %c3]"),
        ("shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 1, 4, 6]", "equal shards"),
        ("shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 2, %c3, 5]", "equal shards"),
    ],
)
def test_halos_and_offsets_have_no_sdy_or_hlo_spelling(text: str, said: str) -> None:
    mesh = grid_mesh(parse_shard_grid("shard.grid @grid4(shape = 3)"))
    with pytest.raises(NotExpressibleError, match=said.replace("[", r"\[")):
        as_sdy(parse_input(text), mesh)


def test_what_the_dialect_cannot_say() -> None:
    mesh = parse_mesh('sdy.mesh @mesh = <["x"=8, "y"=4]>')
    with pytest.raises(NotExpressibleError, match='sub-axis "x":\\(2\\)2'):
        sdy_to_shard(parse_sdy('<@mesh, [{"x":(2)2}, {}]>'), mesh)
    with pytest.raises(NotExpressibleError, match="unreduced"):
        sdy_to_shard(parse_sdy('<@mesh, [{"y"}, {}], unreduced={"x"}>'), mesh)
    with pytest.raises(NotExpressibleError, match="device_ids"):
        mesh_grid(parse_mesh('<["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>'))
    with pytest.raises(NotExpressibleError, match="dynamic size"):
        grid_mesh(parse_shard_grid("shard.grid @grid1(shape = 4x?)"))
    # open dims and explicit replication only guide propagation; HLO drops them too
    assert str(sdy_to_shard(parse_sdy('<@mesh, [{"y", "x", ?}, {?}], replicated={}>'), mesh)) == (
        "shard.sharding @mesh split_axes = [[1, 0]] : !shard.sharding"
    )


def test_cli_converts_both_ways() -> None:
    r = run("convert", "shard.sharding @grid0 split_axes = [[], [1, 0]]", "--mesh", "a=2,b=4", "--to", "sdy")
    assert (r.code, r.out) == (0, '#sdy.sharding<@mesh, [{}, {"b", "a"}]>\n'), r.err
    r = run("roundtrip", "shard.sharding @grid0 split_axes = [[0], [1]]", "--mesh", "a=2,b=4", "--rank", "2")
    assert r.code == 0, r.out
    op = "%s = shard.sharding @grid0 split_axes = [[1]] : !shard.sharding"
    r = run("convert", op, "-m", "a=2,b=4", "--rank", "2")
    assert (r.code, r.out) == (0, "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n"), r.err
    r = run("convert", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "-m", "a=2,b=4", "--to", "shard",
            "--with-mesh")
    grid, sharding = "shard.grid @mesh(shape = 2x4)", "shard.sharding @mesh split_axes = [[1]] : !shard.sharding"
    assert (r.code, r.out) == (0, f"{grid}\n{sharding}\n"), r.err
    halo = "shard.sharding @g split_axes = [[0]] halo_sizes = [1, 2]"
    r = run("convert", halo, "--to", "shard")  # as parsed: no mesh needed, the halos stay
    assert (r.code, r.out) == (0, halo + " : !shard.sharding\n"), r.err
    r = run("convert", halo, "-m", "a=2", "--to", "hlo")
    assert r.code == 2 and "halo_sizes = [1, 2]" in r.err and "Traceback" not in r.err
    r = run("convert", "shard.sharding @g split_axes = [[0], [0]]", "--to", "shard")
    assert r.code == 2 and "grid axis duplicated" in r.err
