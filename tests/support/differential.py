"""The differential harness: one dump read by the native core and by the reference scanner
(tests/support/reference_scan), compared site for site, group for group."""

from __future__ import annotations

import io
import re
import tempfile
from dataclasses import dataclass, fields, replace
from pathlib import Path

from shardconv.scan import native
from shardconv.scan.sites import RECORD_KINDS, SiteKind, ValueSite
from support.reference_scan.dedup import modules, signature
from support.reference_scan.lines import CHUNK, MAX_LINE, OVERLAP, ReadOptions, read_sites
from support.reference_scan.suppress import SuppressionScanner

COMPARED = [f.name for f in fields(ValueSite) if f.compare]


@dataclass(frozen=True)
class Options:
    chunk: int = CHUNK
    max_line: int = MAX_LINE
    overlap: int = OVERLAP


@dataclass
class Outcome:
    kind: tuple[str, str]
    sites: list[ValueSite]  # the native outcome leaves out the record kinds (RECORD_KINDS): the reference has none
    suppressions: list[tuple[int, int, tuple[str, ...], str, int]]
    modules: list[tuple[int, list[tuple[object, int, int]], list[tuple[object, object, int]], frozenset[int], int]]


def reference(data: bytes, opts: Options = Options()) -> Outcome:
    stream = SuppressionScanner(io.BytesIO(data))  # type: ignore[arg-type]
    ro = ReadOptions(repeats=False, chunk=opts.chunk, max_line=opts.max_line, overlap=opts.overlap)
    kind, items = read_sites(stream, "<t>", ro)
    sites = list(items)  # repeats off: every item is a ValueSite
    index = {id(s): i for i, s in enumerate(sites)}
    mods = []
    for m in modules(sites):
        values = [(signature(v.site), index[id(v.site)], v.count) for v in m.values]
        pairs = [(signature(p.hlo.site), signature(p.sdy.site), p.count) for p in m.pairs]
        expected = frozenset(map(_target, m.expected_lines))
        mods.append((m.index, values, pairs, expected, m.total))
    supp = [(s.line, s.col, s.rules, s.source, s.source_col) for s in stream.found]
    return Outcome((kind.kind, kind.reason), sites, supp, mods)


def native_only(site: ValueSite) -> bool:
    """Forms only the native core reads (the reference predates them), left out of the comparison and
    tested on their own (tests/scan/test_new_forms.py): a collective's axes, and an HLO collective's
    inline replica-group mesh."""
    return site.kind is SiteKind.COLLECTIVE_AXES or (
        site.kind is SiteKind.COLLECTIVE_MESH and site.site == "replica_groups="
    )


_HLO_REPLICA_MESH = re.compile(rb"replica_groups=mesh\[[^\]\n]*\](?: \{[^}\n]*\})?")


def without_new_forms(data: bytes) -> bytes:
    """``data`` with the HLO replica-group meshes (a native-only form jax's compiled HLO holds) written as
    empty replica groups, for whole-pipeline differentials whose counts include every site."""
    return _HLO_REPLICA_MESH.sub(b"replica_groups={}", data)


def _without_native_only(sites: list[ValueSite], mods):  # type: ignore[no-untyped-def]
    """``sites`` and ``mods`` (native_modules' shape) with the native-only sites dropped and renumbered."""
    renumber: dict[int, int] = {}
    kept: list[ValueSite] = []
    for i, s in enumerate(sites):
        if not native_only(s):
            renumber[i] = len(kept)
            kept.append(s)
    out = []
    for index, values, held, expected, total in mods:
        dropped = sum(n for _, at, n in values if at not in renumber)
        values = [(sig, renumber[at], n) for sig, at, n in values if at in renumber]
        out.append((index, values, held, expected, total - dropped))
    return kept, out


def native_outcome(data: bytes, opts: Options = Options(), *, via: str = "bytes") -> Outcome:
    kw = {"chunk": opts.chunk, "max_line": opts.max_line, "overlap": opts.overlap}
    if via == "bytes":
        scan = native.scan_bytes(data, native.ScanOptions(**kw))
    elif via == "path":  # read_all's reads straight into the buffer
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "dump"
            path.write_bytes(data)
            scan = native.scan_path(str(path), native.ScanOptions(**kw))
    else:
        scan = native.scan_stream(io.BytesIO(data), native.ScanOptions(**kw))
    every = list(native.iter_sites(scan, "<t>"))
    sites = [s for s in every if s.kind not in RECORD_KINDS]
    renumber = {i: n for n, i in enumerate(i for i, s in enumerate(every) if s.kind not in RECORD_KINDS)}
    supp = [
        (
            line,
            col,
            tuple(r.strip() for r in rules.decode("utf-8", "replace").split(",") if r.strip()),
            text.decode("utf-8", "backslashreplace"),
            c,
        )
        for line, col, rules, text, c in scan.suppressions
    ]
    mods = [(m, [(sig, renumber[at], n) for sig, at, n in values], held, exp, total)
            for m, values, held, exp, total in native_modules(scan, every)]
    kept, mods = _without_native_only(sites, mods)
    return Outcome((scan.kind, scan.reason), kept, supp, mods)


def native_modules(scan, sites: list[ValueSite]):  # type: ignore[no-untyped-def]
    """The reference's ``dedup.modules`` from the native groups and pairs (groups merged by signature)."""
    count = max(1, scan.modules)
    first: list[dict[object, int]] = [{} for _ in range(count)]
    counts: list[dict[object, int]] = [{} for _ in range(count)]
    of_group = []
    for module, _value, _shapes, _name, at, n in scan.groups:
        sig = signature(sites[at])
        of_group.append(sig)
        seen = first[module].get(sig)
        first[module][sig] = at if seen is None else min(seen, at)
        counts[module][sig] = counts[module].get(sig, 0) + n
    pairs: list[dict[tuple[object, object], int]] = [{} for _ in range(count)]
    for module, h, s, n in scan.pairs:
        key = (of_group[h], of_group[s])
        pairs[module][key] = pairs[module].get(key, 0) + n
    expected: list[set[int]] = [set() for _ in range(count)]
    mod_col = memoryview(scan.columns["module"]).cast("I")
    for i, s in enumerate(sites):
        if s.kind is SiteKind.EXPECTED_ERROR and s.target_line is not None:
            expected[mod_col[i]].add(s.target_line)
    out = []
    for index in range(count):
        values = [(sig, at, counts[index][sig]) for sig, at in sorted(first[index].items(), key=lambda kv: kv[1])]
        held = [(h, s, n) for (h, s), n in pairs[index].items()]
        out.append((index, values, held, frozenset(expected[index]), sum(counts[index].values())))
    return out


TARGET_MAX = 0xFFFF_FFFE  # the native target column is u32: a marker pointing above line 1 says 0


def _target(t: int | None) -> int | None:
    return None if t is None else min(max(t, 0), TARGET_MAX)


def product_modules(data: bytes, opts: Options = Options()) -> list[object]:
    """The product's own fold of the native groups (``shardconv.scan.modules.module_values``)."""
    from shardconv.scan.modules import module_values

    scan = native.scan_bytes(data, native.ScanOptions(chunk=opts.chunk, max_line=opts.max_line, overlap=opts.overlap))
    return [
        (
            m.index,
            [(signature(v.site), v.count) for v in m.values if not native_only(v.site)],
            [(signature(p.hlo.site), signature(p.sdy.site), p.count) for p in m.pairs],
            frozenset(m.expected_lines),
            m.total - sum(v.count for v in m.values if native_only(v.site)),
        )
        for m in module_values(scan, "<t>")
    ]


def site_diff(a: ValueSite, b: ValueSite) -> list[str]:
    if a.target_line is not None and _target(a.target_line) != a.target_line:
        a = replace(a, target_line=_target(a.target_line))
    out = [f"{f}: {getattr(a, f)!r} != {getattr(b, f)!r}" for f in COMPARED if getattr(a, f) != getattr(b, f)]
    return out


def differences(data: bytes, opts: Options = Options(), *, line_text: bool = True, via: str = "bytes") -> list[str]:
    """Where the native scan and the reference differ on ``data`` (empty: they agree)."""
    ref = reference(data, opts)
    nat = native_outcome(data, opts, via=via)
    out: list[str] = []
    if ref.kind != nat.kind:
        out.append(f"sniff: {ref.kind} != {nat.kind}")
    for i, (a, b) in enumerate(zip(ref.sites, nat.sites)):
        d = site_diff(a, b)
        if d:
            out.append(f"site {i} ({a.kind.value} line {a.line}): " + "; ".join(d))
            break
    if len(ref.sites) != len(nat.sites):
        out.append(f"{len(ref.sites)} sites != {len(nat.sites)}")
    if line_text and not out:
        firsts = {at for m in nat.modules for _, at, _ in m[1]}
        for i, s in enumerate(ref.sites):
            wanted = i in firsts or s.kind in (SiteKind.MODULE_START, SiteKind.EXPECTED_ERROR)
            if wanted and nat.sites[i].line_text != s.line_text:
                out.append(f"line_text {i}: {s.line_text[:80]!r} != {nat.sites[i].line_text[:80]!r}")
                break
    if ref.suppressions != nat.suppressions:
        out.append(f"suppressions: {ref.suppressions[:3]} != {nat.suppressions[:3]}")
    if not out:
        product = product_modules(data, opts)
        want = [(i, [(sig, c) for sig, _, c in v], pr, e, t) for i, v, pr, e, t in ref.modules]
        if product != want:
            out.append(f"scan.modules.module_values: {product[:2]} != {want[:2]}"[:2000])
    if not out and ref.modules != nat.modules:
        rm, nm = ref.modules, nat.modules
        if len(rm) != len(nm):
            out.append(f"{len(rm)} modules != {len(nm)}")
        for a, b in zip(rm, nm):
            if a != b:
                out.append(f"module {a[0]}: {a} != {b}"[:2000])
                break
    return out
