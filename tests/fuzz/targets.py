"""Every entry point the fuzzers drive, each wrapped with the three invariants: only ShardingError
escapes, the work stays within the time budget, and an accepted input prints back to text that parses
to the same model. ``run_case`` returns whether the input was accepted; a violation raises Violation."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any

from shardconv.core.errors import ShardingError
from shardconv.core.model import (
    HloSharding,
    Mesh,
    TensorSharding,
    TensorShardingPerValue,
)

FLOOR_MS = 50.0  # constant allowance per case (interpreter overhead, first use of a code path)
MS_PER_KB = 100.0


class Violation(AssertionError):
    """An invariant broke: a non-ShardingError escaped, a case was too slow, or a round trip drifted."""


def _parsers() -> dict[str, Callable[[Any], Any]]:
    from shardconv import formats as parsing

    return {
        "hlo": parsing.parse_hlo, "sdy": parsing.parse_sdy, "per_value": parsing.parse_sdy_per_value,
        "mesh": parsing.parse_mesh, "manual_axes": parsing.parse_manual_axes, "spec": parsing.parse_partition_spec,
    }


def print_back(entry: str, value: Any) -> str:
    """The printer that matches ``entry`` (metadata included so nothing is dropped)."""
    from shardconv.formats.hlo.write import print_hlo
    from shardconv.formats.sdy.write import (
        print_manual_axes,
        print_mesh,
        print_sharding,
        print_sharding_per_value,
    )
    from shardconv.formats.spec.write import print_partition_spec

    if entry == "hlo":
        return print_hlo(value, include_metadata=True)
    if entry == "sdy":
        return print_sharding(value)
    if entry == "per_value":
        return print_sharding_per_value(value)
    if entry == "mesh":
        return print_mesh(value, form="decl" if value.name else "bare")
    if entry == "manual_axes":
        return print_manual_axes(value)
    return print_partition_spec(value)


MESHES = ('<["batch"=2, "model"=4]>', '<["x"=2, "y"=4, "z"=4]>', '<["a"=2, "b"=2], device_ids=[3, 1, 2, 0]>')


def _meshes() -> list[Mesh]:
    from shardconv.formats import parse_mesh

    return [parse_mesh(m) for m in MESHES]


def _named_mesh(s: TensorSharding | TensorShardingPerValue) -> Mesh:
    """A mesh holding every axis name ``s`` uses (size 4), so to_hlo gets past name resolution."""
    from shardconv.core.model import MeshAxis

    items = s.shardings if isinstance(s, TensorShardingPerValue) else (s,)
    names: dict[str, None] = {}
    for x in items:
        for d in x.dims:
            names.update((a.name, None) for a in d.axes)
        names.update((a.name, None) for a in (*x.replicated, *x.unreduced))
    return Mesh.of([MeshAxis(n, 4) for n in list(names)[:6]])


def convert(entry: str, value: Any) -> None:
    """The converters on an accepted value: to_sdy on real meshes, to_hlo, partition specs."""
    from shardconv.convert import from_partition_spec, to_hlo, to_sdy

    guard = [
        lambda: None,
    ]
    if entry == "hlo" and isinstance(value, HloSharding):
        for mesh in _meshes():
            guard += [lambda m=mesh: to_sdy(value, m), lambda m=mesh: to_sdy(value, m, rank=2)]
    elif entry in ("sdy", "per_value"):
        guard.append(lambda: to_hlo(value, _named_mesh(value)))
        for mesh in _meshes():
            guard.append(lambda m=mesh: to_hlo(value, m))
    elif entry == "spec":
        for mesh in _meshes():
            guard.append(lambda m=mesh: to_hlo(from_partition_spec(value, m), m))
    elif entry == "mesh" and isinstance(value, Mesh) and value.axes:
        from shardconv.core.model import AxisRef, DimSharding

        s = TensorSharding(mesh=value, dims=(DimSharding((AxisRef(value.axes[0].name),)), DimSharding()))
        guard.append(lambda: to_hlo(s, value))
    for fn in guard:
        try:
            fn()
        except ShardingError as e:
            str(e)


def parse_and_check(entry: str, text: str | bytes, *, converters: bool = True) -> bool:
    """Parse ``text`` with ``entry``'s parser; on success print it back, re-parse, compare, and run the
    converters. Returns whether it was accepted. Raises Violation on any broken invariant."""
    parse = _parsers()[entry]
    try:
        value = parse(text)
    except ShardingError as e:
        str(e)  # the message itself must render (caret excerpt on odd text)
        if e.message.startswith("invalid value:"):  # grammar.py's wrapper around a non-ShardingError
            raise Violation(f"{entry}: {text!r:.300} hit an internal error reported as syntax: {e.message}") from None
        return False
    printed = print_back(entry, value)
    try:
        again = parse(printed)
    except ShardingError as e:
        raise Violation(f"{entry}: {text!r} parses but its printed form {printed!r} does not: {e.message}") from None
    if again != value and not _xla_lossy_print(value):
        raise Violation(f"{entry}: {text!r} -> {printed!r} parses to a different model")
    if converters:
        convert(entry, value)
    return True


def _xla_lossy_print(value: object) -> bool:
    """XLA's own printer is not a fixed point for single-tile shardings (every data dim 1) with subgroups:
    {devices=[4,1,1,1]<=[2,2]T(0,1) last_tile_dims={unreduced, manual, manual, manual}} prints
    {devices=[4]<=[4] last_tile_dims={unreduced}}, which XLA re-reads as {unreduced}; and for rank-0 V3
    shardings, whose short print ({mesh['a'=1,'b'=1], unreduced}) drops the axis sets. shardconv prints
    what XLA prints (both pinned by tests/formats/hlo/test_hlo_oracle.py), so the model may change there and only there."""
    from shardconv.core.model import HloSharding, Kind

    if not isinstance(value, HloSharding):
        return False
    if value.kind is Kind.TUPLE:
        return any(map(_xla_lossy_print, value.elements))
    if value.kind is Kind.MESH:
        return value.rank == 0
    return value.kind is Kind.TILED and bool(value.subgroups) and all(n == 1 for n in value.tile_counts)


def check_bytes(data: bytes, fix_mesh: Mesh | None = None) -> bool:
    """The dump scanner and checker over in-memory bytes (what ``check_file`` does on a file), with the
    fixes' edits planned from the same scan. Returns whether the content was treated as IR (not skipped)."""
    from shardconv.check.apply import edits_of
    from shardconv.check.context import CheckOptions
    from shardconv.check.diagnostics import FileReport
    from shardconv.check.engine import check_stream

    opts = CheckOptions(mesh=fix_mesh)
    report = check_stream(io.BytesIO(data), "fuzz.mlir", opts)
    if not isinstance(report, FileReport):
        return False
    findings = list(report.findings)
    for f in findings:
        str(f.message)
    if fix_mesh is not None:
        edits_of(findings)
    return True


_warmed = False


def _warm() -> None:
    """Load grammars and import every converter once, so one-off start-up cost is not timed."""
    global _warmed
    if not _warmed:
        import corpus

        _warmed = True
        for entry, seeds in corpus.STRINGS.items():
            for s in seeds:
                parse_and_check(entry, s)
        check_bytes(corpus.dump_files()[0], _meshes()[0])


def timed(cls: str, size: int, fn: Callable[[], bool], show: object) -> bool:
    """Run one case: classify any escaping non-ShardingError as a crash, enforce the time budget
    (CPU time, so other processes on the machine do not count), record it, return accepted."""
    import stats

    _warm()
    t = time.process_time()
    try:
        accepted = fn()
    except Violation:
        raise
    except ShardingError:
        accepted = False  # e.g. FixError from check_edits: a clean refusal
    except BaseException as e:
        raise Violation(f"{cls}: {type(e).__name__}: {e!s:.300} on input {show!r:.500}") from e
    ms = (time.process_time() - t) * 1000
    kb = max(size, 1) / 1024
    stats.record(cls, accepted, ms / kb if kb >= 1 else ms)
    budget = FLOOR_MS + MS_PER_KB * kb
    if ms > budget:
        # One re-run before it counts: a GC pause or a cache-cold moment is not the input's cost.
        t = time.process_time()
        try:
            fn()
        except BaseException:  # noqa: BLE001 - the first run already classified the outcome
            pass
        ms = min(ms, (time.process_time() - t) * 1000)
        if ms > budget:
            raise Violation(f"{cls}: {ms:.0f} ms for {size} bytes (budget {budget:.0f} ms) on input {show!r:.500}")
    return accepted
