"""MLIR's ``shard`` dialect: grids and shardings read, print and verify as mlir-opt does. No jaxlib holds the
dialect, so llvm-project's own test files are the reference, each case named by file and function:
``mlir/test/Dialect/Shard/ops.mlir`` (round trips through ``mlir-opt | mlir-opt``) and
``mlir/test/Dialect/Shard/invalid.mlir`` (the verifier's messages)."""

from __future__ import annotations

import pytest

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import ShardGrid, ShardSharding
from shardconv.formats.shard.read import parse_shard_grid, parse_shard_sharding
from shardconv.formats.shard.verify import verify_grid, verify_shard_sharding

# ops.mlir: every grid it declares, printed back as its CHECK lines say.
OPS_GRIDS = {
    "shard.grid @grid0(shape = 2x2x4)": (2, 2, 4),
    "shard.grid @grid1(shape = 4x?)": (4, None),
    "shard.grid @grid2(shape = ?x4)": (None, 4),
    "shard.grid @grid3(shape = ?x?)": (None, None),
    "shard.grid @grid4(shape = 3)": (3,),
    "shard.grid @grid5(shape = ?)": (None,),
}
# ops.mlir: (function, the sharding as written and as mlir-opt prints it)
OPS_SHARDINGS = [
    ("@grid_shard_op_fully_replicated", "shard.sharding @grid0 split_axes = [[]] : !shard.sharding"),
    ("@grid_shard_op_1st_dim", "shard.sharding @grid0 split_axes = [[0]] : !shard.sharding"),
    ("@grid_shard_op_2nd_dim", "shard.sharding @grid1 split_axes = [[], [0]] : !shard.sharding"),
    ("@grid_shard_op_1st_and_3rd_dim", "shard.sharding @grid3 split_axes = [[0], [], [1]] : !shard.sharding"),
    ("@grid_shard_op_two_users", "shard.sharding @grid0 split_axes = [[2]] : !shard.sharding"),
    ("@grid_shard_halo_sizes", "shard.sharding @grid4 split_axes = [[0]] halo_sizes = [1, 4] : !shard.sharding"),
    ("@grid_shard_halo_sizes", "shard.sharding @grid4 split_axes = [[0]] halo_sizes = [4, %c3] : !shard.sharding"),
    (
        "@grid_shard_dims_sizes",
        "shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 1, 4, 6] : !shard.sharding",
    ),
    (
        "@grid_shard_dims_sizes",
        "shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 2, %c3, 5] : !shard.sharding",
    ),
]


@pytest.mark.parametrize(("text", "shape"), OPS_GRIDS.items())
def test_ops_mlir_grids(text: str, shape: tuple[int | None, ...]) -> None:
    grid = parse_shard_grid(text)
    assert grid == ShardGrid(text.split("@")[1].split("(")[0], shape) and str(grid) == text
    verify_grid(grid)


@pytest.mark.parametrize(("case", "text"), OPS_SHARDINGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(OPS_SHARDINGS)])
def test_ops_mlir_shardings_print_as_mlir_opt(case: str, text: str) -> None:
    sharding = parse_shard_sharding(text)
    assert str(sharding) == text, case
    grids = {g.name: g for g in map(parse_shard_grid, OPS_GRIDS)}
    verify_shard_sharding(sharding, grids[sharding.grid])


def test_the_op_reads_with_its_result_and_without_its_type() -> None:
    """``%s = shard.sharding ...`` as a dump writes it, and the bare op a user types, read alike."""
    op = "shard.sharding @grid4 split_axes = [[0]] halo_sizes = [4, %c3]"
    whole = parse_shard_sharding(f"%sharding2 = {op} : !shard.sharding")
    assert whole == parse_shard_sharding(op)
    assert whole == ShardSharding("grid4", ((0,),), halo_sizes=(4, "%c3"))


# invalid.mlir: (function, grid, sharding, upstream's message)
INVALID = [
    ("@grid_axis_duplicated_different_subarray", "shard.grid @grid0(shape = 2x4)",
     "shard.sharding @grid0 split_axes = [[0], [0]]", "grid axis duplicated"),
    ("@grid_axis_duplicated_same_subarray", "shard.grid @grid0(shape = 2x4)",
     "shard.sharding @grid0 split_axes = [[0, 0]]", "grid axis duplicated"),
    ("@grid_axis_negtive_in_split_part", "shard.grid @grid0(shape = 2x4)",
     "shard.sharding @grid0 split_axes = [[-1]]", "grid axis is expected to be non-negative"),
    ("@sharding_attribute_invalid_halo", None,
     "shard.sharding @grid0 split_axes = [[0], [1]] halo_sizes = [1, 2]",
     "halo sizes must be specified for all split axes"),
    ("@sharding_attribute_invalid_sizes", None,
     "shard.sharding @grid0 split_axes = [[0]] halo_sizes = [1, 2] sharded_dims_offsets = [0, 2, 2]",
     "halo sizes and shard offsets are mutually exclusive"),
    ("@sharding_dyn_grid_and_sizes", "shard.grid @grid_dyn(shape = ?x?)",
     "shard.sharding @grid_dyn split_axes = [[0]] sharded_dims_offsets = [0, 2, 2]",
     "sharded dims offsets are not allowed for device grids with dynamic shape"),
    ("@sharding_sizes_count", "shard.grid @grid0(shape = 2x4)",
     "shard.sharding @grid0 split_axes = [[0], [1]] sharded_dims_offsets = [0, 2, 4, 0, 2, 4, 6]",
     "sharded dims offsets has wrong size"),
    ("@sharding_sizes_decreasing", "shard.grid @grid0(shape = 4)",
     "shard.sharding @grid0 split_axes = [[0]] sharded_dims_offsets = [0, 2, 3, 2]",
     "sharded dims offsets must be non-decreasing"),
    # the bound shard.grid_shape / all_reduce check (invalid.mlir @grid_shape_grid_axis_out_of_bounds)
    ("@grid_shape_grid_axis_out_of_bounds", "shard.grid @grid0(shape = 2x4)",
     "shard.sharding @grid0 split_axes = [[0], [2]]",
     '0-based grid axis index 2 is out of bounds. The referenced grid "grid0" is of rank 2.'),
]


@pytest.mark.parametrize(("case", "grid", "text", "said"), INVALID, ids=[c for c, *_ in INVALID])
def test_invalid_mlir_messages(case: str, grid: str | None, text: str, said: str) -> None:
    with pytest.raises(ShardingValidationError) as e:
        verify_shard_sharding(parse_shard_sharding(text), parse_shard_grid(grid) if grid else None)
    assert said in e.value.message


def test_invalid_mlir_grids_and_symbols() -> None:
    """invalid.mlir: a grid of rank 0 (``shape = []``) fails its verifier; ``shape = -1`` and a nested
    symbol ``@a::@b`` fail to parse."""
    with pytest.raises(ShardingValidationError, match="rank of grid is expected to be a positive integer"):
        verify_grid(parse_shard_grid("shard.grid @grid0(shape = [])"))
    with pytest.raises(ShardingSyntaxError) as e:
        parse_shard_grid("shard.grid @grid0(shape = -1)")
    assert e.value.pos == len("shard.grid @grid0(shape = ")
    with pytest.raises(ShardingSyntaxError) as e:
        parse_shard_sharding("shard.sharding @a::@b split_axes = [[0]] : !shard.sharding")
    assert e.value.pos == len("shard.sharding @a")
    with pytest.raises(ShardingSyntaxError):
        parse_shard_sharding("shard.sharding @g split_axes = []")  # ShardOps.td: at least [[]]
