"""``check`` on MLIR's shard dialect (docs/formats.md, "MLIR's shard dialect"): grids are meshes to the mesh
rules, each ``shard.sharding`` is verified against its grid with mlir-opt's messages, and the native scan
reads the ops as the reference scanner does. The lit cases are llvm-project's
``mlir/test/Dialect/Shard/invalid.mlir`` and ``ops.mlir``, each named by its function."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.differential import Options, differences
from support.cli_util import run

from shardconv.check import check_text
from shardconv.cli.main import main
from shardconv.core.model import ShardSharding
from shardconv.scan.api import scan_text
from shardconv.scan.sites import SiteKind

# (llvm-project mlir/test/Dialect/Shard/invalid.mlir case, the grid it declares, the sharding, the error)
INVALID = [
    ("grid_axis_duplicated_different_subarray", "2x4", "[[0], [0]]", "grid axis duplicated"),
    ("grid_axis_duplicated_same_subarray", "2x4", "[[0, 0]]", "grid axis duplicated"),
    ("grid_axis_negtive_in_split_part", "2x4", "[[-1]]", "grid axis is expected to be non-negative"),
    ("sharding_attribute_invalid_halo", None, "[[0], [1]] halo_sizes = [1, 2]",
     "halo sizes must be specified for all split axes."),
    ("sharding_attribute_invalid_sizes", None, "[[0]] halo_sizes = [1, 2] sharded_dims_offsets = [0, 2, 2]",
     "halo sizes and shard offsets are mutually exclusive"),
    ("sharding_dyn_grid_and_sizes", "?x?", "[[0]] sharded_dims_offsets = [0, 2, 2]",
     "sharded dims offsets are not allowed for device grids with dynamic shape."),
    ("sharding_sizes_count", "2x4", "[[0], [1]] sharded_dims_offsets = [0, 2, 4, 0, 2, 4, 6]",
     "sharded dims offsets has wrong size."),
    ("sharding_sizes_decreasing", "4", "[[0]] sharded_dims_offsets = [0, 2, 3, 2]",
     "sharded dims offsets must be non-decreasing."),
    # the bound its other ops check (grid_shape_grid_axis_out_of_bounds), on a sharding
    ("grid_shape_grid_axis_out_of_bounds", "2x4", "[[0], [2]]",
     '0-based grid axis index 2 is out of bounds. The referenced grid "grid0" is of rank 2.'),
    # an undeclared grid (grid_shape_invalid_grid_name), on a sharding
    ("grid_shape_invalid_grid_name", None, "[[0]]", 'Undefined required grid symbol "grid0".'),
]


def _lit_case(name: str, shape: str | None, split: str, error: str) -> str:
    grid = f"shard.grid @grid0(shape = {shape})\n\n" if shape else ""
    return (
        f"{grid}func.func @{name}(%arg0 : tensor<4x8xf32>) -> tensor<4x8xf32> {{\n"
        f"  // expected-error@+1 {{{{{error}}}}}\n"
        f"  %s = shard.sharding @grid0 split_axes = {split} : !shard.sharding\n"
        "  %0 = shard.shard %arg0 to %s : tensor<4x8xf32>\n"
        "  return %0 : tensor<4x8xf32>\n}\n"
    )


LIT_FILE = "\n// -----\n\n".join(_lit_case(*case) for case in INVALID)


def test_every_invalid_case_is_the_expected_error_at_its_line() -> None:
    findings = check_text(LIT_FILE)
    lines = LIT_FILE.splitlines()
    wanted = {i + 2: m.group(1) for i, t in enumerate(lines) if (m := re.search(r"\{\{(.*)\}\}", t))}
    got = {f.line: f.message for f in findings}
    assert set(got) == set(wanted)
    for line, message in got.items():
        assert message == f"shard.sharding: {wanted[line]}", line
    assert all(f.expected and f.rule == "verify" for f in findings)


def test_a_grid_of_rank_zero() -> None:
    """invalid.mlir's first case: ``shard.grid @grid0(shape = [])``."""
    (f,) = check_text("shard.grid @grid0(shape = [])\n")
    assert (f.rule, f.line, f.col) == ("verify", 1, 1)
    assert f.message == "shard.grid @grid0: rank of grid is expected to be a positive integer"


# llvm-project mlir/test/Dialect/Shard/ops.mlir: its grids, and the shardings of grid_shard_op_fully_replicated,
# grid_shard_op_2nd_dim, grid_shard_op_1st_and_3rd_dim, grid_shard_op_two_users, grid_shard_halo_sizes and
# grid_shard_dims_sizes, with a FileCheck pattern that holds no list (never a value)
OPS = """\
shard.grid @grid0(shape = 2x2x4)
shard.grid @grid1(shape = 4x?)
shard.grid @grid3(shape = ?x?)
shard.grid @grid4(shape = 3)
func.func @ops(%arg0 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %c3 = arith.constant 3 : i64
  // CHECK-NEXT: %[[S:.*]] = shard.sharding @grid0 split_axes = {{\\[\\[}}]] : !shard.sharding
  %s = shard.sharding @grid0 split_axes = [[]] : !shard.sharding
  %s1 = shard.sharding @grid1 split_axes = [[], [0]] : !shard.sharding
  %s2 = shard.sharding @grid3 split_axes = [[0], [], [1]] : !shard.sharding
  %s3 = shard.sharding @grid0 split_axes = [[2]] : !shard.sharding
  %1 = shard.shard %arg0 to %s3 annotate_for_users : tensor<4x8x16xf32>
  %sharding1 = shard.sharding @grid4 split_axes = [[0]] halo_sizes = [1, 4] : !shard.sharding
  %sharding2 = shard.sharding @grid4 split_axes = [[0]] halo_sizes = [4, %c3] : !shard.sharding
  %sharding3 = shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 1, 4, 6] : !shard.sharding
  %sharding4 = shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 2, %c3, 5] : !shard.sharding
  return %1 : tensor<4x8x16xf32>
}
"""


def test_valid_ops_pass_and_are_read_whole() -> None:
    assert check_text(OPS) == []
    sites = [s for s in scan_text(OPS) if s.kind in (SiteKind.SHARD_GRID, SiteKind.SHARD_SHARDING)]
    assert [s.text for s in sites if s.kind is SiteKind.SHARD_GRID] == [
        ln for ln in OPS.splitlines() if ln.startswith("shard.grid")
    ]
    shardings = [s for s in sites if s.kind is SiteKind.SHARD_SHARDING]
    assert len(shardings) == 8  # not the CHECK line's pattern
    assert shardings[-1].text == "shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 2, %c3, 5]"
    assert {s.name for s in shardings} == {"@grid0", "@grid1", "@grid3", "@grid4"}
    assert all(isinstance(s.value, ShardSharding) and s.error is None for s in shardings)


def test_grids_are_meshes_to_the_mesh_rules() -> None:
    """--mesh and --allowed-meshes hold a grid by its shape (its axes are positional: no names to differ)."""
    text = "shard.grid @g(shape = 2x4)\n%s = shard.sharding @g split_axes = [[0], [1]] : !shard.sharding\n"
    assert check_text(text, mesh="batch=2,model=4") == []
    (f,) = check_text(text, mesh="a=4,b=2")
    assert (f.rule, f.line, f.message) == (
        "mesh-mismatch", 1, 'grid @g(shape = 2x4) differs from --mesh <["a"=4, "b"=2]>: 2x4 instead of 4x2'
    )
    assert [f.rule for f in check_text(text, allowed_meshes=["4x2"])] == ["mesh-not-allowed"]
    assert check_text(text, allowed_meshes=["2x4"]) == []
    # a dynamic grid is no mesh: nothing to compare, nothing invented
    assert check_text("shard.grid @d(shape = ?x4)\n", mesh="a=4,b=2") == []
    # grids of several sizes share a module (ops.mlir's do); each is held to num_partitions
    grids = "module attributes {mhlo.num_partitions = 8 : i32} {\n"
    grids += "shard.grid @g(shape = 2x2)\nshard.grid @h(shape = 8)\n}\n"
    (f,) = check_text(grids)
    assert (f.rule, f.line, f.message) == (
        "device-count-mismatch", 2, "grid @g(shape = 2x2) has 4 devices but num_partitions is 8"
    )


def test_a_cut_sharding_is_a_syntax_error() -> None:
    (f,) = check_text("shard.grid @g(shape = 2)\n%s = shard.sharding @g split_axes = [[0]\n")
    assert (f.rule, f.line, f.col) == ("syntax", 2, 6)


def test_a_generated_dump_converted_to_the_shard_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    """The shard dialect shardconv's own ``convert --to shard`` writes for a Shardy sharding checks clean;
    the same sharding on an axis its grid lacks is the out-of-bounds error."""
    with pytest.raises(SystemExit):
        main(["convert", '#sdy.sharding<@mesh, [{"model"}, {}]>', "--mesh", "batch=2,model=4", "--to", "shard"])
    sharding = capsys.readouterr().out.strip()
    assert sharding == "shard.sharding @mesh split_axes = [[1]] : !shard.sharding"
    dump = f"shard.grid @mesh(shape = 2x4)\nfunc.func @f() {{\n  %s = {sharding}\n  return\n}}\n"
    assert check_text(dump, mesh="batch=2,model=4") == []
    (f,) = check_text(dump.replace("2x4", "8"))
    assert f.message.endswith('index 1 is out of bounds. The referenced grid "mesh" is of rank 1.')


SHARD_TEXTS = [
    OPS.encode(),
    LIT_FILE.encode(),
    b'shard.grid @"q\\"g"(shape = 2)\n%s = shard.sharding @"q\\"g" split_axes = [[0]]\n',
    b"shard.grid @g(shape = 2x\n%s = shard.sharding @g split_axes = [[0]] halo_sizes = [1\n",
    b"%a: !shard.sharding, shard.sharding @g split_axes= [[0]]sharded_dims_offsets=[0, 1, 2]x\n",
    b"shard.sharding @g\tsplit_axes =\t[[0]] halo_sizes [1] :\n shard.grid@g(shape=1)\n",
]


@pytest.mark.parametrize("data", SHARD_TEXTS)
def test_native_scan_reads_the_dialect_as_the_reference(data: bytes) -> None:
    assert differences(data) == []
    assert differences(data, Options(chunk=7, max_line=64, overlap=16)) == []


def test_explain_and_trace_read_a_shard_dump_without_failing(tmp_path: Path) -> None:
    """They follow Shardy and HLO values: a shard dialect dump gives them none, which explain says (exit 2)
    and trace counts as no change (docs/explain.md, docs/trace.md)."""
    dump = tmp_path / "shard.mlir"
    dump.write_text("module {\n" + OPS.replace("func.func @ops", "func.func @main") + "}\n")
    r = run("explain", str(dump))
    assert r.code == 2 and "no sharded value matches a result of the entry function" in r.err, r.err
    r = run("trace", str(dump), str(dump))
    assert r.code == 0 and "0 placement changes" in r.out, r.err


def _as_shard_dialect(sdy_dump: str) -> tuple[str, int]:
    """The shard dialect of a Shardy dump: its mesh as a grid, each sharding as the ``shard.sharding`` op
    ``convert --to shard`` writes (``sdy_to_shard``), one per line; and how many there are."""
    from shardconv.convert.shard_dialect import mesh_grid, sdy_to_shard
    from shardconv.core.model import Mesh, TensorSharding, TensorShardingPerValue

    sites = list(scan_text(sdy_dump))
    mesh = next(s.value for s in sites if s.kind is SiteKind.SDY_MESH and isinstance(s.value, Mesh))
    assert isinstance(mesh, Mesh)
    ops = []
    for s in sites:
        values = s.value.shardings if isinstance(s.value, TensorShardingPerValue) else (s.value,)
        for v in values:
            if isinstance(v, TensorSharding):
                ops.append(f"  %s{len(ops)} = {sdy_to_shard(v, mesh)}")
    grid = mesh_grid(mesh, "mesh")
    return f"module {{\n{grid}\nfunc.func @main() {{\n" + "\n".join(ops) + "\n  return\n}\n}\n", len(ops)


def test_a_jax_dump_converted_to_the_shard_dialect_checks_clean() -> None:
    """tests/data/dumps/jax_lowered.mlir (jax 0.10.2's lowering on batch=2, model=4; generate.py) with every
    sharding converted: clean on its mesh, every op read, and an axis moved out of the grid is found at its line."""
    sdy = (Path(__file__).resolve().parents[1] / "data" / "dumps" / "jax_lowered.mlir").read_text()
    dump, count = _as_shard_dialect(sdy)
    assert count >= 4
    assert check_text(dump, mesh="batch=2,model=4") == []
    assert sum(s.kind is SiteKind.SHARD_SHARDING for s in scan_text(dump)) == count
    lines = dump.splitlines()
    at = next(i for i, ln in enumerate(lines) if "[[1]]" in ln or "[[], [1]]" in ln)
    lines[at] = lines[at].replace("1]]", "2]]")
    (f,) = check_text("\n".join(lines) + "\n", mesh="batch=2,model=4")
    assert (f.rule, f.line) == ("verify", at + 1)
    assert f.message.endswith('0-based grid axis index 2 is out of bounds. The referenced grid "mesh" is of rank 2.')


def test_the_caret_is_under_the_axis_or_grid_an_error_is_about() -> None:
    text = (
        "shard.grid @g(shape = 2x4)\n"
        "%a = shard.sharding @g split_axes = [[0], [1, 0]] : !shard.sharding\n"
        "%b = shard.sharding @g split_axes = [[1], [-1]] : !shard.sharding\n"
        "%c = shard.sharding @g split_axes = [[1], [3]] : !shard.sharding\n"
        "%d = shard.sharding @h split_axes = [[0]] : !shard.sharding\n"
    )
    lines = text.splitlines()
    cols = {f.line: f.col for f in check_text(text)}
    assert cols == {
        2: lines[1].rindex("0]]") + 1,  # the repeated one
        3: lines[2].index("-1") + 1,
        4: lines[3].index("3") + 1,
        5: lines[4].index("@h") + 1,
    }
