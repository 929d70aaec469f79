"""Valid seed strings for every grammar shardconv reads, grouped by parser entry point, plus the dump
files in tests/data/dumps. The mutation fuzzer starts from these; the hypothesis harness adds the
generated ones from hlo_strategies / sdy_strategies."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
DUMPS = TESTS / "data" / "dumps"
EXAMPLES = TESTS.parent / "examples"

HLO = [
    "{replicated}", "{manual}", "{unknown}", "{unreduced}", "{maximal device=3}",
    "{devices=[2,4]0,1,2,3,4,5,6,7}",
    "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    "{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}",
    "{devices=[6,35]<=[7,10,3]T(2,1,0)}",
    "{{replicated}, {devices=[2]0,1}}", "{}",
    "{{replicated}, {maximal device=3}, {devices=[2]0,1 shard_as 1}, {manual}, {unknown}, /*index=5*/{replicated}}",
    "{devices=[2]<=[2] shard_as 1}", "{devices=[2]<=[2] shard_like 3}",
    '{devices=[4,1]<=[4] metadata={op_name="a" source_file="x.py" source_line=3}}',
    "{devices=[4,1]<=[4] metadata={{op_name='a\\tb'}, {op_type=\"dot\" source_column=7}}}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}",
    "{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}]}",
    "{mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0), [{'a'}, {?}], unreduced={'b'}}",
    "{mesh['x'=8,'y'=4], device_ids=([8,4]T(1,0)), [{'y', 'x':(1)2}, {}]}",
    "{mesh['a'=4], manual}", "{mesh['a'=2], replicated}",
    "{maximal_mesh[device_id=5]}", '{maximal_mesh[device_id=5], metadata={op_name="m"}}',
]

SDY = [
    '#sdy.sharding<@mesh, [{"x", ?}, {}p1], replicated={"y"}, unreduced={"z"}>',
    '#sdy.sharding<mesh<["a"=2]>, [{"a"}]>',
    '<@mesh, [{"x", ?}, {?}]>',
    '#sdy.sharding<@mesh, [{"x":(2)2, "y"}, {}]>',
    '#sdy.sharding<@"m e\\22sh", [{"a\\0A"} p3, {?}p0]>',
    '#sdy.sharding<@maximal_mesh_3, []>',
    '#sdy.sharding<mesh<["a"=2, "b"=2], device_ids=[3, 1, 2, 0]>, [{"b"}, {"a"}]>',
]

PER_VALUE = [
    '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>',
    "#sdy.sharding_per_value<[]>",
    '#sdy.sharding_per_value<[#sdy.sharding<mesh<["a"=4]>, [{"a":(1)2}]>]>',
]

MESH = [
    'sdy.mesh @mesh = <["batch"=2, "model"=4]>', '#sdy.mesh<["a"=2], device_ids=[1, 0]>',
    "sdy.mesh @empty = <[]>", "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>",
    '<["x"=2, "y"=4, "z"=4]>', "batch=2,model=4", 'batch=2,"model"=4;device_ids=[7,6,5,4,3,2,1,0]',
    '<["a"=0x2, // axis\n "b"=02]>',
]

MANUAL_AXES = ['manual_axes={"a", "b"}', '{"a"}', "{}", '#sdy<manual_axes{"x", "y"}>']

SPEC = [
    "P(None, ('d','b'), 'c')", "PartitionSpec('batch', None)", "(None, 'model')",
    "(('batch','model'), None)", "P()", 'P("a",)', "jax.sharding.PartitionSpec(('x',), 'y')",
]

# Entry point name -> seeds. Parsers, printers and round trips are looked up by these names in targets.py.
STRINGS: dict[str, list[str]] = {
    "hlo": HLO, "sdy": SDY, "per_value": PER_VALUE, "mesh": MESH, "manual_axes": MANUAL_AXES, "spec": SPEC,
}


def dump_files() -> list[bytes]:
    """Real MLIR / HLO dumps (JAX-generated, lit tests, the seed scenario, binary protos)."""
    files = sorted(p for p in DUMPS.iterdir() if p.suffix in (".mlir", ".hlo", ".txt"))
    files += sorted(EXAMPLES.glob("*.mlir"))
    return [p.read_bytes() for p in files]


def dump_snippets() -> list[bytes]:
    """Every line holding a sharding keyword, from every dump: small seeds for fast scanner fuzzing."""
    from support.reference_scan.lines import KEYWORDS

    out: list[bytes] = []
    for data in dump_files():
        lines = data.splitlines(keepends=True)
        head = b"module {\n" if not data.lstrip().startswith((b"module", b"HloModule")) else lines[0]
        out += [head + ln for ln in lines if any(k in ln for k in KEYWORDS)]
    return out
