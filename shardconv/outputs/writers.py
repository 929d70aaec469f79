"""One writer per output format. Pure: shardings in, text or bytes out (files are the CLI's job)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shardconv.core.model import HloSharding
from shardconv.outputs.read import OutputSharding


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


EMPTY_HEX = '""'


def proto_hex_lines(shardings: Sequence[HloSharding]) -> str:
    """One hex-encoded serialized OpSharding per line; an empty proto (replicated) is written ``""``
    so every output keeps a visible line."""
    return "".join((b.hex() or EMPTY_HEX) + "\n" for b in proto_blobs(shardings))


def textproto(shardings: Sequence[HloSharding], what: str = "output") -> str:
    """Each OpSharding in text format, preceded by a ``# output N: <hlo>`` comment."""
    from shardconv.formats.proto import to_textproto

    parts = []
    for i, h in enumerate(shardings):
        body = to_textproto(h)
        parts.append(f"# {what} {i}: {h}\n{body}" + ("" if body.endswith("\n") else "\n"))
    return "\n".join(parts)


def json_document(outputs: Sequence[OutputSharding], *, func: str, params: bool, text: str) -> dict[str, Any]:
    """The ``--format json`` document: every output with its HLO string, proto and where it was read."""
    from shardconv.ui.jsonout import document

    items = []
    for o, blob in zip(outputs, proto_blobs([o.hlo for o in outputs])):
        line = col = None
        if o.pos is not None:
            line = text.count("\n", 0, o.pos) + 1
            col = o.pos - (text.rfind("\n", 0, o.pos) + 1) + 1
        items.append(
            {
                "index": o.index,
                "type": o.type,
                "hlo": str(o.hlo),
                "proto_hex": blob.hex(),
                "source": o.source,
                "sdy": None if o.sdy is None else str(o.sdy),
                "line": line,
                "column": col,
                "open": o.open,
            }
        )
    key = "parameters" if params else "outputs"
    return document(
        "outputs",
        func=func,
        kind=key,
        tuple=tuple_string([o.hlo for o in outputs]),
        **{key: items},
    )
