"""The columns the reference does not have: scope (function / computation and its entry), op (with a
custom call's target), parameter number and flags (ROOT, signature), read off real jax dumps."""

from __future__ import annotations

from pathlib import Path

from shardconv.scan import native
from shardconv.scan.sites import SiteKind, ValueSite


def _sites(paths: list[Path], name: str) -> list[ValueSite]:
    path = next(p for p in paths if p.name == name)
    return list(native.iter_sites(native.scan_path(str(path)), str(path)))


def test_compiled_hlo(jax_dump_files: list[Path]) -> None:
    params = [s for s in _sites(jax_dump_files, "compiled.hlo") if s.kind is SiteKind.HLO]
    assert params and all(s.op == "parameter" and s.entry and s.computation for s in params)
    assert [s.param for s in params] == list(range(len(params)))
    assert all(s.function is None and not s.signature for s in params)


def test_lowered_mlir(jax_dump_files: list[Path]) -> None:
    sites = _sites(jax_dump_files, "lowered.mlir")
    args = [s for s in sites if s.kind is SiteKind.SDY_SHARDING]
    assert args and all(s.function == "main" and s.entry and s.signature and s.op == "func.func" for s in args)
    constraint = [s for s in sites if s.kind is SiteKind.SDY_SHARDING_BARE]
    assert [s.op for s in constraint] == ["sdy.sharding_constraint"]
    mesh = [s for s in sites if s.kind is SiteKind.SDY_MESH]
    assert mesh and all(s.function is None and s.op == "sdy.mesh" for s in mesh)
    header = [s for s in sites if s.kind is SiteKind.MODULE_START]
    assert header and header[0].op is None and header[0].function is None


def test_pass_dumps(jax_dump_files: list[Path]) -> None:
    sites = [s for p in jax_dump_files for s in native.iter_sites(native.scan_path(str(p)), str(p))]
    ops = {s.op for s in sites}
    assert "custom-call Sharding" in ops
    assert "stablehlo.custom_call @Sharding" in ops or "custom-call Sharding" in ops
    assert any(s.root for s in sites) and not any(s.root and s.function for s in sites)
    assert any(s.computation and not s.entry for s in sites) or any(s.entry for s in sites)


def test_scopes_reset_at_modules() -> None:
    text = (
        b"HloModule a\n\nENTRY %main.1 (p: f32[8]) -> f32[8] {\n"
        b"  ROOT %p = f32[8]{0} parameter(0), sharding={replicated}\n}\n\n"
        b"HloModule b, num_partitions=2\n\n%comp.2 (q: f32[4]) -> f32[4] {\n"
        b"  %q = f32[4]{0} parameter(3), sharding={maximal device=0}\n}\n"
    )
    sites = [s for s in native.iter_sites(native.scan_bytes(text), "<t>") if s.kind is not SiteKind.MODULE_START]
    first, np, second = sites
    assert (first.computation, first.entry, first.root, first.param) == ("main.1", True, True, 0)
    assert (np.computation, np.value) == (None, "module")
    assert (second.computation, second.entry, second.root, second.param) == ("comp.2", False, False, 3)


def test_lines_counts_every_line_break(jax_dump_files: list[Path]) -> None:
    """``Scan.lines`` is the line breaks of all that was scanned: small reads, a line longer than the
    longest kept whole (read in windows), CRLF, no break at the end; a skipped file's head counts none."""
    scanned = 0
    for path in jax_dump_files:
        data, scan = path.read_bytes(), native.scan_path(str(path))
        want = 0 if scan.kind == "skip" else data.count(b"\n")
        scanned += scan.kind != "skip"
        assert scan.lines == want and native.scan_bytes(data, native.ScanOptions(chunk=97)).lines == want, path
    assert scanned >= 3
    long = b"module {\n  %0 = sdy.reshard %a <@m, [{}]> {x = \"" + b"y" * 5000 + b"\"}\r\n  %1 = f\n}"
    assert native.scan_bytes(long, native.ScanOptions(max_line=1024, overlap=256)).lines == long.count(b"\n") == 3
    assert native.scan_bytes(b"\0binary\n" * 10).lines == 0


def test_sites_of_a_column_within_a_range_are_those_a_full_read_finds(jax_dump_files: list[Path]) -> None:
    from shardconv.scan.columns import kind_flags, site_column, sites_of, values_of_kind

    found = 0
    for path in jax_dump_files:
        scan = native.scan_path(str(path))
        names = site_column(scan, "name")
        n = len(names)
        for lo, hi in ((0, n), (n // 3, n), (n // 4, 3 * n // 4)):
            for nid in set(names[lo:hi][:20]):
                want = [i for i in range(lo, hi) if names[i] == nid]
                assert sites_of(scan, (nid,), "name", range(lo, hi)) == want
        kinds = [v[0] for v in scan.values]
        hlo = {i for i, k in enumerate(kinds) if list(SiteKind)[k] is SiteKind.HLO}
        assert values_of_kind(scan, (SiteKind.HLO,)) == hlo
        assert list(kind_flags(scan, (SiteKind.HLO,))) == [int(i in hlo) for i in range(len(kinds))]
        found += len(hlo)
    assert found  # (the compiled module's shardings are HLO values)
