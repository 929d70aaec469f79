"""Checks the occurrences of one file against the rules in ``findings.RULES``. Streaming: per-value
checks run as occurrences arrive (memoised per distinct string and file state); file-level checks
(synthetic meshes, lit expectations) run at the end on small summaries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from shardconv.core.errors import NotExpressibleError, ShardingError
from shardconv.core.model import HloSharding, Kind as HloKind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.check.findings import RULES, FileReport, Finding, excerpt_of
from shardconv.check.occurrences import Kind, Occurrence
from shardconv.check.scanner import KEYWORDS
from shardconv.check.templates import Templates
from shardconv.check.values import error_col, parse_value

_SYNTHETIC = re.compile(r"_axis_\d+")
_HLO_PAIR_SITES = frozenset({"sharding=", "mhlo.sharding"})
_SDY_PAIR_SITES = frozenset({"xla.sdy.sharding", "sdy.sharding"})
MAX_USERS = 8
MEMO_LINES = 1 << 16
# What varies between otherwise identical lines: SSA names and source locations. Two lines equal after
# removing these carry the same values on the same types, so they get the same verdict.
_SSA_NAMES = re.compile(rb"%[^\s,():\[\]{}<>=]+")
_LOCATIONS = re.compile(rb"source_line=\d+|stack_frame_id=\d+|parameter\(\d+\)|#loc\d+")
_STATEFUL = frozenset({Kind.SDY_MESH, Kind.NUM_PARTITIONS, Kind.EXPECTED_ERROR, Kind.SDY_PER_VALUE_LIST})


@dataclass(frozen=True)
class CheckOptions:
    mesh: Mesh | None = None
    allowed_meshes: tuple[tuple[int, ...], ...] | None = None
    warn_only: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    max_per_rule: int = 200


@dataclass(frozen=True)
class Issue:
    """A finding before it has a place: what memoised checks return."""

    rule: str
    message: str
    col_offset: int | None = None  # relative to the occurrence; None = its start
    notes: tuple[str, ...] = ()
    fixable: bool = False


@dataclass
class _SyntheticMesh:
    """A ``_axis_N`` mesh declaration and the shardings that use it (first few, distinct)."""

    name: str
    mesh: Mesh
    occ: Occurrence
    users: list[tuple[Occurrence, TensorSharding | TensorShardingPerValue]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)


def is_synthetic(mesh: Mesh) -> bool:
    """XLA's invented meshes name their axes ``_axis_0``, ``_axis_1``, ..."""
    return bool(mesh.axes) and all(_SYNTHETIC.fullmatch(a.name) for a in mesh.axes)



class FileChecker:
    """Feed occurrences in file order with ``add``; ``finish`` returns the report."""

    def __init__(self, path: str, kind: str, opts: CheckOptions) -> None:
        self.path, self.kind, self.opts = path, kind, opts
        self.findings: list[Finding] = []
        self.per_rule: dict[str, int] = {}
        self.dropped = 0
        self.count = 0
        self.meshes: dict[str, Mesh] = {}
        self.mesh_counts: list[tuple[int, Occurrence]] = []
        self.num_partitions: int | None = None
        self.synthetic: list[_SyntheticMesh] = []
        self.current_synthetic: dict[str, _SyntheticMesh] = {}
        self.expected_lines: set[int] = set()
        self.deferred: list[tuple[Occurrence, TensorSharding | TensorShardingPerValue]] = []
        self.hlo_seen: dict[str, tuple[Occurrence, HloSharding]] = {}
        self.version = 0
        self.memo: dict[tuple[object, ...], tuple[Issue, ...]] = {}
        self.pair_line = -1
        self.pairs: dict[str | None, dict[str, tuple[Occurrence, object]]] = {}
        self.line_memo: dict[bytes, tuple[int, int]] = {}
        self.open_line: tuple[bytes, bytes, int, int, int] | None = None
        self.memoizable = True
        self.templates = Templates(KEYWORDS)

    # ---- repeated lines ----------------------------------------------------------------------
    def gate(self, text: bytes) -> bool:
        """Scanner callback before a line is scanned: True when an identical line (up to SSA names
        and locations) was already found clean in the same file state; its values are counted."""
        if self.pairs:
            self._flush_pairs()
        if self.open_line is not None:
            self._close_line()
        sig = _SSA_NAMES.sub(b"%", text)
        if b"source_line" in sig or b"parameter(" in sig or b"#loc" in sig or b"stack_frame_id" in sig:
            sig = _LOCATIONS.sub(b"", sig)
        hit = self.line_memo.get(sig)
        if hit is not None and hit[0] == self.version:
            self.count += hit[1]
            return True
        self.open_line = (text, sig, self.version, self._issued(), self.count)
        self.memoizable = True
        return False

    def vouch(self, region: bytes | memoryview) -> bool:
        """Scanner callback before a region of complete lines is scanned: True when every keyword
        line in it is a repeat of a clean line (the gate would pass them all); they are counted."""
        if self.pairs:
            self._flush_pairs()
        self._close_line()
        n = self.templates.cover(region, self.version)
        if n is None:
            return False
        self.count += n
        return True

    def _issued(self) -> int:
        return sum(self.per_rule.values()) + len(self.deferred)

    def _close_line(self) -> None:
        if self.open_line is None:
            return
        text, sig, version, issued, count = self.open_line
        self.open_line = None
        if self.memoizable and version == self.version and issued == self._issued():
            if len(self.line_memo) >= MEMO_LINES:
                self.line_memo.clear()
            self.line_memo[sig] = (version, self.count - count)
            self.templates.learn(text, self.count - count, version)

    # ---- intake ------------------------------------------------------------------------------
    def add_all(self, occs: Iterable[Occurrence]) -> FileReport:
        for o in occs:
            self.add(o)
        return self.finish()

    def add(self, occ: Occurrence) -> None:
        if occ.kind is Kind.EXPECTED_ERROR:
            self.memoizable = False
            if occ.target_line is not None:
                self.expected_lines.add(occ.target_line)
            return
        self.count += 1
        if occ.kind in _STATEFUL:
            self.memoizable = False
        if occ.line != self.pair_line:
            self._flush_pairs()
            self.pair_line = occ.line
        value, err = parse_value(occ.kind, occ.text, occ.data)
        if err is not None:
            rule = "syntax" if type(err).__name__ == "ShardingSyntaxError" else "verify"
            self._report(occ, Issue(rule, _what(occ) + err.message), col=error_col(occ, err))
            return
        if occ.kind is Kind.SDY_MESH:
            self._mesh(occ, value)  # type: ignore[arg-type]
        elif occ.kind is Kind.NUM_PARTITIONS:
            self._num_partitions(occ, value)  # type: ignore[arg-type]
        elif occ.kind is Kind.HLO:
            self._hlo(occ, value)  # type: ignore[arg-type]
        elif occ.kind is Kind.UNSPECIFIED_DIMS:
            self._unspecified(occ, value)  # type: ignore[arg-type]
        elif occ.kind is not Kind.MANUAL_AXES:
            self._sdy(occ, value)  # type: ignore[arg-type]

    # ---- per kind ----------------------------------------------------------------------------
    def _mesh(self, occ: Occurrence, mesh: Mesh) -> None:
        from shardconv.formats.sdy.verify import verify_mesh

        try:
            verify_mesh(mesh)
        except ShardingError as e:
            self._report(occ, Issue("verify", f"mesh {occ.value or ''}: {e.message}".replace(" :", ":")))
            return
        name = occ.mesh_name
        if name is not None:
            mesh = replace(mesh, name=name)
            self.meshes[name] = mesh
            self.version += 1
            self.current_synthetic.pop(name, None)
        label = f"mesh {occ.value} = {mesh}" if occ.value else f"mesh {mesh}"
        if mesh.axes:
            self._device_count(occ, mesh.num_devices, label)
        if is_synthetic(mesh):
            rec = _SyntheticMesh(name or "", mesh, occ)
            self.synthetic.append(rec)
            if name is not None:
                self.current_synthetic[name] = rec
        elif self.opts.mesh is not None and mesh.axes and not _same_mesh(mesh, self.opts.mesh):
            self._report(occ, Issue("mesh-mismatch", f"{label} differs from --mesh {self.opts.mesh}"))
        allowed = self.opts.allowed_meshes
        if allowed is not None and mesh.axes and tuple(mesh.axis_sizes) not in allowed:
            shapes = ", ".join("x".join(map(str, s)) for s in allowed)
            self._report(
                occ,
                Issue(
                    "mesh-not-allowed",
                    f"{label} has shape {mesh.sizes_text()}, which is not an allowed mesh ({shapes}); "
                    "a backend that validates meshes fails with 'Mesh is not valid'",
                ),
            )

    def _num_partitions(self, occ: Occurrence, n: int) -> None:
        self.num_partitions = n
        self.version += 1
        for count, mocc in self.mesh_counts:
            if count != n:
                self._report(
                    occ,
                    Issue("device-count-mismatch", f"num_partitions is {n} but the mesh on line {mocc.line} has {count} devices"),
                )
                break

    def _device_count(self, occ: Occurrence, count: int, label: str) -> None:
        if self.num_partitions is not None and count != self.num_partitions:
            self._report(
                occ,
                Issue("device-count-mismatch", f"{label} has {count} devices but num_partitions is {self.num_partitions}"),
            )
        elif self.num_partitions is None:
            other = next(((c, o) for c, o in self.mesh_counts if c != count), None)
            if other is not None:
                self._report(
                    occ,
                    Issue("device-count-mismatch", f"{label} has {count} devices but the mesh on line {other[1].line} has {other[0]}"),
                )
        self.mesh_counts.append((count, occ))

    def _hlo(self, occ: Occurrence, hlo: HloSharding) -> None:
        key = ("hlo", occ.text, occ.data, occ.ranks, self.version)
        issues = self.memo.get(key)
        if issues is None:
            issues = self.memo[key] = tuple(self._hlo_issues(hlo, occ.ranks))
        for issue in issues:
            self._report(occ, issue)
        if hlo.kind in (HloKind.TILED, HloKind.TUPLE) and len(self.hlo_seen) < 64:
            self.hlo_seen.setdefault(str(hlo), (occ, hlo))
        if occ.site in _HLO_PAIR_SITES:
            self.pairs.setdefault(occ.value, {})["hlo"] = (occ, hlo)

    def _hlo_issues(self, hlo: HloSharding, ranks: tuple[int | None, ...] | None) -> list[Issue]:
        out: list[Issue] = []
        if hlo.kind is HloKind.TUPLE:
            if ranks is not None and len(ranks) != len(hlo.elements):
                out.append(Issue("rank-mismatch", f"tuple sharding has {len(hlo.elements)} elements but the value has {len(ranks)}"))
            elif ranks is not None:
                for i, (e, r) in enumerate(zip(hlo.elements, ranks)):
                    if e.rank is not None and r is not None and e.rank != r:
                        out.append(Issue("rank-mismatch", f"tuple element {i} {e} is for rank {e.rank} but the tensor has rank {r}"))
        elif ranks is not None and len(ranks) == 1 and hlo.rank is not None and ranks[0] is not None and hlo.rank != ranks[0]:
            out.append(Issue("rank-mismatch", f"sharding {hlo} is for rank {hlo.rank} but the tensor has rank {ranks[0]}"))
        n = self.num_partitions
        if n is not None:
            out.extend(_device_issues(hlo, n))
        mesh = self.opts.mesh
        if mesh is not None and hlo.kind in (HloKind.TILED, HloKind.TUPLE) and _devices_of(hlo) in (None, mesh.num_devices):
            from shardconv.convert import to_sdy_manual

            rank = ranks[0] if ranks is not None and len(ranks) == 1 else None
            try:
                to_sdy_manual(hlo, mesh, rank=None if hlo.kind is HloKind.TUPLE else rank)
            except NotExpressibleError as e:
                notes = tuple(f"try: {s.description}" + (f" {s.value}" if s.value else "") for s in e.suggestions)
                out.append(Issue("not-expressible", f"{hlo} has no equivalent on --mesh {mesh}: {e.message}", notes=notes))
            except ShardingError:
                pass
        return out

    def _unspecified(self, occ: Occurrence, dims: tuple[int, ...]) -> None:
        rank = occ.rank
        bad = [d for d in dims if d < 0 or (rank is not None and d >= rank)]
        if bad:
            self._report(occ, Issue("unspecified-dims", f"unspecified_dims {list(dims)} name dim {bad[0]} but the tensor has rank {rank}"))

    def _sdy(self, occ: Occurrence, s: TensorSharding | TensorShardingPerValue) -> None:
        names = _mesh_names(s)
        if any(n not in self.meshes for n in names):
            if len(self.deferred) < 1000:
                self.deferred.append((occ, s))
            return
        self._check_sdy(occ, s)
        for n in names:
            rec = self.current_synthetic.get(n)
            if rec is not None and len(rec.users) < MAX_USERS and occ.text not in rec.seen:
                rec.seen.add(occ.text)
                rec.users.append((occ, s))
        if occ.site in _SDY_PAIR_SITES and occ.kind in (Kind.SDY_SHARDING, Kind.SDY_PER_VALUE):
            self.pairs.setdefault(occ.value, {})["sdy"] = (occ, s)

    def _check_sdy(self, occ: Occurrence, s: TensorSharding | TensorShardingPerValue) -> None:
        key = ("sdy", occ.kind, occ.text, occ.ranks, self.version)
        issues = self.memo.get(key)
        if issues is None:
            issues = self.memo[key] = tuple(self._sdy_issues(s, occ.ranks))
        for issue in issues:
            self._report(occ, issue)

    def _sdy_issues(self, s: TensorSharding | TensorShardingPerValue, ranks: tuple[int | None, ...] | None) -> list[Issue]:
        from shardconv.formats.sdy.verify import verify

        try:
            verify(s, self.meshes)
        except ShardingError as e:
            return [Issue("verify", e.message)]
        if ranks is None:
            return []
        if isinstance(s, TensorShardingPerValue):
            if len(ranks) != len(s.shardings):
                return [Issue("rank-mismatch", f"{len(s.shardings)} shardings for {len(ranks)} values")]
            return [
                Issue("rank-mismatch", f"sharding {i} has rank {x.rank} but the tensor has rank {r}")
                for i, (x, r) in enumerate(zip(s.shardings, ranks))
                if r is not None and x.rank != r and not _is_maximal(x, self.meshes)
            ]
        if len(ranks) == 1 and ranks[0] is not None and s.rank != ranks[0] and not _is_maximal(s, self.meshes):
            return [Issue("rank-mismatch", f"sharding rank {s.rank} does not match the tensor rank {ranks[0]}")]
        return []

    # ---- round trips -------------------------------------------------------------------------
    def _flush_pairs(self) -> None:
        pairs, self.pairs = self.pairs, {}
        for entry in pairs.values():
            if "hlo" in entry and "sdy" in entry:
                self._roundtrip(entry["hlo"], entry["sdy"])  # type: ignore[arg-type]

    def _roundtrip(self, h: tuple[Occurrence, HloSharding], s: tuple[Occurrence, TensorSharding | TensorShardingPerValue]) -> None:
        from shardconv.convert import same_assignment, to_hlo

        (hocc, hlo), (socc, sdy) = h, s
        if isinstance(sdy, TensorShardingPerValue) and not hlo.is_tuple and len(sdy.shardings) == 1:
            sdy = sdy.shardings[0]
        key = ("rt", hocc.text, hocc.data, socc.text, self.version)
        issues = self.memo.get(key)
        if issues is None:
            try:
                exported = to_hlo(sdy, self.meshes)
                same = same_assignment(exported, hlo)
            except ShardingError:
                same, exported = True, hlo
            issues = () if same else (
                Issue(
                    "roundtrip-mismatch",
                    f"{hocc.site} {hlo} disagrees with {socc.site} {socc.text} (column {socc.col}), "
                    f"which XLA exports as {exported}",
                ),
            )
            self.memo[key] = issues
        for issue in issues:
            self._report(hocc, issue)

    # ---- end of file -------------------------------------------------------------------------
    def finish(self) -> FileReport:
        self._flush_pairs()
        for occ, s in self.deferred:
            if all(n in self.meshes for n in _mesh_names(s)):
                self._check_sdy(occ, s)
        for rec in self.synthetic:
            self._synthetic(rec)
        if not self.synthetic and not self.meshes:
            self._predict_import()
        findings = sorted(
            (replace(f, expected=True) if f.line in self.expected_lines else f for f in self.findings),
            key=lambda f: (f.line, f.col, f.rule),
        )
        return FileReport(self.path, self.kind, tuple(findings), self.count, self.dropped)

    def global_mesh(self, count: int) -> Mesh | None:
        """The real mesh: --mesh, else a non-synthetic mesh of the file with the same device count."""
        if self.opts.mesh is not None:
            return self.opts.mesh
        return next((m for m in self.meshes.values() if m.axes and not is_synthetic(m) and m.num_devices == count), None)

    def _synthetic(self, rec: _SyntheticMesh) -> None:
        from shardconv.check.diagnose import explain_synthetic

        glob = self.global_mesh(rec.mesh.num_devices)
        issue = explain_synthetic(rec.mesh, rec.name, rec.users, glob)
        self._report(rec.occ, issue)

    def _predict_import(self) -> None:
        from shardconv.check.diagnose import predict_import

        if self.opts.mesh is None or not self.hlo_seen:
            return
        found = predict_import(list(self.hlo_seen.values()), self.opts.mesh)
        if found is not None:
            occ, issue = found
            self._report(occ, issue)

    # ---- output ------------------------------------------------------------------------------
    def _report(self, occ: Occurrence, issue: Issue, *, col: int | None = None) -> None:
        rule = RULES[issue.rule]
        if rule.id in self.opts.ignore:
            return
        n = self.per_rule.get(rule.id, 0)
        self.per_rule[rule.id] = n + 1
        if n >= self.opts.max_per_rule:
            self.dropped += 1
            return
        severity = "warning" if rule.id in self.opts.warn_only else rule.severity
        c = col if col is not None else occ.col + (issue.col_offset or 0)
        excerpt, caret = excerpt_of(occ.line_text, c)
        self.findings.append(
            Finding(
                rule=rule.id, severity=severity, path=self.path, line=occ.line, col=c, message=issue.message,
                end_line=occ.end_line, end_col=occ.end_col, excerpt=excerpt, excerpt_col=caret, notes=issue.notes,
                fixable=issue.fixable,
            )
        )


def _what(occ: Occurrence) -> str:
    return f"{occ.site}: " if occ.site else ""


def _same_mesh(a: Mesh, b: Mesh) -> bool:
    return a.axes == b.axes and a.device_ids == b.device_ids


def _mesh_names(s: TensorSharding | TensorShardingPerValue) -> tuple[str, ...]:
    items = s.shardings if isinstance(s, TensorShardingPerValue) else (s,)
    return tuple(x.mesh for x in items if isinstance(x.mesh, str))


def _is_maximal(s: TensorSharding, meshes: dict[str, Mesh]) -> bool:
    m = s.mesh if isinstance(s.mesh, Mesh) else meshes.get(s.mesh)
    return m is not None and (m.is_maximal or m.is_empty) and not s.dims


def _devices_of(hlo: HloSharding) -> int | None:
    if hlo.kind is HloKind.TUPLE:
        counts = {_devices_of(e) for e in hlo.elements} - {None}
        return counts.pop() if len(counts) == 1 else None
    return hlo.tile.num_devices if hlo.tile is not None else None


def _device_issues(hlo: HloSharding, n: int) -> list[Issue]:
    if hlo.kind is HloKind.TUPLE:
        return [i for e in hlo.elements for i in _device_issues(e, n)][:1]
    if hlo.kind is HloKind.MAXIMAL and hlo.device is not None and hlo.device >= n:
        return [Issue("device-out-of-range", f"{hlo} uses device {hlo.device} but num_partitions is {n}")]
    if hlo.tile is None:
        return []
    t = hlo.tile
    top = t.num_devices - 1 if t.is_iota else max(t.devices)
    if top >= n:
        return [Issue("device-out-of-range", f"{hlo} uses device {top} but num_partitions is {n} (ids 0..{n - 1})")]
    if t.num_devices != n:
        return [Issue("device-count-mismatch", f"{hlo} spans {t.num_devices} devices but num_partitions is {n}")]
    return []


__all__ = ["CheckOptions", "FileChecker", "Issue", "is_synthetic"]
