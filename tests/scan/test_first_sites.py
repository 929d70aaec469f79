"""``every_site=False``, the scan ``check`` reads: the same groups, pairs, modules and suppressions as the
full scan, each group's first row the full scan's row but for its scope (``check`` reads none, so that scan
tracks none), and ``Scan.spans`` every grouped site's place; on every real dump of the suite, read whole
and in small pieces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.explore import examples

from shardconv.scan.columns import NONE, site_column
from shardconv.scan.native import ScanOptions, scan_bytes, site_at, site_count
from shardconv.scan.sites import RECORD_KINDS, SiteKind

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted(p for d in (ROOT / "tests" / "data", ROOT / "examples") for p in d.rglob("*") if p.is_file())
PIECES = [{}, {"chunk": 97, "max_line": 300, "overlap": 120}]
if TYPE_CHECKING:
    from shardconv._native import Scan

UNGROUPED = RECORD_KINDS | {SiteKind.MODULE_START, SiteKind.EXPECTED_ERROR}


def _group(scan: Scan, g: tuple[int, ...]) -> tuple[object, ...]:
    """A group as what its ids stand for (each scan numbers its values and names itself)."""
    module, value, shapes, name, _, count = g
    return module, scan.values[value], scan.shapes[shapes] if shapes != NONE else None, (
        scan.names[name] if name != NONE else None), count


def _agree(data: bytes, **opts: int) -> None:
    full = scan_bytes(data, ScanOptions(**opts))
    first = scan_bytes(data, ScanOptions(every_site=False, **opts))
    assert (first.kind, first.modules, first.suppressions) == (full.kind, full.modules, full.suppressions)
    assert [_group(first, g) for g in first.groups] == [_group(full, g) for g in full.groups]
    assert first.pairs == full.pairs
    for g_full, g_first in zip(full.groups, first.groups):
        a, b = site_at(full, g_full[4], "f"), site_at(first, g_first[4], "f")
        assert a == b
        assert (a.value, a.op, a.param, a.root) == (b.value, b.op, b.param, b.root)
        assert (b.function, b.computation, b.entry) == (None, None, False)
        cut = b.line_cut
        assert a.line_text[cut : cut + len(b.line_text)] == b.line_text
    # every grouped site of the full scan, in order, is a span of the log
    of_group = {(g[0], g[1], g[2], g[3]): i for i, g in enumerate(full.groups)}
    named = {SiteKind.SDY_MESH, SiteKind.STABLEHLO_MESH, SiteKind.COLLECTIVE_MESH, SiteKind.COLLECTIVE_AXES}
    want = []
    cols = {c: site_column(full, c) for c in ("value", "module", "shapes", "name", "start", "end", "line")}
    for i in range(site_count(full)):
        site = site_at(full, i, "f")
        if site.kind in UNGROUPED:
            continue
        name = cols["name"][i] if site.kind in named else NONE
        g = of_group[(cols["module"][i], cols["value"][i], cols["shapes"][i], name)]
        want.append((g, cols["start"][i], cols["end"][i], cols["line"][i]))
    assert first.spans(list(range(len(first.groups)))) == want
    assert first.spans([]) == []


@pytest.mark.parametrize("opts", PIECES, ids=["whole", "97"])
@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_real_dump(path: Path, opts: dict[str, int]) -> None:
    _agree(path.read_bytes(), **opts)


def test_jax_dumps(jax_dump_files: list[Path]) -> None:
    for p in jax_dump_files:
        _agree(p.read_bytes())


# Function lines as JAX writes them, a large model's arguments alike but for their names (the scan that
# keeps first sites passes over an argument like an earlier one of its line), mixed with the arguments
# and names that must be read in full: other attributes, HLO shardings, types a keyword may hide in.
ARGUMENTS = [
    b'tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}',
    b'tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{}, {"b"}]>}',
    b'tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}',
    b"tensor<f32> {sdy.sharding = #sdy.sharding<@m, []>}",
    b'tensor<?x4xbf16> {sdy.sharding = #sdy.sharding<@m, [{"a", "b"}, {}]>}',
    b'tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"x>}, %y: "}]>}',
    b'tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"p) -> q"}]>}',
    b'tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}',
    b'tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}", sdy.sharding = #sdy.sharding<@m, [{"a"}]>}',
    b'tensor<8xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}',
    b'tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>, jax.buffer_donor = true}',
    b"tensor<8xsharding> {sdy.sharding = #sdy.sharding<@m, [{}]>}",
    b"tensor<8xf32>",
    b'tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]',
    b"tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}} {sdy.sharding = #sdy.sharding<@m, [{}]>}",
]
NAMES = st.sampled_from([b"%arg", b"%sharding", b"%sdy.", b"%module_", b"%x"])
FUNCTION = st.tuples(
    st.sampled_from([b"  func.func @main(", b"  func.func private @f(", b"func.func public @g("]),
    st.lists(st.tuples(NAMES, st.sampled_from(ARGUMENTS)), min_size=1, max_size=30),
    st.sampled_from([b") {", b") -> tensor<8xf32> {", b') -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) {',
                     b') -> (tensor<8xf32> {mhlo.sharding = "{replicated}"}) {', b") attributes {x = 1} {"]),
).map(lambda f: f[0] + b", ".join(n + b"%d: " % i + a for i, (n, a) in enumerate(f[1])) + f[2])
MODULE = st.lists(FUNCTION, min_size=1, max_size=3).map(
    lambda fs: b'module {\n  sdy.mesh @m = <["a"=2, "b"=2]>\n' + b"\n    return\n  }\n".join(fs) + b"\n  }\n}\n")


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(MODULE, min_size=1, max_size=3).map(b"".join), st.sampled_from(PIECES))
def test_function_arguments_alike(data: bytes, opts: dict[str, int]) -> None:
    _agree(data, **opts)


def test_long_lines_keep_a_window() -> None:
    """A long line is kept as the bytes around the site, and says where in the line they start."""
    args = ", ".join(f"%arg{i}: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{}}]>}}" for i in range(60))
    sig = f"  func.func @main({args}, %x: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@m, [{{\"a\"}}]>}}) {{\n"
    data = ('module {\n  sdy.mesh @m = <["a"=2]>\n' + sig + "  }\n}\n").encode()
    scan = scan_bytes(data, ScanOptions(every_site=False))
    last = site_at(scan, scan.groups[-1][4], "f")
    assert len(sig) > 2048 and last.line_cut > 0
    assert len(last.line_text) <= 1024
    assert last.line_text in data and b'#sdy.sharding<@m, [{"a"}]>' in last.line_text
    assert site_at(scan_bytes(data), 2, "f").line_text == sig.rstrip("\n").encode()


def test_a_clean_module_s_copies_are_passed_over() -> None:
    """A pass log's copies of a module no rule had anything to say of are not built again; a copy that
    holds something else is, and a module with an error is reported in every copy."""
    from shardconv.check.engine import check_text
    from shardconv.scan.modules import module_values

    clean = "HloModule m, num_partitions=8\nENTRY %e {\n  %p = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}\n}\n"
    bad = "HloModule m, num_partitions=8\nENTRY %e {\n  %p = f32[8]{0} parameter(0), sharding={devices=[4]<=[8]}\n}\n"
    scan = scan_bytes((clean * 3).encode(), ScanOptions(every_site=False))
    first = next(module_values(scan, "f"))
    mods = list(module_values(scan, "f", known=lambda key: first.distinct if key == first.key else None))
    assert [m.passed_over for m in mods] == [True, True, True]
    assert [m.distinct for m in mods] == [2, 2, 2] and sum(m.total for m in mods) == 6
    assert check_text(clean * 3) == []
    assert [f.line for f in check_text(clean * 3 + bad + clean + bad)] == [15, 23]


def _constraints(seed: int) -> bytes:
    """Modules of constraint lines met again and again, as a program that repeats a layer has them: the
    same few values and types under new numbers, among lines of other shapes (named values, a result
    pair, a second site, records, a loc tail, a manual computation, lines that open a scope)."""
    import random

    rng = random.Random(seed)
    values = ['<@m, [{"a"}, {}]>', '<@m, [{}, {"b"}]>', '<@m, [{"a", "b"}, {}]>', '<@m, [{?}, {}]>', '<@m, [{}, {}]>']
    types = ["tensor<8x8xf32>", "tensor<8x16xf32>", "tensor<4x8xbf16>"]
    odd = [
        '    %x{n} = sdy.sharding_constraint %{p} {v} : {t}',
        '    %{n} = sdy.sharding_constraint %{p} {v} {{mhlo.sharding = "{{replicated}}"}} : {t}',
        '    %{n} = sdy.reshard %{p} {v} {{sdy.sharding_origin_name = "constraint_{n}"}} : {t}',
        '    %{n} = sdy.sharding_constraint %{p} {v} : {t} loc(#loc{n})',
        '    %{n}:2 = sdy.sharding_constraint %{p} {v} : {t}',
        '    %{n} = sdy.sharding_constraint %{p} {v} : {t} // func.func @f(',
        '%{n} = sdy.sharding_constraint %{p} {v} : {t} {{',
        '    %{n} = stablehlo.add %{p}, %{p} {{sdy.sharding = #sdy.sharding_per_value<[{v}]>}} : {t}',
        '    %{n} = sdy.manual_computation(%{p}) in_shardings=[{v}] out_shardings=[{v}] manual_axes={{}} '
        '(%arg9: {t}) {{\n      sdy.return %arg9 : {t}\n    }} : ({t}) -> {t}',
    ]
    out = ['module @m1 {\n  sdy.mesh @m = <["a"=2, "b"=4]>\n  func.func @main(%arg0: tensor<8x8xf32>) {']
    for n in range(1, 600):
        if n % 200 == 0:
            out.append(f"  }}\n}}\nmodule @m{n} {{\n  sdy.mesh @m = <[\"a\"=2, \"b\"=4]>\n  func.func @main() {{")
        p = rng.choice([f"{n - 1}", f"arg{rng.randrange(3)}", f"{n - 1}#1"])
        v, t = rng.choice(values), rng.choice(types)
        op = rng.choice(["sdy.sharding_constraint", "sdy.reshard"])
        shape = f"    %{n} = {op} %{p} {v} : {t}" if rng.random() < 0.8 else rng.choice(odd).format(n=n, p=p, v=v, t=t)
        out.append(shape)
    out.append("  }\n}\n")
    return "\n".join(out).encode()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("opts", PIECES, ids=["whole", "97"])
def test_constraint_lines_met_again(seed: int, opts: dict[str, int]) -> None:
    """A constraint line like one met before in its module is counted as that one's group (``repeats``
    in the core): the groups, counts and places are those of the full scan, which reads every line."""
    data = _constraints(seed)
    _agree(data, **opts)
    first = scan_bytes(data, ScanOptions(every_site=False))
    assert site_count(first) < len(first.groups) + 20 and sum(g[5] for g in first.groups) > 500
