"""The returns of an op's regions (a while's cond and body, a case's branches), read from the op's own
lines when asked: the scan reports the records on an op, not the ``stablehlo.return`` that ends each of
its regions, which a record's ``operand-N`` can name (a while result's second source is its body's
return). MLIR prints a region's ops two columns in from the op that owns it, and the lines that close or
open its regions (``cond {``, ``} do {``, ``}, {``, ``})``) at the op's own indentation."""

from __future__ import annotations

import re

_RETURN = re.compile(rb'^\s*(?:stablehlo\.return\b|"stablehlo\.return"\()([^:]*)')
_NAME = re.compile(rb"%[\w#.$\-]+")
_CONTINUES = (b"}", b"cond {", b"do {")
_DEFINES = re.compile(rb'^\s*(%[\w.$\-]+)(?::\d+)?\s*=\s*"?([\w.]+)')


def op_regions(path: str, line_start: int, limit: int = 1 << 28) -> tuple[list[tuple[str, ...]], int]:
    """The operands of each ``stablehlo.return`` ending a region of the op whose line begins at byte
    ``line_start`` of ``path``, in order, and how many lines after its first the op spans (at most
    ``limit`` bytes read); nothing for stdin or a file that cannot be read again."""
    if path == "-":
        return [], 0
    out: list[tuple[str, ...]] = []
    lines = 0
    try:
        with open(path, "rb") as f:
            f.seek(line_start)
            first = f.readline()
            indent, read = _indent(first), 0
            for line in f:
                read += len(line)
                body = line.lstrip()
                if body.strip():
                    at = len(line) - len(body)
                    if read > limit or at < indent or (at == indent and not body.startswith(_CONTINUES)):
                        break
                    m = _RETURN.match(line) if at == indent + 2 else None
                    if m:
                        out.append(tuple(n.decode("utf-8", "surrogateescape") for n in _NAME.findall(m.group(1))))
                lines += 1
    except OSError:
        return [], 0
    return out, lines


def region_owner(path: str, line_start: int, limit: int = 1 << 28) -> tuple[str, str] | None:
    """The value and op of the op whose regions the line at byte ``line_start`` closes (a case prints
    its attributes there: ``}) {sdy...} : ...``): the nearest line above at its indentation that
    defines a value, read backwards (at most ``limit`` bytes); None when there is none."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as f:
            f.seek(line_start)
            indent = _indent(f.readline())
            pos, tail = line_start, b""
            while pos > 0 and line_start - pos < limit:
                step = min(1 << 20, pos)
                pos -= step
                f.seek(pos)
                lines = (f.read(step) + tail).split(b"\n")
                tail = lines.pop(0) if pos > 0 else b""
                for line in reversed(lines):
                    if not line.strip():
                        continue
                    at = _indent(line)
                    m = _DEFINES.match(line) if at == indent else None
                    if at < indent or m:
                        return (m.group(1).decode("utf-8", "surrogateescape"), m.group(2).decode()) if m else None
    except OSError:
        return None
    return None


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" "))


__all__ = ["op_regions", "region_owner"]
