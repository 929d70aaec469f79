"""Turns what the user typed into model objects: input auto-detection, ``--mesh``, ``--shape``, stdin.

Detection only looks at the first characters; the real work is done by the parsers in
``shardconv.formats`` (imported lazily so ``--help`` and ``--version`` stay quick).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY
from typing import TYPE_CHECKING, Union

from shardconv.core.errors import ShardingError, ShardingSyntaxError, ShardingValidationError
from shardconv.core.records import record
from shardconv.formats.hlo.read import parse_hlo
from shardconv.formats.sdy import read as sdy
from shardconv.formats.sdy.read import parse_mesh
from shardconv.text.files import open_regular, os_reason

if TYPE_CHECKING:
    from shardconv.core.model import (
        HloSharding,
        Mesh,
        PartitionSpec,
        ShardSharding,
        TensorSharding,
        TensorShardingPerValue,
    )
    from shardconv.text.layered import StringEncoding

Parsed = Union["HloSharding", "TensorSharding", "TensorShardingPerValue", "PartitionSpec", "ShardSharding"]

# Input kinds, as shown by ``--from`` and in JSON ("input.kind").
HLO, SDY, SDY_PER_VALUE, SPEC = "hlo", "sdy", "sdy-per-value", "spec"
PROTO_HEX, PROTO_BASE64 = "proto-hex", "proto-base64"
JAX_TYPE = "jax-type"  # jax.typeof's float32[8@X,4]: read as the partition spec it shows
SHARD = "shard"  # MLIR's shard dialect: shard.sharding @grid split_axes = [[0], []]
INPUT_KINDS = ("auto", HLO, SDY, SPEC, JAX_TYPE, SHARD, PROTO_HEX, PROTO_BASE64)
SPEC_KINDS = (SPEC, JAX_TYPE)  # inputs whose value is a PartitionSpec (they need --mesh)

# Patterns are compiled on first use (``re`` caches them): nothing to pay on the common HLO/sdy path.
_HEX = r"(?:0x)?(?:[0-9a-fA-F]{2})*"
_B64 = r"[A-Za-z0-9+/]+={0,2}"
_WRAPPERS = ("mhlo.sharding", "sdy.sharding", "sharding")  # `NAME = "..."` copied from an IR dump
_SHARD_OP = r"(?:%[\w$.\-]+\s*=\s*)?shard\.sharding\b"  # the op, with or without its result


@record
class Input:
    """One parsed input: what was typed, what it was recognised as, and the model object."""

    text: str
    kind: str
    value: Parsed
    shape: tuple[int, ...] | None = None  # the array shape the input itself states (a JAX type)

    @property
    def is_hlo(self) -> bool:
        return self.kind in (HLO, PROTO_HEX, PROTO_BASE64)


def detect_kind(text: str) -> str:
    """The input kind from the first characters of ``text`` (no parsing)."""
    if not text.strip():
        raise ShardingSyntaxError(
            "empty input; expected a sharding such as '{replicated}' or '<@mesh, [{}, {}]>' "
            "(an empty OpSharding proto is written hex:, the replicated sharding)",
            text=text,
            pos=0,
        )
    s = _unwrap(text)
    low = s.lower()
    if low.startswith(("hex:",)):
        return PROTO_HEX
    if low.startswith(("base64:", "b64:")):
        return PROTO_BASE64
    if re.match(_SHARD_OP, s):
        return SHARD
    if s.startswith(("#sdy.sharding_per_value", "<[<")):
        return SDY_PER_VALUE
    if s.startswith(("#sdy.sharding", "<@", "<mesh<", "sdy.sharding<", "[{")):
        return SDY
    if s.startswith("{"):
        return HLO
    if s.startswith(("P(", "PartitionSpec(", "(", "[")) or s.lower() == "none":
        return SPEC
    from shardconv.formats.jaxtype.read import looks_like_jax_type

    if looks_like_jax_type(s):
        return JAX_TYPE
    if s == "":
        return PROTO_HEX  # mhlo.sharding = "" means replicated; the empty proto says the same
    if re.fullmatch(_HEX, s) and len(s) >= 2:
        return PROTO_HEX
    if re.fullmatch(_B64, s) and len(s) % 4 == 0:
        return PROTO_BASE64
    raise ShardingSyntaxError(
        "cannot tell what this is; expected an HLO sharding '{...}', a Shardy '#sdy.sharding<...>' or "
        "'<@mesh, [...]>', a partition spec 'P(...)', a JAX type 'float32[8@x,4]', a 'shard.sharding @grid "
        "split_axes = [[0]]', or a hex/base64 OpSharding proto",
        text=text,
        pos=0,
    )


@contextmanager
def anchored_in(text: str) -> Iterator[None]:
    """Errors raised while turning the input ``text`` into a conversion point into it (line:col, caret)."""
    try:
        yield
    except ShardingError as e:
        raise e.anchor(text) from None


def parse_input(text: str, kind: str = "auto", *, num_devices: int | None = None) -> Input:
    """Parse one input of ``kind`` (``auto`` detects it)."""
    raw = text.strip()
    body = _unwrap(raw)
    kind = detect_kind(raw) if kind == "auto" else kind
    if kind == HLO:
        return Input(raw, kind, parse_hlo(body, num_devices=num_devices))
    if kind in (SDY, SDY_PER_VALUE):
        if kind == SDY_PER_VALUE:
            return Input(raw, kind, sdy.parse_sdy_per_value(body))
        if body.startswith("["):  # a bare dims list: on the --mesh
            body = f"<@mesh, {body}>"
        return Input(raw, kind, sdy.parse_sdy(body))
    if kind == SHARD:
        from shardconv.formats.shard.read import parse_shard_sharding

        return Input(raw, kind, parse_shard_sharding(body))
    if kind == SPEC:
        from shardconv.formats.spec.read import parse_partition_spec

        return Input(raw, kind, parse_partition_spec(body))
    if kind == JAX_TYPE:
        from shardconv.formats.jaxtype.read import parse_jax_type

        typed = parse_jax_type(body)
        return Input(raw, kind, typed.spec, shape=typed.shape)
    if kind in (PROTO_HEX, PROTO_BASE64):
        from shardconv.formats.proto import from_proto_bytes

        return Input(raw, kind, from_proto_bytes(decode_proto_text(body, kind)))
    raise ShardingSyntaxError(f"unknown input kind {kind!r}; expected one of {', '.join(INPUT_KINDS)}")


def decode_proto_text(text: str, kind: str) -> bytes:
    """Bytes of a hex (``0x`` and ``hex:`` optional) or base64 (``base64:`` optional) OpSharding."""
    s = re.sub(r"\s+", "", text)
    try:
        if kind == PROTO_HEX:
            s = re.sub(r"^(?i:hex:)", "", s)
            s = s[2:] if s[:2].lower() == "0x" else s
            return binascii.unhexlify(s)
        import base64

        s = re.sub(r"^(?i:base64:|b64:)", "", s)
        return base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ShardingSyntaxError(f"not a valid {kind} OpSharding: {e}", text=text, pos=0) from None


def _unwrap(text: str) -> str:
    """Drop an ``mhlo.sharding = "..."``-style wrapper that came along with a copied value."""
    s = text.strip()
    for prefix in _WRAPPERS:
        rest = s[len(prefix) :].lstrip() if s.startswith(prefix) else ""
        if rest.startswith("="):
            s = rest[1:].strip()
            if len(s) >= 2 and s[0] == s[-1] == '"':
                s = s[1:-1].replace('\\"', '"').replace("\\22", '"')
            break
    return s


# --------------------------------------------------------------------------------------------------
# --mesh, --shape, stdin
# --------------------------------------------------------------------------------------------------


def parse_mesh_option(value: str) -> Mesh:
    """``--mesh``: ``batch=2,model=4``, ``<[...]>``, ``#sdy.mesh<...>``, ``sdy.mesh @m = <...>``, or
    ``@FILE`` for the first ``sdy.mesh`` of an MLIR/HLO file."""
    value = value.strip()
    if value.startswith("@"):
        return mesh_in_file(value[1:])
    return parse_mesh(value)


_MESH_DECL = r"sdy\.mesh\s+@[\w.$-]+\s*=\s*<|#sdy\.mesh<"


MESH_FILE_LIMIT = 16 << 20  # how far into a file ``--mesh @FILE`` looks for its first mesh declaration
_FIRST_READ = 1 << 16


def _mesh_of_file(path: str) -> _FoundMesh:
    """The first mesh declaration of the regular file ``path``, read only as far as it ends (a FIFO or a
    device is refused, a dump is not read whole, nothing past MESH_FILE_LIMIT bytes is read)."""

    try:
        with open_regular(path) as f:
            data, want = b"", _FIRST_READ
            while True:
                data += f.read(want - len(data))
                try:
                    return _find_mesh(path, data.decode("utf-8", "surrogateescape"))
                except ShardingError:
                    if len(data) < want:  # the whole file was read
                        raise
                    if want >= MESH_FILE_LIMIT:
                        raise ShardingValidationError(
                            f"--mesh @{path}: no complete sdy.mesh declaration in its first {MESH_FILE_LIMIT >> 20} MiB"
                        ) from None
                want = min(want * 4, MESH_FILE_LIMIT)
    except OSError as e:
        raise ShardingValidationError(f"--mesh @{path}: cannot read file: {os_reason(e, path)}") from None


@record
class _FoundMesh:
    """The first mesh declaration of a file: its text, and how an offset in it maps back into the file
    (through the string literal it sits in: ``xla.sdy.meshes = "{mesh = #sdy.mesh<[\\22a\\22=2]>}"``)."""

    _: KW_ONLY
    text: str
    file_text: str
    start: int  # where ``text`` (or the literal holding it) starts in the file
    encoding: StringEncoding | None = None  # the literal's, None when the mesh is not in a string
    before: str = ""  # what of the decoded literal precedes ``text``

    def file_pos(self, offset: int) -> int:
        if self.encoding is None:
            return self.start + offset
        from shardconv.text.layered import encode_layered

        decoded = (self.before + self.text[:offset]).encode("utf-8", "surrogateescape")
        return self.start + len(encode_layered(decoded, self.encoding).decode("utf-8", "surrogateescape"))


def _find_mesh(path: str, text: str) -> _FoundMesh:
    from shardconv.text.brackets import group_end, string_end

    m = re.search(_MESH_DECL, text)
    if m is None:
        raise ShardingValidationError(f"--mesh @{path}: no sdy.mesh declaration in the file")
    quote = _open_quote(text, m.start())
    if quote is None:
        end = group_end(text, m.end() - 1, own_kind_only=True, comments=False)
        if not isinstance(end, int):
            raise ShardingSyntaxError(f"--mesh @{path}: unterminated sdy.mesh declaration", text=text, pos=m.start())
        return _FoundMesh(text=text[m.start() : end], file_text=text, start=m.start())
    from shardconv.text.layered import decode_layered

    close = string_end(text, quote)
    close = len(text) if close < 0 else close - 1
    raw = text[quote + 1 : close].encode("utf-8", "surrogateescape")
    body, enc = decode_layered(raw, "mlir" if b"\\22" in raw else "c")
    inner = body.decode("utf-8", "surrogateescape")
    n = re.search(_MESH_DECL, inner)
    assert n is not None  # the declaration found in the literal is still there once it is decoded
    end = group_end(inner, n.end() - 1, own_kind_only=True, comments=False)
    if not isinstance(end, int):
        raise ShardingSyntaxError(f"--mesh @{path}: unterminated sdy.mesh declaration", text=text, pos=m.start())
    return _FoundMesh(
        text=inner[n.start() : end], file_text=text, start=quote + 1, encoding=enc, before=inner[: n.start()]
    )


def _open_quote(text: str, pos: int) -> int | None:
    """The opening ``"`` of the string literal ``pos`` lies in (literals do not span lines), or None."""
    i = text.rfind("\n", 0, pos) + 1
    opened = None
    while i < pos:
        c = text[i]
        if c == '"':
            opened = i if opened is None else None
        elif c == "\\" and opened is not None:
            i += 1  # the escaped character
        i += 1
    return opened


def mesh_in_file(path: str) -> Mesh:
    """``--mesh @FILE``: the first ``sdy.mesh`` of the file (also one inside an escaped string, as
    ``xla.sdy.meshes`` holds it); an error in it points into the file, at its line and column."""
    found = _mesh_of_file(path)
    try:
        return parse_mesh(found.text)
    except ShardingError as e:
        raise e.replaced(
            message=f"--mesh @{path}: {e.message}", text=found.file_text, pos=found.file_pos(e.pos or 0)
        ) from None


def first_mesh_in_file(path: str) -> str:
    """The text of the first ``sdy.mesh @name = <...>`` (or ``#sdy.mesh<...>``) in the file at ``path``."""
    return _mesh_of_file(path).text


_SHAPE = r"\d+(?:\s*[x,]\s*\d+)*"


def parse_shape(text: str) -> tuple[int, ...]:
    """``--shape``: ``32x32``, ``32,32``, ``[32, 32]``, ``tensor<32x32xf32>``; ``scalar`` or ``""`` is rank 0."""
    s = text.strip()
    if s.startswith("tensor<") and s.endswith(">"):
        s = re.sub(r"(?:^|x)[A-Za-z][A-Za-z0-9]*$", "", s[7:-1])
    s = s.strip("[]() ")
    if s in ("", "scalar"):
        return ()
    if not re.fullmatch(_SHAPE, s):
        raise ShardingSyntaxError("expected a shape like 32x32 or 8,16,4", text=text, pos=0)
    dims = tuple(int(d) for d in re.split(r"\s*[x,]\s*", s))
    if any(d <= 0 for d in dims):
        raise ShardingValidationError(f"shape {text!r} has a dim of size 0")
    return dims


def stdin_items(stream: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for every line; ``text`` is ``""`` for a blank or comment (``#`` then
    space, or ``//``) line, so that a caller can answer every input line with one output line."""
    for n, line in enumerate(stream, start=1):
        s = line.strip()
        yield n, "" if s.startswith(("//", "# ")) or s == "#" else s
