"""The native core against the reference on input made to break it: real dumps mutated (byte edits,
line shuffles, truncations) and hypothesis-generated soups of fragments (keywords, brackets, quotes,
escapes, newlines, CR, long lines) read with small chunk / max_line / overlap."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.compare import Options, differences, without_new_forms
from support.explore import examples

from shardconv.scan import native

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted(p for d in (ROOT / "tests" / "data" / "dumps", ROOT / "examples") for p in d.glob("*")
               if p.is_file() and p.suffix != ".py")  # the dumps, not the scripts that write them
# Mutations mix lines at random: a native-only site (tests/scan/test_new_forms.py) alone in a module
# would number modules differently from the reference, which never sees it, so those go first.
CORPUS = [without_new_forms(p.read_bytes()) for p in DUMPS]

FRAGMENTS = [
    b"sharding={", b"sharding={replicated}", b"sharding={devices=[2,1]0,1}", b", sharding=", b"sharding=<",
    b"out_sharding=<", b"in_shardings=[", b"out_shardings=[", b"manual_axes={", b'manual_axes={"x"}',
    b"num_partitions=", b"num_partitions=8", b"mhlo.num_partitions = 4", b"mhlo.num_partitions\t=\t4",
    b"mhlo.sharding = \"", b'mhlo.sharding = "{replicated}"', b'mhlo.sharding = "\\22{maximal device=1}\\22"',
    b"mhlo.spmd_output_sharding = \"", b'xla.sdy.sharding="', b'xla.sdy.sharding = "', b'xla.sdy.meshes={',
    b'xla.sdy.meshes = "{mesh = #sdy.mesh<[\\22x\\22=2]>}"', b'"{mesh = #sdy.mesh<[\\\\\\22x\\\\\\22=2]>}"',
    b'xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\\"x\\"}]>]>"',
    b"#sdy.sharding<", b"#sdy.sharding<@mesh, [{\"x\"}, {}]>", b"#sdy.sharding_per_value<[", b"#sdy.mesh<",
    b"#sdy.mesh<[\"x\"=2]>", b"#sdy<manual_axes{\"x\"}>", b"sdy.mesh @mesh = <[\"x\"=2]>", b"sdy.mesh @\"q\\\"m\" = <",
    b'"sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "gm"}> : () -> ()', b'"sdy.mesh"(', b'sym_name = "',
    b', sym_name = "mesh"}>',
    b"sdy.sharding_constraint %0 <@mesh, [{}]>", b"sdy.reshard %arg0 <@m, [{\"y\"}]>", b"sdy.sharding = ",
    b"stablehlo.mesh = {axes = [{name = \"x\", size = 2}]}", b"stablehlo.mesh={", b"unspecified_dims=[0,1]",
    b"unspecified_dims=[", b"replica_group_mesh_axes<mesh = @mesh, axes = [0]>", b"replica_group_mesh_axes<mesh=@",
    b"expected-error", b"expected-error@+1", b"expected-error@-2", b"expected-error@above", b"expected-error@below",
    b"// expected-error {{bad}}", b"HloModule m", b"HloModule ", b"module", b"module @m attributes {", b"// -----",
    b"//-----", b"ENTRY %main.1 (p: f32[8]) -> f32[8] {", b"ROOT ", b"  %x = f32[8,16]{1,0} parameter(0)",
    b"%y = (f32[8], s32[]) tuple(%a, %b)", b"custom_call_target=\"Sharding\"", b"custom-call(%x)",
    b"func.func @main(", b"func.func public @f(", b"%arg0: tensor<8x16xf32>", b" {sdy.sharding = ", b"tensor<8x?xf32>",
    b") -> (", b") -> tensor<4xf32>", b" : tensor<8xf32>", b" : (tensor<8xf32>) -> tensor<8xf32>", b"} : ",
    b"  } : (tensor<8xf32>) -> tensor<8xf32>", b"sdy.manual_computation(%0)", b" loc(#loc1)", b" loc(\"a\"(#l))",
    b"%0 = ", b"%r:2 = ", b"%a, %b = ", b"stablehlo.custom_call @Sharding(%0)", b"\"stablehlo.add\"(%a)",
    b"shardconv: ignore[rule-a]", b"// shardconv: ignore[x, y]", b"/* shardconv:ignore[z] */", b"shardconv:",
    b"{", b"}", b"[", b"]", b"<", b">", b"(", b")", b"<=", b"->", b'"', b"\\", b"\\22", b"\\\\", b"\\n", b"\\x41",
    b"\\101", b"=", b" = ", b", ", b"\n", b"\r\n", b"\r", b" ", b"\t", b"@mesh", b"%x", b"x", b"\xff", b"\xc2\xa0",
    b"\x00", b"key =\n", b"xla.sdy.meshes =\n  ", b"mhlo.sharding =\n\"{replicated}\"",
    b"shard.grid @g(shape = 2x4)", b"shard.grid @g(", b"shard.grid @\"q\\\"g\"(shape = ?x2)", b"shard.",
    b"%s = shard.sharding @g split_axes = [[0], []] : !shard.sharding", b"shard.sharding @g split_axes = [",
    b" halo_sizes = [1, %c3]", b" sharded_dims_offsets = [0, 2", b"!shard.sharding", b"shard.shard %0 to %s",
]
# keywords whose value's opener is damaged (flipped, deleted, a letter): a site the parser judges, the same in
# both scanners (a keyword at the line's end, or in an SSA name, is none)
DAMAGED_OPENERS = [
    b"sharding= z{replicated}", b"sharding=\t;", b"mhlo.sharding = z{replicated}\"", b"mhlo.sharding = {",
    b"mhlo.spmd_output_sharding = b", b"sdy.sharding = #sdy.sha}ding<@mesh, []>", b"sdy.sharding = #sdy.x}",
    b"sdy.mesh @mesh = z[\"x\"=2]>", b"sdy.mesh @mesh = ", b"sdy.mesh @mesh = #alias", b"stablehlo.mesh = zaxes",
    b"stablehlo.mesh = #x", b"mhlo.sharding =\n", b"sdy.sharding_constraint %0 @mesh, [{}]>", b"sdy.reshard %arg0 |@m",
    b"sdy.reshard %a #alias", b"out_sharding=|@m, [{}]>", b"out_sharding=", b"sdy.sharding = #sd}.sharding<@mesh, []>",
    b"sdy.sharding = #s y.sharding<", b"sdy.sharding = #a}) -> ", b"sdy.reshard %a #@m, [{}]>", b"sdy.reshard %a #a : ",
    b"sdy.mesh @mesh = #m}[", b"stablehlo.mesh = #x, ",
]
# an op's sharding rule, which the core passes over whole, and its pieces (soups put keywords in it)
RULE_FRAGMENTS = [
    b"{sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>}",
    b"sdy.sharding_rule = #sdy.op_sharding_rule<", b"sdy.sharding_rule", b"#sdy.op_sharding_rule<", b"sdy.op_",
]

fragment = st.sampled_from(FRAGMENTS + DAMAGED_OPENERS + RULE_FRAGMENTS)
long_run = st.builds(lambda b, n: b * n, st.sampled_from([b"x", b"{", b"a b ", b"sharding={}", b"\\22"]),
                     st.integers(1, 700))
soup = st.lists(st.one_of(fragment, fragment, fragment, long_run, st.binary(max_size=8)), max_size=60).map(b"".join)
options = st.sampled_from(
    [Options(), Options(chunk=64, max_line=256, overlap=100), Options(chunk=1, max_line=100, overlap=50),
     Options(chunk=1000, max_line=400, overlap=399), Options(chunk=7, max_line=2000, overlap=1)]
)


LEAVES = st.sampled_from(
    [b"x", b'"x"', b'\\22x\\22', b"@mesh", b"2", b"?", b"replicated", b"devices=[2,1]0,1", b", ", b"=", b"->",
     b"<=", b"\\", b'\\"', b"\n", b" ", b"tensor<8xf32>", b"f32[8]", b"{}", b"#sdy.mesh<[]>", b"mesh = "]
)


def _wrap(pair: tuple[bytes, list[bytes]]) -> bytes:
    brackets, inner = pair
    body = b"".join(inner)
    return brackets[:1] + body + brackets[1:]


VALUE = st.recursive(
    LEAVES, lambda kids: st.tuples(st.sampled_from([b"{}", b"[]", b"<>", b"()", b'""', b"{", b"<", b'"']),
                                   st.lists(kids, max_size=4)).map(_wrap), max_leaves=12
)
KEYS = st.sampled_from(
    [b"sharding=", b"sharding=<", b"out_sharding=", b"in_shardings=", b"out_shardings=", b"manual_axes=",
     b"mhlo.sharding = ", b"mhlo.spmd_output_sharding = ", b"xla.sdy.sharding=", b"xla.sdy.meshes=",
     b"xla.sdy.sharding = ", b"xla.sdy.manual_axes = ", b"sdy.sharding = ", b"sdy.sharding = #sdy.sharding",
     b"sdy.sharding_per_value = #sdy.sharding_per_value", b"sdy.mesh = #sdy.mesh", b"stablehlo.mesh = ",
     b"backend_config=\"unspecified_dims=", b"num_partitions=", b"mhlo.num_partitions = ", b"sdy.mesh @m = ",
     b"sdy.sharding_constraint %0 ", b"sdy.reshard %1 ", b"replica_group_mesh_axes<mesh = @", b"x = ", b"key =\n"]
)
HEADS = st.sampled_from(
    [b"", b"  ", b"  %x = ", b"  ROOT %r.1 = ", b"  %0 = ", b"    %1:2 = ", b"  %a, %b = ", b"  %v, %r:2, %i = ", b"HloModule m, ",
     b"module @m attributes {", b"  func.func @main(%arg0: tensor<8x16xf32> {", b"  func.func @f(%arg0: ",
     b"ENTRY %main.3 (p.1: f32[8]) -> f32[8] {", b"// expected-error@+1 {{", b"  } : ", b"// -----", b"  }"]
)
TYPES = st.sampled_from([b"", b"f32[8,16]{1,0} ", b"(f32[8], s32[]) ", b"token[] ", b"f32[] "])
OPS = st.sampled_from(
    [b"", b"parameter(0), ", b"custom-call(%a), custom_call_target=\"Sharding\", ", b"stablehlo.add %a, %b {",
     b"\"stablehlo.custom_call\"(%a) {call_target_name = \"Sharding\", ", b"stablehlo.custom_call @xla.sdy.X(%0) {",
     b"sdy.manual_computation(%0) ", b"stablehlo.while(%iterArg = %a, %iterArg_0 = %b) "]
)
TAILS = st.sampled_from(
    [b"", b"}", b"}>}", b" : tensor<8x16xf32>", b" : (tensor<8xf32>) -> tensor<4x?xf32>", b") -> tensor<8xf32> {",
     b" {", b" loc(#loc3)", b" : tensor<8xf32> loc(\"x\"(#l1))", b"\r"]
)
LINE = st.tuples(HEADS, TYPES, OPS, st.lists(st.tuples(KEYS, VALUE).map(b"".join), max_size=3).map(b", ".join), TAILS)
LINES = st.lists(LINE.map(b"".join), min_size=1, max_size=25).map(b"\n".join)


@settings(max_examples=examples(300))
@given(LINES, options)
def test_line_soup(data: bytes, opts: Options) -> None:
    assert _checked(data, opts) == []


def _checked(data: bytes, opts: Options) -> list[str]:
    try:
        return differences(data, opts)
    except UnicodeDecodeError:  # the reference decodes some names strictly and fails on non-UTF-8 ones
        return []


@settings(max_examples=examples(200))
@given(soup, options)
def test_fragment_soup(data: bytes, opts: Options) -> None:
    head = b"module {\n" if len(data) % 2 else b"HloModule m\n"
    assert _checked(head + data, opts) == []


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    how = rng.randrange(4)
    if how == 0:  # byte edits
        for _ in range(rng.randint(1, 20)):
            if not b:
                break
            i = rng.randrange(len(b))
            op = rng.randrange(3)
            if op == 0:
                b[i] = rng.choice(b'{}[]<>()"\\=,:@% \n\rx0')
            elif op == 1:
                del b[i]
            else:
                b[i:i] = rng.choice(FRAGMENTS)
        return bytes(b)
    lines = data.split(b"\n")
    if how == 1:  # line shuffles
        rng.shuffle(lines)
        return b"\n".join(lines)
    if how == 2:  # truncation
        return data[: rng.randrange(len(data) + 1)]
    other = rng.choice(CORPUS).split(b"\n")  # splice lines of two dumps
    cut = rng.randrange(len(lines) + 1)
    return b"\n".join(lines[:cut] + other[rng.randrange(len(other) + 1) :])


RULE = b"sdy.sharding_rule = #sdy.op_sharding_rule<"


@pytest.mark.parametrize("head", [b"module {\n", b"HloModule m\n"])
def test_a_keyword_right_after_a_sharding_rule_or_inside_it_is_found(head: bytes) -> None:
    # the core passes over a rule whole; each fragment after the rule, after any part of it, and in
    # place of its end is read as the reference reads it
    cuts = sorted({0, 1, 4, 5, 12, 17, 20, 21, 25, len(RULE) - 1, len(RULE)})
    for frag in FRAGMENTS + DAMAGED_OPENERS:
        text = b"".join(b"  %0 = stablehlo.add %a {" + RULE[:n] + frag + b"}\n" for n in cuts)
        assert _checked(head + text, Options()) == [], frag


@pytest.mark.parametrize("opts", [Options(), Options(chunk=64, max_line=256, overlap=100), Options(chunk=997)])
def test_signatures_and_loc_tails_found_buffer_wide_read_as_each_line_alone(opts: Options) -> None:
    # the core finds `func.func` and `loc(` once per buffer, then reads each line by what it holds
    rng = random.Random(7)
    lines = [b"module @m {", b'  sdy.mesh @mesh = <["x"=2]>']
    for i in range(120):
        loc = rng.choice([b"", b" loc(#loc3)", b' loc("a : tensor<2xf32>"(#l1))', b" loc(", b"loc(#x)"])
        lines.append(rng.choice([
            b"  func.func @f%d(%%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}%s) -> "
            b"(tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {" % (i, loc),
            b"    %%%d = stablehlo.add %%arg0, %%arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"x\"}]>]>} : "
            b"tensor<8xf32>%s" % (i, loc),
            b"    %%%d = sdy.sharding_constraint %%arg0 <@mesh, [{}]> : tensor<8xf32>%s" % (i, loc),
            b"    return %%%d : tensor<8xf32>%s" % (i, loc), b"  }" + loc, b"    %%%d = stablehlo.tanh %%arg0%s" % (i, loc),
        ]))
    assert _checked(b"\n".join(lines) + b"\n}\n", opts) == []


@pytest.mark.parametrize("seed", range(40))
def test_mutated_dumps(seed: int) -> None:
    rng = random.Random(seed)
    for data in CORPUS:
        mutated = _mutate(data, rng)
        opts = rng.choice([Options(), Options(chunk=512, max_line=1024, overlap=300)])
        assert _checked(mutated, opts) == [], (seed, mutated[:2000])


@pytest.mark.parametrize("seed", range(6))
def test_big_soups_read_from_a_file(seed: int) -> None:
    """Past the sniffed head, a file is read chunk by chunk into the engine's buffer: suppression markers
    get their lines there, in lines cut by reads and in long lines read in windows."""
    rng = random.Random(seed)
    long_lines = [b"x" * 5000, b"w" * 70_000, b"\n", b"// shardconv: ignore[a]", b"shardconv: ignore[b, c]"]
    for _ in range(8):
        data = b"".join(rng.choice(FRAGMENTS + long_lines) for _ in range(rng.randrange(300, 1500)))
        opts = rng.choice([Options(chunk=997, max_line=4000, overlap=50), Options(chunk=64, max_line=256, overlap=100),
                           Options(chunk=7000, max_line=12000, overlap=1), Options()])
        assert len(data) > 65536
        # (the reference's windows lose values the core's read, so the sites are held to the reference
        # with the reads of `opts` and one window a line; tests/scan/test_windows.py holds the core's
        # windows to its whole-line scan at every cut; here, the suppressions they read)
        assert differences(data, Options(chunk=opts.chunk), via="path") == [], (seed, opts)
        try:
            windows = native.ScanOptions(chunk=opts.chunk, max_line=opts.max_line, overlap=opts.overlap)
            windowed = native.scan_bytes(data, windows)
        except OSError as e:
            assert "scan window" in str(e), e
            continue
        chunked = native.scan_bytes(data, native.ScanOptions(chunk=opts.chunk))
        assert windowed.suppressions == chunked.suppressions, (seed, opts)

