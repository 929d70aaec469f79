"""A line longer than the scan window (``max_line``) is read in windows; each of its values is still read
whole, with the bytes before it as the whole line has them: the same sites as a scan whose window holds
the whole line, wherever the windows fall. A value longer than any window is an OSError saying where
it is (``check``: an io-error finding), never a site dropped unsaid."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_util import run
from support.compare import Options, differences

from shardconv.scan import native

SMALL = {"chunk": 32, "max_line": 256, "overlap": 64}  # windows of 256 bytes, each cut 64 before its end
WHOLE = {"chunk": 32, "max_line": 1 << 30, "overlap": 64}  # one window holds any line here
PERIOD = SMALL["max_line"] - SMALL["overlap"]  # how far each window moves on past the head
HEAD = 1 << 16  # the sniffed head, read (and windowed) as one

VALUES = [
    b"%x = f32[8]{0} parameter(0), sharding={devices=[2,1]0,1}",
    b'sdy.mesh @mesh = <["a"=3]>',
    b'mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\\22a\\22}]>"}',
    b'%y = f32[8]{0} add(), mhlo.sharding = "{devices=[2]0,1}"',
    b'func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})',
    b"sharding={devices=[40]" + b",".join(b"%d" % (i % 2) for i in range(40)) + b"}",  # longer than `overlap`
    b'{xla.sdy.sharding = "#sdy.sharding<@mesh, [{\\"a\\"}]>", mhlo.sharding = "{replicated}"}',
]

# Values whose quotes or `//` decide what follows them on the line: a damaged value (`z{`) is a site only
# outside a string and outside a comment line, so a window reads it as the whole line does only when it
# starts in the line's state there (inside a string or not, just after a `\` in one or not).
QUOTED = [
    b'mhlo.sharding = z{devices=[2]0,1}"',  # a quote left open: every other value sits in a string
    b'mhlo.sharding = z{devices=[2]0,1} "\\" "',  # an escaped quote in a string, cut before or after its `\`
    b'mhlo.sharding = z{devices=[2]0,1} "\\\\"',  # an escaped backslash, then the closing quote
    b'mhlo.sharding = z{devices=[2]0,1} ""',  # a window cut just past a quote
    b"// mhlo.sharding = z{devices=[2]0,1}",  # a `//` in the line, a window's first bytes: no comment line
]


def _sites(data: bytes, opts: dict[str, int]) -> list[tuple[object, ...]]:
    scan = native.scan_bytes(data, native.ScanOptions(**opts))
    return [(s.kind, s.site, s.start, s.end, s.line, s.col, s.end_line, s.end_col, s.raw, s.text)
            for s in native.iter_sites(scan, "x")]


def _line(value: bytes, shift: int) -> bytes:
    """A module whose one line holds ``value`` a few times past the sniffed head, the first ``shift``
    bytes further on."""
    filler = b"x" * (HEAD + shift)
    parts = [value + b" " + b"y" * (7 * i) + b" " for i in range(6)]
    return b"HloModule m\n" + filler + b" " + b"".join(parts) + b"z" * 600 + b"\n"


@pytest.mark.parametrize(("value", "least"), [(v, 6) for v in VALUES] + [(v, 3) for v in QUOTED],
                         ids=[f"v{i}" for i in range(len(VALUES))] + [f"quoted{i}" for i in range(len(QUOTED))])
def test_every_cut_position_reads_the_sites_a_whole_line_does(value: bytes, least: int) -> None:
    """Every place a window's cut may fall in or around each value (``shift`` over one window's move):
    the sites of the small windows are those of one window over the whole line."""
    for shift in range(PERIOD + len(value)):
        data = _line(value, shift)
        whole = _sites(data, WHOLE)
        assert len(whole) >= least, (shift, whole)
        assert _sites(data, SMALL) == whole, shift


@pytest.mark.parametrize("value", QUOTED, ids=range(len(QUOTED)))
def test_the_whole_line_read_of_quotes_is_the_reference_scanner_s(value: bytes) -> None:
    """The whole-line read the windows are held to is itself right: the reference scanner, reading the
    line whole, finds the same sites (a few shifts: the whole-line read does not depend on them)."""
    for shift in (0, 1, 2):
        assert differences(_line(value, shift), Options(**WHOLE)) == [], shift


@pytest.mark.parametrize("bytes_", [b"\xff", b"\x00", b"\xc3(", b"\xe2\x82\xac \xe9"],
                         ids=["ff", "nul", "cut-short", "after-utf8"])
def test_a_byte_no_compiler_reads_in_a_window_is_a_site_where_the_whole_line_has_it(bytes_: bytes) -> None:
    """At every cut position, a long line's windows show its first byte that is not UTF-8 (or NUL) where
    a whole-line read does (its site runs to the part of the line read, not to the line's end), and
    every other site as the whole line does; after a ``//`` there is none, in windows as whole."""
    def unread(sites: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [s[2:3] + s[4:6] for s in sites if s[1] == "text"]

    value = b'mhlo.sharding = "{replicated}" caf' + bytes_ + b" x"
    for shift in range(PERIOD + len(value)):
        data = _line(value, shift)
        whole, small = _sites(data, WHOLE), _sites(data, SMALL)
        assert len(unread(whole)) == 1 and unread(small) == unread(whole), shift
        assert [s for s in small if s[1] != "text"] == [s for s in whole if s[1] != "text"], shift
        commented = data.replace(b"x" * 40, b"x" * 38 + b"//", 1)
        assert unread(_sites(commented, WHOLE)) == unread(_sites(commented, SMALL)) == [], shift


def test_a_value_longer_than_any_window_is_an_error_not_silence() -> None:
    """A value that starts a window and runs past its end: an OSError with its line and column."""
    long_value = b"sharding={devices=[2]" + b"0," * 300 + b"0}"
    data = b"HloModule m\n" + b"x" * HEAD + b" %p = f32[8]{0} parameter(0), " + long_value + b" tail\n"
    assert len(_sites(data, WHOLE)) == 1
    with pytest.raises(OSError, match=r"line 2, column \d+: a value runs on past the scan window \(256 bytes\)"):
        native.scan_bytes(data, native.ScanOptions(**SMALL))


def test_check_of_a_value_longer_than_the_window(tmp_path: Path) -> None:
    """At the real window (4 MiB) a 5 MB ``devices`` list is no "clean": check reports the file unread."""
    p = tmp_path / "long.hlo"
    p.write_bytes(b"HloModule m\n\nENTRY %main {\n  ROOT %p = f32[8]{0} parameter(0), sharding={devices=[2]"
                  + b"0," * (5 << 19) + b"0}\n}\n")
    r = run("check", str(p))
    assert r.code == 1 and "scan window" in r.out and "[io-error]" in r.out and "clean" not in r.out, r.out


def test_check_of_a_byte_no_compiler_reads_in_a_long_line(tmp_path: Path) -> None:
    """At the real window (4 MiB), a 0xFF a megabyte into a 6 MB line is a syntax error at its column,
    not "clean"."""
    p = tmp_path / "long.hlo"
    head = b"HloModule m\n\nENTRY %main {\n  ROOT %p = f32[8]{0} parameter(0), sharding={replicated} "
    head += b"x" * (1 << 20)
    p.write_bytes(head + b" \xff " + b"y" * (5 << 20) + b"\n}\n")
    r = run("check", str(p))
    col = len(head.rsplit(b"\n", 1)[1]) + 2
    assert r.code == 1 and f"long.hlo:4:{col}: error: text: byte 0xFF is not UTF-8" in r.out, r.out[:500]


def test_a_mesh_among_many_across_the_real_cut(tmp_path: Path) -> None:
    """A 4.5 MB line of modules, one of whose meshes differs, at each place around the first window's
    cut (4 MiB and a read, less the 1 MiB overlap): ``check --mesh a=2`` finds it."""
    window = HEAD + 16 * (256 << 10)  # the head, then 256 KiB reads up to the 4 MiB window
    cut = window - (1 << 20)
    one = b'module @m {sdy.mesh @mesh = <["a"=2]>} '
    odd = b'module @m {sdy.mesh @mesh = <["a"=3]>} '
    for at in range(cut - 30, cut + 5, 7):
        n, pad = divmod(at - odd.index(b"<"), len(one))
        data = one * n + b" " * pad + odd + one * (110_000 - n)
        assert data.find(b'<["a"=3]>') == at
        p = tmp_path / "one-line.mlir"
        p.write_bytes(data + b"\n")
        assert native.scan_path(str(p)).groups == native.scan_path(str(p), native.ScanOptions(max_line=1 << 30)).groups
        r = run("check", "--mesh", "a=2", str(p))
        assert r.code == 1 and '"a"=3' in r.out, (at, r.out)


# Lines that open a scope, longer than a window: their start names it, their end (`{`) says it opens.
# (what comes before the line, the line's start and end (a long filler between), what it opens)
OPENERS = [
    (b"module @a {\n}\n// b\n// c\n", b'module @n attributes {mhlo.frontend_attributes = {a = "', b'"}} {',
     ("module", "@n")),
    (b"module @a {\n}\n// b\n// c\n",
     b'func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %b: i32 {a = "',
     b'"}) -> tensor<8xf32> {', ("function", "@f")),
    (b"HloModule m\n\n// b\n\n", b"ENTRY %main.5 (p: f32[8], q: f32[8]) -> f32[8] /*", b"*/ {",
     ("computation", "main.5")),
    (b"HloModule m\n\n// b\n\n", b"%add.1 (a: f32[], b: f32[]) -> f32[] /*", b"*/ {", ("computation", "add.1")),
]


@pytest.mark.parametrize(("before", "start", "end", "opens"), OPENERS, ids=[o[3][0] for o in OPENERS])
def test_a_dump_cut_after_a_long_opener_ends_inside_it_as_a_whole_line_read_says(
    before: bytes, start: bytes, end: bytes, opens: tuple[str, str]
) -> None:
    """A dump cut after (or inside) a line that opens a module, function or computation, longer than
    the window, wherever the windows fall: it ends inside what the line opens, as when a window holds
    the whole line; closed, it ends inside nothing."""
    def open_end(data: bytes) -> tuple[tuple[object, ...] | None, tuple[object, ...] | None]:
        return (native.scan_bytes(data, native.ScanOptions(**WHOLE)).open_end,
                native.scan_bytes(data, native.ScanOptions(**SMALL)).open_end)

    for shift in range(0, PERIOD + 8, 3):
        line = start + b"x" * (HEAD + shift) + end
        cut = before + line + b"\n    %x = f32[8]{0} parameter(0), sharding={replicated}\n  y\n"
        whole, small = open_end(cut)
        assert whole is not None and whole[:3] == (*opens, 5) and small == whole, (shift, small)
        whole, small = open_end(before + line[: -len(end) - 50])  # the input ends inside the line
        # (a computation's line cut before its `{` names none)
        assert whole == (opens[0], opens[1] * (opens[0] != "computation"), 5, 5) and small == whole, (shift, small)
        closed = cut + (b"}\n" if opens[0] != "computation" else b"}\n\nENTRY %e () -> f32[] {\n}\n")
        assert open_end(closed) == (None, None), shift


def test_the_sites_after_a_long_scope_line_have_its_scope() -> None:
    """A function's signature longer than the window gives its sites, and its body's, its function, and a
    computation's long line its body's sites their computation, as a whole-line read does."""
    def scopes(data: bytes, opts: dict[str, int]) -> list[tuple[object, ...]]:
        scan = native.scan_bytes(data, native.ScanOptions(**opts))
        return [(s.line, s.col, s.text, s.function, s.computation, s.entry) for s in native.iter_sites(scan, "x")]

    arg = b'%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, '
    for shift in range(0, PERIOD + 8, 3):
        mlir = (b'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n  func.func @g() {\n  }\n  func.func @f('
                + arg + b"%b: i32 {a = \"" + b"x" * (HEAD + shift) + b'"}, ' + arg * 3 + b") {\n"
                + b'    %0 = sdy.sharding_constraint %a <@mesh, [{"a"}]> : tensor<8xf32>\n  }\n}\n')
        whole = scopes(mlir, WHOLE)
        assert [s[3] for s in whole].count("f") == 5, whole
        assert scopes(mlir, SMALL) == whole, shift
        hlo = (b"HloModule m\n\n%add (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0), sharding={replicated}\n"
               b"}\n\nENTRY %main.5 (p: f32[8]) -> f32[8] /*" + b"x" * (HEAD + shift) + b"*/ {\n"
               b"  ROOT %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}\n}\n")
        whole = scopes(hlo, WHOLE)
        assert [s[4:] for s in whole if s[4]] == [("add", False), ("main.5", True)], whole
        assert scopes(hlo, SMALL) == whole, shift


def test_check_of_a_dump_cut_after_an_opener_longer_than_the_window(tmp_path: Path) -> None:
    """At the real window (4 MiB), a module whose attributes run 5 MB, its file cut after a few of its
    lines: check reports the cut module, not "clean"."""
    p = tmp_path / "cut.mlir"
    p.write_bytes(b'module @n attributes {mhlo.frontend_attributes = {a = "' + b"x" * (5 << 20) + b'"}} {\n'
                  b'  sdy.mesh @mesh = <["a"=2]>\n  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n')
    r = run("check", str(p))
    assert r.code == 1 and "file ends inside module @n opened at line 1" in r.out and "clean" not in r.out, r.out[:500]


def _scopes(data: bytes, opts: dict[str, int]) -> list[tuple[object, ...]]:
    scan = native.scan_bytes(data, native.ScanOptions(**opts))
    return [(s.line, s.col, s.text, s.function, s.computation, s.entry) for s in native.iter_sites(scan, "x")]


_ARG = b'%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}'
_BODY = b'    %0 = sdy.sharding_constraint %a <@mesh, [{"a"}]> : tensor<8xf32>\n  }\n}\n'


def _function(line: bytes) -> bytes:
    return b'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n  func.func @g() {\n  }\n' + line + b"\n" + _BODY


def _computation(line: bytes) -> bytes:
    return (b"HloModule m\n\n%add (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0), sharding={replicated}\n}\n\n"
            + line + b"\n  ROOT %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}\n}\n")


# Long scope lines whose own sites (and the body's after them) take the scope the whole line says: an HLO
# computation's line (its final `{` says it), a `func.func` whose `@name` starts past the first window, and
# names longer than the kept head of a long line (kept whole, as the whole line's read keeps them).
LONG_OPENERS = {
    "computation": lambda pad: _computation(
        b"ENTRY %main.5 (p: f32[8]) -> f32[8] /* sharding={devices=[2]0,1} " + pad + b" sharding={replicated} */ {"),
    "function-name-late": lambda pad: _function(b"  func.func " + pad + b" @f(" + _ARG + b", " + _ARG + b") {"),
    "func-late": lambda pad: _function(b"  %c = \"" + pad + b"\" func.func @f(" + _ARG + b") {"),
    "function-name-long": lambda pad: _function(b"  func.func @f" + pad.replace(b"x", b"n") + b"(" + _ARG + b") {"),
    "computation-name-long": lambda pad: _computation(
        b"ENTRY %main" + pad.replace(b"x", b"n") + b" (p: f32[8]) -> f32[8] /* sharding={replicated} */ {"),
    "quoted-name-long": lambda pad: _function(b'  func.func @"f' + pad + b'\\"" (' + _ARG + b") {"),
}


@pytest.mark.parametrize("make", LONG_OPENERS.values(), ids=LONG_OPENERS.keys())
def test_a_long_scope_line_scopes_its_own_sites_and_its_body_s_as_the_whole_line_does(
    make: Callable[[bytes], bytes],
) -> None:
    for shift in range(0, PERIOD + 8, 3):
        data = make(b"x" * (HEAD + shift))
        whole = _scopes(data, WHOLE)
        named = [s for s in whole if s[3] not in (None, "g") or s[4] not in (None, "add")]
        assert len(named) >= 2, whole
        assert _scopes(data, SMALL) == whole, shift


def test_a_scope_name_longer_than_the_scan_keeps_is_an_error_not_another_name() -> None:
    """A function's name past a mebibyte on a long line: an OSError with its line and column, never the
    function under a shorter name."""
    data = _function(b"  func.func @f" + b"n" * (1 << 20) + b"(" + _ARG + b") {")
    assert {s[3] for s in _scopes(data, WHOLE)} >= {"f" + "n" * (1 << 20)}
    with pytest.raises(OSError, match=r"line 5, column 14: a function's or computation's name runs on past"):
        native.scan_bytes(data, native.ScanOptions(**SMALL))


def _manual(line: bytes) -> bytes:
    return (b'module @m {\n  sdy.mesh @mesh = <["x"=2]>\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n'
            + line + b"\n      sdy.return %a : tensor<4xf32>\n    } : (tensor<8xf32>) -> tensor<8xf32>\n"
            b"    return %0 : tensor<8xf32>\n  }\n}\n")


_OP = b"    %0 = sdy.manual_computation(%arg0)"
_IN, _OUT = b' in_shardings=[<@mesh, [{"x"}]>]', b' out_shardings=[<@mesh, [{"x"}]>]'
_AXES = b' manual_axes={"x"} (%a: tensor<4xf32>) {'

# A manual computation's line longer than the window, its lists before, between and after the long part: each
# list waits for its region's close, which gives it its types, as the whole line's do.
MANUAL = {
    "lists-first": lambda pad: _manual(_OP + _IN + _OUT + _AXES[:-1] + b'{a = "' + pad + b'"} {'),
    "lists-apart": lambda pad: _manual(_OP + _IN + b' {a = "' + pad + b'"}' + _OUT + _AXES),
    "lists-last": lambda pad: _manual(_OP + b' {a = "' + pad + b'"}' + _IN + _OUT + _AXES),
}


@pytest.mark.parametrize("make", MANUAL.values(), ids=MANUAL.keys())
def test_a_long_manual_computation_line_s_lists_take_their_region_s_types(make: Callable[[bytes], bytes]) -> None:
    def sites(data: bytes, opts: dict[str, int]) -> list[tuple[object, ...]]:
        scan = native.scan_bytes(data, native.ScanOptions(**opts))
        return [(s.kind, s.site, s.start, s.end, s.line, s.col, s.text, s.shapes)
                for s in native.iter_sites(scan, "x")]

    for shift in range(0, PERIOD + 8, 3):
        data = make(b"x" * (HEAD + shift))
        whole = sites(data, WHOLE)
        assert [s[7] for s in whole if s[1] in ("in_shardings", "out_shardings")] == [((8,),)] * 2, whole
        assert sites(data, SMALL) == whole, shift


def test_check_of_a_manual_computation_line_longer_than_the_window(tmp_path: Path) -> None:
    """At the real window (4 MiB), a 5 MB manual computation line whose ``in_shardings`` names more
    dimensions than its operand has: the rank mismatch is found, as on a short line."""
    p = tmp_path / "manual.mlir"
    bad = _IN.replace(b'[{"x"}]', b'[{"x"}, {}]')
    p.write_bytes(_manual(_OP + bad + _OUT + _AXES[:-1] + b'{a = "' + b"x" * (5 << 20) + b'"} {'))
    short = tmp_path / "short.mlir"
    short.write_bytes(_manual(_OP + bad + _OUT + _AXES))
    want = run("check", str(short))
    r = run("check", str(p))
    assert want.code == 1 and "rank" in want.out, want.out[:500]
    said = r.out.replace("manual.mlir", "short.mlir").split("\n")[:2]
    assert r.code == 1 and said == want.out.split("\n")[:2], r.out[:800]
