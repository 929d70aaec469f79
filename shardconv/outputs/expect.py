"""``--expect``: read what a plugin reports (HLO strings, a tuple string, proto files or hex) and compare
it with the module by device assignment, so a plugin's CI can catch a wrong report."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import HloSharding, Kind
from shardconv.outputs.writers import split_length_prefixed

_HEX_LINE = re.compile(r"(?:0x)?(?:[0-9a-fA-F]{2})*")
_DIGITS = re.compile(r"(\d+)")


def _natural(p: Path) -> list[object]:
    return [int(t) if t.isdigit() else t for t in _DIGITS.split(p.name)]


def _proto(data: bytes, where: str) -> HloSharding:
    from shardconv.formats.hlo.read import parse_hlo_proto

    try:
        return parse_hlo_proto(data)
    except ShardingError as e:
        raise type(e)(f"{where}: {e.message}") from None


def _is_text(data: bytes) -> bool:
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\n\r\t" for c in s)


def parse_report(data: bytes, name: str = "report") -> list[HloSharding]:
    """A report in any of the formats ``outputs`` writes (except json/mlir/textproto), one sharding per output."""
    from shardconv.formats.hlo.read import parse_hlo_text

    if not _is_text(data):
        blobs = split_length_prefixed(data)
        if blobs is None:
            return [_proto(data, name)]
        return [_proto(b, f"{name}: proto {i}") for i, b in enumerate(blobs)]
    text = data.decode("utf-8")
    numbered = [(n, ln.strip()) for n, ln in enumerate(text.splitlines(), 1) if not ln.lstrip().startswith(("#", "//"))]
    if numbered and all(_HEX_LINE.fullmatch(ln) for _, ln in numbered):  # an empty line is the empty proto
        return [_proto(bytes.fromhex(ln.removeprefix("0x")), f"{name}:{n}") for n, ln in numbered]
    lines = [(n, ln) for n, ln in numbered if ln]
    out: list[HloSharding] = []
    for n, ln in lines:
        try:
            h = parse_hlo_text(ln)
        except ShardingError as e:
            e.message = f"{name}:{n}: {e.message}"
            raise
        if h.kind is Kind.TUPLE:
            if len(lines) > 1:
                raise ShardingSyntaxError(f"{name}:{n}: a tuple string must be the only line of the report")
            return list(h.elements)
        out.append(h)
    return out


def read_report(path: Path) -> list[HloSharding]:
    """``parse_report`` on a file, or one binary OpSharding per file of a folder (natural name order)."""
    if path.is_dir():
        files = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")), key=_natural)
        return [_proto(p.read_bytes(), str(p)) for p in files]
    return parse_report(path.read_bytes(), str(path))


@dataclass(frozen=True)
class Mismatch:
    """One output whose reported sharding places data differently from the module's."""

    index: int
    module: HloSharding | None
    reported: HloSharding | None
    detail: str


def _first_difference(a: HloSharding, b: HloSharding, num_devices: int) -> str:
    """``device 1 holds tile [0, 1] per the module but [1] per the report`` for the first device that differs."""
    from shardconv.core.placement import placement

    def where(h: HloSharding) -> dict[int, tuple[int, ...]]:
        try:
            p = placement(h, num_devices=num_devices)
        except ShardingError:
            return {}
        return {d: t.index for t in p.tiles for d in t.devices}

    wa, wb = where(a), where(b)
    for d in sorted(set(wa) | set(wb)):
        if wa.get(d) != wb.get(d):
            fa = "no tile" if d not in wa else f"tile {list(wa[d])}"
            fb = "no tile" if d not in wb else f"tile {list(wb[d])}"
            return f"device {d} holds {fa} per the module but {fb} per the report"
    return "same tiles, different manual/unreduced/replica grouping"


def compare(module: Sequence[HloSharding], reported: Sequence[HloSharding], num_devices: int = 1) -> list[Mismatch]:
    """Outputs whose reported sharding does not put the same tiles on the same devices as the module."""
    from shardconv.convert.to_sdy import same_assignment

    out = []
    for i in range(max(len(module), len(reported))):
        m = module[i] if i < len(module) else None
        r = reported[i] if i < len(reported) else None
        if m is None or r is None:
            out.append(Mismatch(i, m, r, "missing from the report" if r is None else "not an output of the module"))
        elif not same_assignment(m, r):
            if m.kind is Kind.TILED and r.kind is Kind.TILED and m.rank != r.rank:
                detail = f"rank {r.rank} reported for a rank-{m.rank} sharding"
            else:
                detail = _first_difference(m, r, num_devices)
            out.append(Mismatch(i, m, r, detail))
    return out


def format_mismatches(mismatches: Sequence[Mismatch], total: int) -> str:
    """The per-output diff the CLI prints."""
    lines = []
    for x in mismatches:
        lines.append(f"output {x.index}: {x.detail}")
        lines.append(f"  module:   {x.module if x.module is not None else '-'}")
        lines.append(f"  reported: {x.reported if x.reported is not None else '-'}")
    lines.append(f"{len(mismatches)} of {total} outputs differ")
    return "\n".join(lines) + "\n"
