"""The native pipeline reports what ``check`` reported on the reference scanner, finding for finding
(rule, place, message, count, the excerpt, the value counts), whatever the read size: on real JAX
modules repeated with renaming and errors injected, and on generated documents that mix every line
shape a scanner must get right."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.differential import without_new_forms
from support.reference_scan.check import reference_report
from support.reference_scan.lines import ReadOptions

from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import scan_report
from shardconv.formats.detect import parse_mesh_option
from shardconv.scan.native import ScanOptions, scan_bytes

_NAME = re.compile(r"(%[A-Za-z_][\w.\-]*)")
CHUNKS = (1 << 9, 3 << 10, 8 << 20)


def rows(report: object) -> list[tuple[object, ...]]:
    assert isinstance(report, FileReport)
    return [(f.rule, f.line, f.col, f.end_line, f.end_col, f.message, f.count, f.source, f.notes, f.expected,
             report.values, report.distinct) for f in report.findings]


def assert_same(data: bytes, opts: CheckOptions, chunks: tuple[int, ...] = (8 << 20,)) -> list[tuple[object, ...]]:
    """The native report, read in chunks of each size, is the reference's (with and without its memo), on
    ``data`` without the forms the reference predates."""
    data = without_new_forms(data)
    want = rows(reference_report(data, "f", opts))
    assert rows(reference_report(data, "f", opts, ReadOptions(repeats=False))) == want
    for chunk in chunks:
        assert rows(scan_report(scan_bytes(data, ScanOptions(chunk=chunk)), "f", opts)) == want
    return want


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


def corpus(module: str, copies: int, inject: list[tuple[str, str]], seed: int) -> bytes:
    """``module`` ``copies`` times with unique SSA names, and in random copies one ``old`` -> ``new``."""
    rng = random.Random(seed)
    parts = []
    for c in range(copies):
        text = _NAME.sub(rf"\g<1>_c{c}", module)
        for old, new in inject:
            if old in text and rng.random() < 0.3:
                text = text.replace(old, new, 1)
        parts.append(text)
    return "".join(parts).encode()


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_hlo_repeated_with_injected_errors(jax_dumps: Path, seed: int) -> None:
    # as an input module: a scheduled (compiled, per-device) one is never imported, so its import is not checked
    module = (jax_dumps / "compiled.txt").read_text().replace("is_scheduled=true, ", "", 1)
    bad = [
        ("sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}",
         "sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"),
        ("sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
         "sharding={devices=[1,4,2]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    ]
    found = assert_same(corpus(module, 40, bad, seed), CheckOptions(mesh=parse_mesh_option("batch=2,model=4")), CHUNKS)
    assert {r[0] for r in found} >= {"rank-mismatch", "import-distorts-mesh"}


@pytest.mark.parametrize("seed", [0, 1])
def test_sdy_lowering_repeated_with_injected_errors(jax_dumps: Path, seed: int) -> None:
    module = (jax_dumps / "lowered.mlir").read_text()
    bad = [('[{"batch"}, {}]>', '[{"batch"}]>'),
           ('{sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}', '{sdy.sharding = #sdy.sharding<@mesh, [{}, {"modl"}]>}'),
           ('sdy.mesh @mesh = <["batch"=2, "model"=4]>', 'sdy.mesh @mesh = <["batch"=4, "model"=2]>')]
    found = assert_same(corpus(module, 40, bad, seed), CheckOptions(mesh=parse_mesh_option("batch=2,model=4")), CHUNKS)
    assert {r[0] for r in found} >= {"rank-mismatch", "verify", "mesh-mismatch"}


def test_long_signature_repeats_count_every_argument() -> None:
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
@given(documents(), st.sampled_from(CHUNKS))
def test_generated_documents_give_the_same_findings(data: bytes, chunk: int) -> None:
    assert_same(data, CheckOptions(mesh=parse_mesh_option("x=2,y=4")), (chunk,))


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
@given(hlo_documents(), st.sampled_from(CHUNKS))
def test_generated_hlo_gives_the_same_findings(data: bytes, chunk: int) -> None:
    assert_same(data, CheckOptions(mesh=parse_mesh_option("batch=2,model=4")), (chunk,))


def test_unclosed_axis_lists_cost_linear_time() -> None:
    """An unclosed list of axes fails fast, however long: four times the list costs about four times the
    processor time (quadratic would be sixteen), measured in this process's own time, which load does not
    inflate as it does a wall clock."""
    import time

    def text(n: int) -> bytes:
        axes = '{"x"}, {}, ' * n
        return (
            'module @m {\n  sdy.mesh @mesh = <["x"=2, "y"=4]>\n'
            f"  func.func public @main(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{axes}>}}, "
            f"%arg1: tensor<8xf32>) -> tensor<8xf32> {{\n"
            f"    %1 = sdy.sharding_constraint %arg0 <@mesh, [{axes}> : tensor<8xf32>\n"
            "    return %arg0 : tensor<8xf32>\n  }\n}\n"
        ).encode()

    def cost(n: int) -> float:
        data = text(n)
        t0 = time.process_time()
        rows(scan_report(scan_bytes(data), "f", CheckOptions()))
        return time.process_time() - t0

    cost(10)  # the parsers load once
    small, large = min(cost(2000) for _ in range(3)), min(cost(8000) for _ in range(3))
    assert large < 8 * small + 0.05, (small, large)
