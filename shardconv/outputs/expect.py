"""``--expect``: read what a plugin reports (the bytes PJRT returned in the ``pjrt`` layout, proto files
or hex, HLO strings, a tuple string) and compare it with the module as XLA compares shardings
(``equality``), so a plugin's CI can catch a wrong report."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import HloSharding, Kind
from shardconv.core.records import record
from shardconv.formats.hlo.read import parse_hlo_proto, parse_hlo_text
from shardconv.outputs.equality import difference
from shardconv.outputs.pjrt import is_packed, unpack
from shardconv.outputs.writers import split_length_prefixed
from shardconv.text.files import read_prefix

_HEX_LINE = re.compile(r"(?:0x)?(?:[0-9a-fA-F]{2})*")
_DIGITS = re.compile(r"(\d+)")


def _natural(p: Path) -> list[object]:
    return [int(t) if t.isdigit() else t for t in _DIGITS.split(p.name)]


def _proto(data: bytes, where: str) -> HloSharding:
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
    """A report in any of the formats ``outputs`` writes (except json/mlir/textproto/pjrt-header), one
    sharding per output: the ``pjrt`` layout (by its magic), a length-prefixed stream or one proto,
    hex lines, HLO lines or one tuple string."""
    if is_packed(data):
        return [_proto(b, f"{name}: sharding {i}") for i, b in enumerate(unpack(data, name))]
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
            raise e.replaced(message=f"{name}:{n}: {e.message}") from None
        if h.kind is Kind.TUPLE:
            if len(lines) > 1:
                raise ShardingSyntaxError(f"{name}:{n}: a tuple string must be the only line of the report")
            return list(h.elements)
        out.append(h)
    return out


REPORT_LIMIT = 256 << 20  # bytes: a report (or one file of a report folder) longer than this is refused


def _report_bytes(path: Path) -> bytes:
    """The bytes of the report file ``path``, read as every named file is (a FIFO or device is refused
    before it can block, and no more than REPORT_LIMIT bytes are held); OSError when it cannot be read."""
    data, more = read_prefix(str(path), REPORT_LIMIT)
    if more:
        raise ShardingSyntaxError(f"{path}: a report larger than {REPORT_LIMIT >> 20} MiB; not read")
    return data


def read_report(path: Path) -> list[HloSharding]:
    """``parse_report`` on a file, or one binary OpSharding per file of a folder (natural name order)."""
    if path.is_dir():
        files = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")), key=_natural)
        return [_proto(_report_bytes(p), str(p)) for p in files]
    return parse_report(_report_bytes(path), str(path))


def _a(what: str) -> str:
    return f"an {what}" if what[0] in "aeiou" else f"a {what}"


@record
class Mismatch:
    """One output (parameter) whose reported sharding XLA does not hold equal to the module's."""

    index: int
    module: HloSharding | None
    reported: HloSharding | None
    detail: str


def compare(
    module: Sequence[HloSharding], reported: Sequence[HloSharding], num_devices: int = 1, what: str = "output"
) -> list[Mismatch]:
    """Outputs whose reported sharding XLA does not hold equal to the module's (``equality.difference``)."""
    out = []
    for i in range(max(len(module), len(reported))):
        m = module[i] if i < len(module) else None
        r = reported[i] if i < len(reported) else None
        if m is None or r is None:
            out.append(Mismatch(i, m, r, "missing from the report" if r is None else f"not {_a(what)} of the module"))
            continue
        detail = difference(m, r, num_devices)
        if detail is not None:
            out.append(Mismatch(i, m, r, detail))
    return out


def format_mismatches(mismatches: Sequence[Mismatch], total: int, what: str = "output") -> str:
    """The per-output (per-parameter) diff the CLI prints."""
    lines = []
    for x in mismatches:
        lines.append(f"{what} {x.index}: {x.detail}")
        lines.append(f"  module:   {x.module if x.module is not None else '-'}")
        lines.append(f"  reported: {x.reported if x.reported is not None else '-'}")
    lines.append(f"{len(mismatches)} of {total} {what}s differ")
    return "\n".join(lines) + "\n"
