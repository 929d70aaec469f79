"""One writer per output format. Pure: shardings in, text or bytes out (files are the CLI's job)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding
from shardconv.core.positions import line_col
from shardconv.outputs.dumps import Dump
from shardconv.outputs.reading import Reading


def hlo_lines(shardings: Sequence[HloSharding]) -> str:
    """One canonical HLO string per output, one per line."""
    return "".join(f"{h}\n" for h in shardings)


def tuple_string(shardings: Sequence[HloSharding]) -> str:
    """The value for ``mhlo.spmd_output_sharding``: ``{s0, s1, ...}``; a single output is bare ``s0``,
    because XLA validates it against the (non-tuple) result shape when there is only one."""
    if len(shardings) == 1:
        return str(shardings[0])
    return str(HloSharding.tuple_of(list(shardings)))


def proto_blobs(shardings: Sequence[HloSharding]) -> list[bytes]:
    """Serialized ``xla.OpSharding`` per output: what ``PJRT_Executable_OutputShardings`` returns."""
    from shardconv.formats.proto import to_proto_bytes

    return [to_proto_bytes(h) for h in shardings]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def length_prefixed(blobs: Sequence[bytes]) -> bytes:
    """Protos as one stream, each preceded by its varint length (protobuf's delimited format)."""
    return b"".join(_varint(len(b)) + b for b in blobs)


def split_length_prefixed(data: bytes) -> list[bytes] | None:
    """Inverse of ``length_prefixed``; None when ``data`` is not exactly such a stream."""
    out, i = [], 0
    while i < len(data):
        n, shift = 0, 0
        while True:
            if i >= len(data) or shift > 63:
                return None
            b = data[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if i + n > len(data):
            return None
        out.append(data[i : i + n])
        i += n
    return out


def proto_hex_lines(shardings: Sequence[HloSharding]) -> str:
    """One hex-encoded serialized OpSharding per line; the empty proto (replicated) is an empty line,
    so every line is valid input to a hex decoder."""
    return "".join(b.hex() + "\n" for b in proto_blobs(shardings))


def textproto(shardings: Sequence[HloSharding], what: str = "output") -> str:
    """Each OpSharding in text format, preceded by a ``# output N: <hlo>`` comment."""
    from shardconv.formats.proto import to_textproto

    parts = []
    for i, h in enumerate(shardings):
        body = to_textproto(h)
        parts.append(f"# {what} {i}: {h}\n{body}" + ("" if body.endswith("\n") else "\n"))
    return "\n".join(parts)


def _where(text: str, pos: int | None) -> dict[str, int | None]:
    line, column = line_col(text, pos) if pos is not None else (None, None)
    return {"line": line, "column": column}


def json_document(
    reading: Reading,
    *,
    func: str,
    params: bool,
    from_constraints: bool,
    shardings: Sequence[HloSharding] | None = None,
    error: ShardingError | None = None,
    dump: Dump | None = None,
) -> dict[str, Any]:
    """The ``--format json`` document: every leaf with its HLO string, proto and where it was read, and
    the conflicts between module and per-value attributes. ``shardings`` is each leaf in the form asked
    for (V2 or V3); the reading's own by default. A leaf the compile still chooses has ``"decided":
    false`` and null ``hlo`` and ``proto_hex`` (and the document a null ``tuple``): no sharding stands
    in for it; ``error`` is the refusal the other formats give for it. ``dump`` says which module of the
    file was read (a pass log holds many)."""
    from shardconv.ui.jsonout import document, error_dict

    text = reading.text
    forms = reading.shardings if shardings is None else list(shardings)
    items = []
    leaves = () if reading.returns_none else reading.items  # PJRT returns none: no leaf stands for it
    for o, h, blob in zip(leaves, forms, proto_blobs(forms), strict=True):
        decided = o.index not in reading.undecided
        feeder = None
        if o.feeder is not None:
            feeder = {
                "op": o.feeder.op,
                "hlo": str(o.feeder.hlo),
                "sdy": str(o.feeder.sdy),
                **_where(text, o.feeder.pos),
            }
        items.append(
            {
                "index": o.index,
                "value": o.value,
                "type": o.type,
                "decided": decided,
                "hlo": str(h) if decided else None,
                "proto_hex": blob.hex() if decided else None,
                "source": o.source,
                "sdy": None if o.sdy is None else str(o.sdy),
                **_where(text, o.pos),
                "open": o.open,
                "feeder": feeder,
            }
        )
    conflicts = [
        {
            "index": c.index,
            "module": None if c.module is None else str(c.module),
            "value": None if c.value is None else str(c.value),
            "detail": c.detail,
            **_where(text, c.pos),
        }
        for c in reading.conflicts
    ]
    key = "parameters" if params else "outputs"
    return document(
        "outputs",
        func=func,
        kind=key,
        from_constraints=from_constraints,
        tuple=None if reading.undecided or reading.returns_none else tuple_string(forms),
        returns_none=reading.returns_none,
        undecided=list(reading.undecided),
        undecided_why=reading.undecided_why or None,
        error=None if error is None else error_dict(error),
        module=None if dump is None else {
            "number": dump.number, "count": dump.count, "skipped": dump.skipped, "line": dump.line,
            "header": dump.header,
        },
        conflicts=conflicts,
        **{key: items},
    )
