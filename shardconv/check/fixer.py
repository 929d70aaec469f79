"""``--fix``: plans byte-span edits from a fresh scan (synthetic meshes re-expressed on the global
mesh, ``mhlo.sharding`` strings canonicalised) and writes them atomically; nothing outside the
edited spans changes, and a failed write leaves the original file as it was."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import BinaryIO
from dataclasses import dataclass, replace

from shardconv.core.errors import ShardingError
from shardconv.core.model import Mesh, TensorSharding, TensorShardingPerValue
from shardconv.check.checker import is_synthetic
from shardconv.check.escapes import encode
from shardconv.check.occurrences import Kind, Occurrence
from shardconv.check.values import parse_value
from shardconv.text.atomic import write_atomic

COPY_CHUNK = 1 << 20


class FixError(ShardingError):
    """The file could not be rewritten (it changed since it was scanned, or the write failed)."""


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    old: bytes
    new: bytes
    line: int
    col: int
    line_text: bytes
    reason: str


def _print(occ: Occurrence, value: TensorSharding | TensorShardingPerValue) -> str:
    from shardconv.formats.sdy.write import print_sharding

    if occ.kind is Kind.SDY_PER_VALUE_LIST and isinstance(value, TensorShardingPerValue):
        return "[" + ", ".join(print_sharding(x, attribute=False) for x in value.shardings) + "]"
    if isinstance(value, TensorShardingPerValue):
        return str(value)
    return print_sharding(value, attribute=occ.kind is not Kind.SDY_SHARDING_BARE)


def _edit(occ: Occurrence, text: str, reason: str) -> Edit | None:
    data = text.encode("utf-8")
    new = encode(data, occ.encoding) if occ.encoding.outer not in ("none", "whole") else data
    if new == occ.raw:
        return None
    return Edit(occ.start, occ.end, occ.raw, new, occ.line, occ.col, occ.line_text, reason)


def plan(occs: Iterable[Occurrence], glob: Mesh | None) -> Iterator[Edit]:
    """Edits for one file, in scan order. ``glob`` is the global mesh synthetic meshes move to."""
    from shardconv.formats.sdy.write import print_mesh
    from shardconv.check.diagnose import on_global

    remap: dict[str, tuple[Mesh, Mesh]] = {}
    for occ in occs:
        if occ.kind is Kind.EXPECTED_ERROR or occ.encoding.outer == "whole":
            continue
        value, err = parse_value(occ.kind, occ.text, occ.data)
        if err is not None:
            continue
        if occ.kind is Kind.SDY_MESH:
            name = occ.mesh_name
            if name is None:
                continue
            remap.pop(name, None)
            mesh = value
            assert isinstance(mesh, Mesh)
            if glob is None or not is_synthetic(mesh) or mesh.num_devices != glob.num_devices:
                continue
            if tuple(mesh.axis_sizes) == tuple(glob.axis_sizes) and mesh.axis_names == glob.axis_names:
                continue
            remap[name] = (replace(mesh, name=name), replace(glob, name=name))
            form = "bare" if occ.site == "sdy.mesh" else "attr"
            e = _edit(occ, print_mesh(glob, form=form), f"mesh @{name} -> the global mesh")
            if e is not None:
                yield e
        elif isinstance(value, (TensorSharding, TensorShardingPerValue)):
            items = value.shardings if isinstance(value, TensorShardingPerValue) else (value,)
            names = {x.mesh for x in items if isinstance(x.mesh, str)}
            hit = [remap[n] for n in names if n in remap]
            if not hit or len(names) != 1:
                continue
            old, new = hit[0]
            try:
                moved = on_global(value, old, new)
            except ShardingError:
                continue
            e = _edit(occ, _print(occ, moved), "sharding re-expressed on the global mesh")
            if e is not None:
                yield e
        elif occ.kind is Kind.HLO and occ.data is None and occ.site in ("mhlo.sharding", "mhlo.spmd_output_sharding"):
            from shardconv.formats.hlo.write import print_hlo

            if not occ.text.strip():
                continue
            canon = print_hlo(value, include_metadata="metadata" in occ.text)  # type: ignore[arg-type]
            e = _edit(occ, canon, "mhlo.sharding canonicalised")
            if e is not None:
                yield e


def check_edits(edits: list[Edit]) -> list[Edit]:
    """Sorted, non-overlapping edits (an overlap means a scanner bug: refuse rather than corrupt)."""
    out = sorted(edits, key=lambda e: e.start)
    for a, b in zip(out, out[1:]):
        if b.start < a.end:
            raise FixError(f"overlapping edits at bytes {a.start}-{a.end} and {b.start}-{b.end}")
    return out


def apply(path: str, edits: list[Edit]) -> None:
    """Rewrite ``path`` with ``edits`` through the one atomic writer (mode kept, symlink target rewritten).
    Verifies every replaced span still holds the scanned bytes; on any failure the original stays."""
    if not edits:
        return
    edits = check_edits(edits)
    st = os.stat(path)
    if not st.st_mode & 0o222:
        raise FixError(f"{path} is read-only; not rewritten (make it writable to let --fix change it)")

    def splice(dst: BinaryIO) -> None:
        with open(path, "rb") as src:
            cursor = 0
            for e in edits:
                _copy(src, dst, e.start - cursor)
                if src.read(e.end - e.start) != e.old:
                    raise FixError(f"{path} changed since it was scanned (line {e.line}); nothing written")
                dst.write(e.new)
                cursor = e.end
            _copy(src, dst, None)
            now = os.fstat(src.fileno())
            if (now.st_size, now.st_mtime_ns) != (src.tell(), st.st_mtime_ns):
                raise FixError(f"{path} changed while it was being rewritten; nothing written")

    try:
        write_atomic(path, splice)
    except OSError as exc:
        raise FixError(f"could not rewrite {os.path.realpath(path)}: {exc}") from exc


def _copy(src: BinaryIO, dst: BinaryIO, n: int | None) -> None:
    left = n
    while left is None or left > 0:
        block = src.read(COPY_CHUNK if left is None else min(COPY_CHUNK, left))
        if not block:
            return
        dst.write(block)
        if left is not None:
            left -= len(block)


def unified_diff(path: str, edits: list[Edit]) -> str:
    """A zero-context unified diff of the edited lines (the file itself is never loaded whole)."""
    edits = check_edits(edits)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    by_line: dict[int, list[Edit]] = {}
    for e in edits:
        by_line.setdefault(e.line, []).append(e)
    for line, group in by_line.items():
        old = group[0].line_text
        base = group[0].start - (group[0].col - 1)
        new = bytearray()
        cursor = 0
        for e in group:
            new += old[cursor : e.start - base] + e.new
            cursor = e.end - base
        new += old[cursor:]
        out.append(f"@@ -{line},1 +{line},1 @@\n")
        out.append("-" + old.decode("utf-8", "replace") + "\n")
        out.append("+" + bytes(new).decode("utf-8", "replace") + "\n")
    return "".join(out)


__all__ = ["Edit", "FixError", "apply", "check_edits", "plan", "unified_diff"]
