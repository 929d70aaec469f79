"""The bulk path (plain sdy op lines cut out of whole regions, long signatures' repeats folded) changes
no finding and no site: it is compared with the line-by-line path and with full extraction (no memo)
on real JAX lowerings and on generated documents that mix every line shape it must leave alone."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.check.bulk import cut_op_lines
from shardconv.check.context import CheckOptions
from shardconv.check.dedup import signature
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import check_stream
from shardconv.check import lines as lines_stage
from shardconv.check.lines import ReadOptions, sites_of_bytes
from shardconv.formats.detect import parse_mesh_option

MODES = {
    "bulk": ReadOptions(),
    "line by line": ReadOptions(bulk=False),
    "no memo": ReadOptions(repeats=False),
}
_NAME = re.compile(r"(%[A-Za-z_][\w.\-]*)")


def findings(data: bytes, opts: CheckOptions, read: ReadOptions) -> list[tuple[object, ...]]:
    r = check_stream(io.BytesIO(data), "f.mlir", opts, read)
    assert isinstance(r, FileReport)
    return [(f.rule, f.line, f.col, f.end_line, f.end_col, f.message, f.count, f.source, r.values, r.distinct)
            for f in r.findings]


def assert_same(data: bytes, opts: CheckOptions) -> list[tuple[object, ...]]:
    """Every mode gives the same findings, and the same sites (each bulk site is one full extraction
    gives, and every signature occurs as often)."""
    got = {name: findings(data, opts, read) for name, read in MODES.items()}
    assert got["bulk"] == got["line by line"] == got["no memo"]
    sites = {name: sites_of_bytes(data, "f.mlir", read)[1] for name, read in MODES.items()}
    assert set(sites["bulk"]) <= set(sites["no memo"])
    assert Counter(map(signature, sites["bulk"])) == Counter(map(signature, sites["no memo"]))
    return got["bulk"]


def assert_same_in_chunks(data: bytes, opts: CheckOptions, chunks: tuple[int, ...]) -> list[tuple[object, ...]]:
    """``assert_same``, and every mode gives those findings again read in chunks of each size (regions
    end mid-module: a module's counts span several)."""
    found = assert_same(data, opts)
    for chunk in chunks:
        for read in MODES.values():
            assert findings(data, opts, ReadOptions(repeats=read.repeats, bulk=read.bulk, chunk=chunk)) == found
    return found


def copies(module: str, n: int, edits: list[tuple[str, str]]) -> bytes:
    """``module`` ``n`` times with unique SSA names; copy ``i`` gets edit ``i % len(edits)`` (if any)."""
    out = []
    for i in range(n):
        text = _NAME.sub(rf"\g<1>_c{i}", module)
        if edits:
            old, new = edits[i % len(edits)]
            text = text.replace(old, new, 1)
        out.append(text)
    return "".join(out).encode()


def test_bulk_cuts_the_constraint_lines_of_a_real_lowering(jax_dumps: Path) -> None:
    data = (jax_dumps / "lowered.mlir").read_bytes()
    cut = cut_op_lines(data[: data.rindex(b"\n") + 1])
    assert cut is not None and len(cut.keys) == data.count(b"= sdy.sharding_constraint ")
    assert cut.rest.count(b"\n") == data.count(b"\n") and b"sdy.sharding_constraint" not in cut.rest


def test_real_lowering_repeated_with_errors_small_regions(jax_dumps: Path) -> None:
    module = (jax_dumps / "lowered.mlir").read_text()
    edits = [
        ("", ""),
        ('<@mesh, [{"batch"}, {}]> : tensor<16x32xf32>', '<@mesh, [{"batch"}]> : tensor<16x32xf32>'),  # rank
        ('<@mesh, [{"batch"}, {}]> : tensor<16x32xf32>', '<@mesh, [{"bach"}, {}]> : tensor<16x32xf32>'),  # axis
        ('sdy.mesh @mesh = <["batch"=2, "model"=4]>', 'sdy.mesh @mesh = <["batch"=4, "model"=2]>'),  # mesh
    ]
    data = copies(module, 12, edits)
    opts = CheckOptions(mesh=parse_mesh_option("batch=2,model=4"))
    found = assert_same_in_chunks(data, opts, (1 << 10, 3 << 10))
    assert {r[0] for r in found} >= {"rank-mismatch", "verify", "mesh-mismatch"}


def test_long_signature_repeats_fold_into_counts() -> None:
    arg = '%arg{i}: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"{axis}"}}, {{}}]>}}'
    args = ", ".join(arg.format(i=i, axis="ab"[i % 2]) for i in range(80))
    bad = '%arg80: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}, {}]>}'
    text = (
        'module @m {\n  sdy.mesh @mesh = <["a"=2, "b"=4]>\n'
        f"  func.func public @main({args}, {bad}) -> tensor<8x8xf32> {{\n    return %arg0 : tensor<8x8xf32>\n  }}\n}}\n"
    )
    found = assert_same(text.encode(), CheckOptions())
    assert [(r[0], r[1]) for r in found] == [("verify", 3)]


OP = "    %{n} = sdy.sharding_constraint %{m} <@mesh, [{a}, {b}]> : tensor<{t}>"
_AXES = ["{}", '{"x"}', '{"y"}', '{"z"}', '{"x", "y"}']
_TYPES = ["8x8xf32", "8xf32", "8x8x8xf32"]
_SHAPES = ["op"] * 8 + ["loc", "blank", "crlf", "module", "mesh", "split", "open", "expected", "manual", "plain"]
_MESHES = ['  sdy.mesh @mesh = <["x"=2, "y"=4]>', '  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>']


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """MLIR modules of op lines (plain, bad, with loc, after an open ``key =`` line, with trailing
    blanks or CRLF), meshes, module splits, expected-error markers and manual computations."""
    lines: list[str] = []
    for n in range(1, draw(st.integers(1, 60)) + 1):
        axes, typ = draw(st.tuples(st.sampled_from(_AXES), st.sampled_from(_AXES))), draw(st.sampled_from(_TYPES))
        op = OP.format(n=n, m=n - 1, a=axes[0], b=axes[1], t=typ)
        shape = draw(st.sampled_from(_SHAPES))
        if shape == "op":
            lines.append(op)
        elif shape == "loc":
            lines.append(op + " loc(#loc3)")
        elif shape == "blank":
            lines.append(op + "  ")
        elif shape == "crlf":
            lines.append(op + "\r")
        elif shape == "module":
            lines.append("module @m {")
        elif shape == "mesh":
            lines.append(draw(st.sampled_from(_MESHES)))
        elif shape == "split":
            lines.append("// -----")
        elif shape == "open":
            lines += ["  xla.sdy.meshes =", op]
        elif shape == "expected":
            lines += ["    // expected-error@+1 {{unknown axis}}", op]
        elif shape == "manual":
            lines += [
                f'    %{n}:2 = sdy.manual_computation(%{n - 1}) in_shardings=[<@mesh, [{{"x"}}, {{}}]>] '
                f'out_shardings=[<@mesh, [{{"x"}}, {{}}]>] manual_axes={{"x"}} (%a{n}: tensor<4x8xf32>) {{',
                op,
                "      sdy.return %a : tensor<4x8xf32>",
                "    } : (tensor<8x8xf32>) -> tensor<8x8xf32>",
            ]
        else:
            lines.append(f"    %{n} = stablehlo.tanh %{n - 1} : tensor<8x8xf32>")
    return ("module @m {\n" + "\n".join(lines) + "\n}\n").encode()


@settings(max_examples=150, deadline=None)
@given(documents(), st.sampled_from([1 << 9, 1 << 12, 8 << 20]))
def test_generated_documents_give_the_same_findings_and_sites(data: bytes, chunk: int) -> None:
    assert_same_in_chunks(data, CheckOptions(mesh=parse_mesh_option("x=2,y=4")), (chunk,))


@settings(max_examples=60, deadline=None)
@given(documents())
def test_pieces_of_a_region_give_the_same_findings(data: bytes) -> None:
    """A region is cut in pieces of about BULK_PIECE bytes (never between a ``key =`` line and its value)."""
    opts = CheckOptions(mesh=parse_mesh_option("x=2,y=4"))
    whole = findings(data, opts, ReadOptions())
    saved = lines_stage.BULK_PIECE
    try:
        lines_stage.BULK_PIECE = 64
        assert findings(data, opts, ReadOptions()) == whole == findings(data, opts, ReadOptions(repeats=False))
    finally:
        lines_stage.BULK_PIECE = saved


_FRAGMENTS = st.sampled_from([
    "x" * 150, " ", ", ", "sharding={replicated}", "mhlo.spmd_output_sharding = \"{replicated}\"", "num_partitions=8",
    "allow_spmd_sharding_propagation_to_output={true}", "#sdy.sharding<@mesh, [{}]>", "sdy.mesh @mesh = <[\"a\"=2]>",
    "manual_axes={\"a\"}", "in_shardings=[<@mesh, [{}]>]", "mhlo.num_partitions = 8", "xla.sdy.sharding=\"x\"",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, min_size=1, max_size=40))
def test_needle_search_on_long_lines_finds_what_the_regex_finds(parts: list[str]) -> None:
    """Far from a line's end only the starts within reach of a needle are tried; the matches are the
    ones a plain search of the whole line gives, in order."""
    from shardconv.check import keywords

    text = "".join(parts).encode()
    expected = [m.span() for m in keywords.KEYWORD.finditer(text)]
    got, pos, nexts = [], 0, [-1] * len(keywords.NEEDLES)
    while (m := keywords.search_keyword(text, pos, nexts)) is not None:
        got.append(m.span())
        pos = max(m.end(), m.start() + 1)
    assert got == expected


ARG = '%arg{i}: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"{axis}"}}, {{}}]>}}'
ODD_ARGS = [
    '%arg{i}: tensor<8x8xf32> {{mhlo.sharding = "{{devices=[4,1,2]<=[8] last_tile_dim_replicate}}", '
    'sdy.sharding = #sdy.sharding<@mesh, [{{"b"}}, {{}}]>}}',
    '%arg{i}: tensor<8x8xf32> {{jax.result_info = "x", sdy.sharding = #sdy.sharding<@mesh, [{{"c"}}, {{}}]>}}',
    "%arg{i}: tensor<8x8xf32>",
    '%arg{i}: tensor<?x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}]>}}',
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-len(ODD_ARGS), 1), min_size=2, max_size=70))
def test_signatures_with_any_arguments_give_the_same_findings(kinds: list[int]) -> None:
    """A signature is read with one findall only when every argument is a plain sdy.sharding one."""
    args = ", ".join(ARG.format(i=i, axis="ab"[k]) if k >= 0 else ODD_ARGS[k].format(i=i) for i, k in enumerate(kinds))
    text = (
        'module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["a"=2, "b"=4]>\n'
        f"  func.func public @main({args}) -> tensor<8x8xf32> {{\n    return %arg0 : tensor<8x8xf32>\n  }}\n}}\n"
    )
    assert_same(text.encode(), CheckOptions())


def test_not_expressible_is_reported_in_every_module() -> None:
    """The expressibility verdict is cached across modules; each module still gets its finding."""
    module = (
        "HloModule m{n}, num_partitions=8\n\nENTRY %e (p: f32[8,8]) -> f32[8,8] {{\n"
        "  ROOT %p = f32[8,8]{{1,0}} parameter(0), sharding={{devices=[8,1]3,1,4,0,5,2,7,6}}\n}}\n\n"
    )
    data = "".join(module.format(n=n) for n in range(3)).encode()
    found = assert_same(data, CheckOptions(mesh=parse_mesh_option("batch=2,model=4")))
    assert [r[1] for r in found if r[0] == "not-expressible"] == [4, 10, 16]


_HLO_SHARDINGS = [
    "{replicated}", "{devices=[2,4]<=[8]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[4,2]<=[8]}",
    "{devices=[8]<=[8]}", "{maximal device=0}", "{devices=[2,2]<=[4]}",
]
_HLO_TYPES = ["f32[8,8]{1,0}", "f32[8]{0}", "f32[8,8,8]{2,1,0}", "(f32[8,8]{1,0}, f32[8]{0})"]


@st.composite
def hlo_documents(draw: st.DrawFn) -> bytes:
    """HLO modules of instruction lines in the shapes the plain-line path counts and those it must
    not: tuples, metadata, a second sharding, frontend attributes, custom-calls, CRLF, module splits."""
    lines = ["HloModule m, num_partitions=8", "", "ENTRY %e (p: f32[8,8]) -> f32[8,8] {"]
    for n in range(draw(st.integers(1, 60))):
        typ, sh = draw(st.sampled_from(_HLO_TYPES)), draw(st.sampled_from(_HLO_SHARDINGS))
        if typ.startswith("("):
            sh = "{" + sh + ", " + draw(st.sampled_from(_HLO_SHARDINGS)) + "}"
        line = f"  %v.{n} = {typ} add(%a.{n}, %b.{n}), sharding={sh}"
        shape = draw(st.sampled_from(["plain"] * 6 + ["meta", "two", "sdy", "custom", "crlf", "module", "bare"]))
        if shape == "meta":
            line += f', metadata={{op_name="jit(f)/add_{n}" source_line={n}}}'
        elif shape == "two":
            line += ", sharding={replicated}"
        elif shape == "sdy":
            line += ', frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {}]>"}'
        elif shape == "custom":
            line = (f'  %c.{n} = {typ} custom-call(%a.{n}), custom_call_target="Sharding", sharding={sh}, '
                    'backend_config="unspecified_dims=[1]"')
        elif shape == "crlf":
            line += "\r"
        elif shape == "module":
            lines += ["}", "", "HloModule m2, num_partitions=8", "", "ENTRY %e2 (p: f32[8,8]) -> f32[8,8] {"]
        elif shape == "bare":
            line = f"  %w.{n} = {typ} negate(%a.{n})"
        lines.append(line)
    return ("\n".join(lines) + "\n}\n").encode()


@settings(max_examples=150, deadline=None)
@given(hlo_documents(), st.sampled_from([1 << 9, 1 << 12, 8 << 20]))
def test_generated_hlo_gives_the_same_findings_and_sites(data: bytes, chunk: int) -> None:
    """The plain-HLO-line counting (memo) against line-by-line extraction of every line."""
    assert_same_in_chunks(data, CheckOptions(mesh=parse_mesh_option("batch=2,model=4")), (chunk,))


def test_unclosed_axis_lists_cost_linear_time() -> None:
    """The bulk regexes read a list of axes as runs and quoted names, so an unclosed one fails fast."""
    import time

    axes = '{"x"}, {}, ' * 4000
    text = (
        'module @m {\n  sdy.mesh @mesh = <["x"=2, "y"=4]>\n'
        f"  func.func public @main(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{axes}>}}, "
        f"%arg1: tensor<8xf32>) -> tensor<8xf32> {{\n"
        f"    %1 = sdy.sharding_constraint %arg0 <@mesh, [{axes}> : tensor<8xf32>\n"
        "    return %arg0 : tensor<8xf32>\n  }\n}\n"
    ).encode()
    t0 = time.perf_counter()
    for read in MODES.values():
        findings(text, CheckOptions(), read)
    assert time.perf_counter() - t0 < 5
