"""A dump the scan cannot read whole is never clean: a value it starts but cannot finish (a cut string or
bracket, a cut file) is a ``syntax`` finding at the value, in every format. The invariant held on real jax
dumps: cut a clean dump anywhere from a value's first byte after its opening bracket or quote on, or drop
that value's closing byte, and check reports a finding at that value's line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.check_cli import run

from shardconv import scan_text
from shardconv.check import check_text
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import scan_report
from shardconv.scan.native import ScanOptions, scan_bytes
from shardconv.scan.sites import SiteKind

CASES = {  # name: (dump, (the cut value's line, its first bytes, or "" where it is cut before its first))
    # an sdy attribute whose string is cut (MLIR's parser rejects it), the file going on after it
    "sdy-string": (
        'module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["data"=2, "exp"=4]>\n'
        '  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "exp, {}, {}]>})'
        " -> tensor<8x8xf32> {\n    return %arg0 : tensor<8x8xf32>\n  }\n}\n",
        (3, "#sdy.sharding<"),
    ),
    "hlo-eof": (
        "HloModule m, num_partitions=8\n\nENTRY %e (p: f32[8,8]) -> f32[8,8] {\n"
        "  ROOT %p = f32[8,8]{1,0} parameter(0), sharding={devices=[8,",
        (4, "{devices"),
    ),
    "v3-eof": (
        "HloModule m, num_partitions=8\n\nENTRY %e (p: f32[8,8]) -> f32[8,8] {\n"
        "  ROOT %p = f32[8,8]{1,0} parameter(0), sharding={mesh['a'=2,'b'=4], [{'a'}",
        (4, "{mesh"),
    ),
    "mhlo-string": (
        'module @m attributes {mhlo.num_partitions = 2 : i32} {\n'
        '  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{replicated}',
        (2, '"{rep'),
    ),
    "mhlo-string-empty": ('module @m {\n  func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "', (2, '"')),
    "mesh-decl": ('module @m {\n  sdy.mesh @mesh = <["a"=2, "b"=4]\n}\n', (2, "<[")),
    "mesh-inline": (
        'module @m {\n  func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2]>, [{"a"}]})'
        " -> tensor<8xf32>\n",
        (2, "#sdy.sharding<"),
    ),
    "constraint": (
        'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n'
        '    %0 = sdy.sharding_constraint %a <@mesh, [{"a"}] : tensor<8xf32>\n',
        (4, "<@mesh"),
    ),
    "manual-computation": (
        'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n'
        '    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"a"}]> out_shardings=[<@mesh, [{"a"}]>] '
        'manual_axes={"a"} (%b: tensor<4xf32>) {\n',
        (4, "[<@mesh, [{\"a\"}]> out"),
    ),
    "frontend-attribute": (
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), "
        'frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"a\\"}]>}\n}\n',
        (4, '"#sdy'),
    ),
    "bad-escape": (  # a string whose escapes do not decode: the value cannot be read either
        'module @m {\n  func.func @f(%a: tensor<8xf32> {mhlo.sharding = "{replicated}\\zz"}) -> tensor<8xf32> {\n',
        (2, '"{rep'),
    ),
    "frontend-mesh-entry": (  # the dict closes, its mesh does not
        'HloModule m, num_partitions=2, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2}}\n',
        (1, "{mesh"),
    ),
    "hlo-no-opening": (  # `sharding=` whose value opens with no `{`: the token after it is the site
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), sharding=[replicated}, metadata={op_name=\"p\"}\n}\n",
        (4, "[replicated}"),
    ),
    "hlo-no-value": (
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), sharding=\n}\n",
        (4, ""),
    ),
    "frontend-key-no-prefix": (  # the key names a value its string does not open as
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        '  ROOT %p = f32[8]{0} parameter(0), frontend_attributes={xla.sdy.manual_axes="#sdy<manuil_axes{\\"a\\"}>"}'
        "\n}\n",
        (4, "il_axes"),  # where it parts from the literal it follows
    ),
    "sdy-key-no-sharding": (  # `sdy.sharding = ` whose value opens no sharding (`#sdy.sh/rding<`)
        'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n'
        '  func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sh/rding<@mesh, [{"a"}]>}) -> tensor<8xf32> {\n'
        "    return %a : tensor<8xf32>\n  }\n}\n",
        (3, "/rding"),
    ),
    "hlo-nul": (  # a NUL in a dump: no compiler reads the line, and the file is no binary to skip
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), s\x00arding={devices=[2]0,1}\n}\n",
        (4, "\x00"),
    ),
    "num-partitions-no-number": (
        "HloModule m, num_partitions=U\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}\n}\n",
        (1, "U"),
    ),
    "frontend-meshes": (
        'HloModule m, num_partitions=2, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2]',
        (1, "{mesh"),
    ),
}
# a dump check finds clean
CLEAN_HLO = CASES["hlo-eof"][0].replace("sharding={devices=[8,", "sharding={replicated}\n}\n")


@pytest.mark.parametrize("name", CASES)
def test_a_value_the_scan_cannot_finish_is_a_syntax_finding_at_it(name: str) -> None:
    text, (line, first) = CASES[name]
    written = text.split("\n")[line - 1]
    at = (line, (written.index(first) if first else len(written)) + 1)
    found = [(f.rule, (f.line, f.col)) for f in check_text(text)]
    assert ("syntax", at) in found, found


def test_the_cli_fails_a_cut_file_and_says_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "cut.txt"
    p.write_text(CASES["hlo-eof"][0])
    rc, out, _ = run([str(p), "--no-config"], capsys)
    assert rc == 1 and f"{p}:4:50: error: sharding=: {{devices=[8, is cut off" in out and "clean" not in out


def test_the_public_scan_reports_the_cut_value_as_an_error() -> None:
    (site,) = [s for s in scan_text(CASES["hlo-eof"][0]) if s.attribute == "sharding="]
    assert site.value is None and site.error is not None and "cut off" in site.error.message


@pytest.mark.parametrize(
    "text",
    [
        '  // CHECK: sharding={devices=[2,\n',  # a test's pattern, cut on purpose
        '{"sharding": "#sdy.sharding<@mesh, [{}, {\\"model\\"}]>"}\n',  # inside another format's string
    ],
)
def test_text_that_is_no_value_of_the_dump_is_passed_over(text: str) -> None:
    assert check_text(text) == []


def _gate(data: bytes) -> tuple[set[tuple[int, str, str]], int]:
    """(check's findings as (line, rule, message), how many values it scanned) of a dump."""
    report = scan_report(scan_bytes(data, ScanOptions(every_site=False)), "<t>", CheckOptions())
    assert isinstance(report, FileReport)
    return {(f.line, f.rule, f.message) for f in report.findings}, report.values


def _mutations(data: bytes) -> list[tuple[str, int, bytes]]:
    """(how, the value's line, the mutated dump) for each distinct bracketed or quoted value of ``data``:
    cut in the middle, cut before its last byte, and its last byte dropped."""
    out, seen = [], set()
    for s in scan_text(data):
        if s.text in seen or s.end - s.start < 3 or s.kind in (SiteKind.NUM_PARTITIONS, SiteKind.COLLECTIVE_MESH):
            continue
        seen.add(s.text)
        mid = (s.start + s.end) // 2
        out += [
            ("cut in the middle", s.line, data[:mid]),
            ("cut before its last byte", s.line, data[: s.end - 1]),
            ("its last byte dropped", s.line, data[: s.end - 1] + data[s.end :]),
        ]
    return out


@pytest.mark.parametrize("name", ["lowered.mlir", "compiled.txt", "hlo_to_stablehlo.mlir", "tensors.txt.0"])
def test_a_real_dump_cut_or_unbalanced_inside_any_value_is_never_clean_with_fewer_values(
    jax_dumps: Path, name: str
) -> None:
    """Cut inside a value: a finding at its line. Its closing byte dropped: a finding at its line, unless
    a later closer on the line closes it (then as many values are read, and the text around it is no value)."""
    data = (jax_dumps / name).read_bytes()
    before, values = _gate(data)
    assert values > 3
    mutations = _mutations(data)
    assert len(mutations) >= 6
    passed = []
    for how, line, mutated in mutations:
        found, n = _gate(mutated)
        new = {at for at, _, _ in found - before}
        if line not in new and not (how == "its last byte dropped" and n >= values):
            passed.append((how, line))
    assert passed == []


def test_a_dump_with_a_byte_that_is_not_utf8_is_checked_as_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's distorted-mesh module with one Latin-1 comment line, in a folder beside a clean dump:
    shardings are ASCII, so it is scanned (and fails) like the seed itself, never skipped."""
    seed = (Path(__file__).resolve().parents[2] / "shardconv" / "examples" / "seed-distorted-mesh.mlir").read_bytes()
    head, _, rest = seed.partition(b"\n")
    (tmp_path / "seed-latin1.mlir").write_bytes(head + b"\n// caf\xe9: written on a Latin-1 terminal\n" + rest)
    (tmp_path / "clean.hlo").write_text(CLEAN_HLO)
    rc, out, _ = run([str(tmp_path), "--no-config", "--allowed-meshes", "2x4"], capsys)
    assert rc == 1 and "seed-latin1.mlir:" in out and "[mesh-not-allowed]" in out
    assert "2 file(s) checked, 0 skipped," in out
    assert [s.line for s in scan_text(head + b"\n// caf\xe9\n" + rest) if s.attribute == "sdy.mesh"]


def test_the_closing_line_says_a_skipped_file_was_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "clean.hlo").write_text(CLEAN_HLO)
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    rc, out, _ = run([str(tmp_path), "--no-config"], capsys)
    last = out.rstrip().splitlines()[-1]
    assert rc == 0 and last.startswith("1 file(s) checked, 1 skipped, not checked (-v says why),")


def _values(data: bytes) -> list[tuple[SiteKind, str]]:
    return [(s.kind, s.text) for s in scan_text(data)]


@pytest.mark.parametrize("name", ["lowered.mlir", "compiled.txt", "hlo_to_stablehlo.mlir"])
def test_a_real_dump_cut_between_values_is_a_syntax_finding_at_its_end(jax_dumps: Path, name: str) -> None:
    """Cut inside a keyword, before a value, in the middle of an op line, after an op line, before the
    last closing brace: every value left is whole, and check says where the file ends and what it cuts."""
    data = (jax_dumps / name).read_bytes()
    sites = list(scan_text(data))
    s = sites[len(sites) // 2]
    line_start = data.rfind(b"\n", 0, s.start) + 1
    cuts = {
        "inside the keyword": line_start + (s.start - line_start) // 2,
        "before the value": s.start,
        "mid line": line_start + 4,
        "after the line": data.index(b"\n", s.end) + 1,
        "before the last brace": data.rstrip().rfind(b"\n}") + 1,
    }
    first = data.split(b"\n", 1)[0]
    for how, at in cuts.items():
        found = check_text(data[:at])
        end = [f for f in found if f.rule == "syntax" and "is it cut off" in f.message]
        assert len(end) == 1, (how, found)
        last = data[:at].count(b"\n") + (not data[:at].endswith(b"\n"))
        assert end[0].line == last and "opened at line" in end[0].message, (how, end)
        if first.startswith(b"module @"):  # an MLIR module indents its functions: the module is what is cut
            assert f"module {first.split()[1].decode()} opened at line 1" in end[0].message


def test_the_cli_fails_a_file_cut_between_values(
    jax_dumps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = (jax_dumps / "lowered.mlir").read_bytes()
    p = tmp_path / "cut.mlir"
    p.write_bytes(data[: data.rstrip().rfind(b"\n}") + 1])
    rc, out, _ = run([str(p), "--no-config"], capsys)
    assert rc == 1 and "[syntax]" in out and "is it cut off?" in out and "clean" not in out


@pytest.mark.parametrize(
    "name", ["lowered.mlir", "compiled.txt", "hlo_to_stablehlo.mlir", "tensors.txt.0", "xla_dump"]
)
def test_a_real_dump_cut_anywhere_is_a_finding_or_keeps_every_value(jax_dumps: Path, name: str) -> None:
    """Any cut from a dump's first value on either gives check a new finding or leaves every value of
    the intact dump (it cut only what follows them: closing lines, locations, comments). (Before its
    first value a dump holds no IR yet: it is skipped, never clean.)"""
    path = jax_dumps / name
    if path.is_dir():  # XLA's per-pass folder: its largest module
        path = max((p for p in path.iterdir() if p.suffix == ".txt"), key=lambda p: p.stat().st_size)
    data = path.read_bytes()
    before, _ = _gate(data)
    intact = _values(data)
    assert len(intact) > 3

    @settings(max_examples=150)
    @given(st.integers(min_value=next(iter(scan_text(data))).start, max_value=len(data)))
    def cut_at(at: int) -> None:
        found, _ = _gate(data[:at])
        assert found - before or _values(data[:at]) == intact

    cut_at()
