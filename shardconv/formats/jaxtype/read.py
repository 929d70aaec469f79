"""JAX's type notation -> model: what ``jax.typeof`` prints for an array under explicit mesh axes,
``float32[8@X,4@Y]``, ``float32[8@(X,Y),4]``, ``float32[8,8]{U:Y}`` (jax 0.10.2's ``str_short_aval``).

The grammar, read by a small recursive descent (errors carry the position, for a caret)::

    type    := DTYPE ['<' NAME '>'] '[' [dim {',' dim}] ']' ['{' entry {',' entry} '}']
    dim     := INT ['@' axes]
    entry   := ('U' | 'V' | 'R') ':' axes
    axes    := NAME | '(' NAME {',' NAME} ')'

``<memory>`` (``<host>``) says where the array lives and is read past. ``U:`` lists unreduced axes, which a
partition spec carries; ``V:`` (axes a value varies over inside ``shard_map``) and ``R:`` (reduced axes)
have no sharding equivalent and are refused with the reason, as is the ``(...)`` mesh axis-type suffix
jax prints on request.
"""

from __future__ import annotations

import re

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import JaxType, PartitionEntry, PartitionSpec

_DTYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(r"[^\s,()@\[\]{}:<>]+")
_INT = re.compile(r"[0-9]+")
_TAG = re.compile(r"[A-Z]+")
_LOOKS_LIKE = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*(?:<[A-Za-z_]+>)?\[")


def looks_like_jax_type(text: str) -> bool:
    """``text`` starts like ``float32[`` / ``bf16<host>[`` (detection only; nothing is parsed)."""
    return _LOOKS_LIKE.match(text) is not None


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ShardingSyntaxError:
        got = self.text[self.pos] if self.pos < len(self.text) else "end of input"
        return ShardingSyntaxError(f"expected {what}, got {got!r} in JAX type", text=self.text, pos=self.pos)

    def at(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> None:
        if not self.at(s):
            raise self.fail(repr(s))
        self.pos += len(s)

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.fail(what)
        self.pos = m.end()
        return m.group()

    def axes(self) -> tuple[str, ...] | str:
        """``X`` (a name) or ``(X,Y)`` (a tuple, as jax prints a tuple entry, even of one name)."""
        if not self.at("("):
            return self.match(_NAME, "an axis name")
        self.take("(")
        names = [self.match(_NAME, "an axis name")]
        while self.at(","):
            self.take(",")
            names.append(self.match(_NAME, "an axis name"))
        self.take(")")
        return tuple(names)

    def dims(self) -> tuple[tuple[int, ...], tuple[PartitionEntry, ...]]:
        sizes: list[int] = []
        entries: list[PartitionEntry] = []
        self.take("[")
        while not self.at("]"):
            if sizes:
                if not self.at(","):
                    raise self.fail("',' or ']'")
                self.take(",")
            sizes.append(int(self.match(_INT, "a dim size")))
            entry: PartitionEntry = None
            if self.at("@"):
                self.take("@")
                entry = self.axes()
            entries.append(entry)
        self.take("]")
        return tuple(sizes), tuple(entries)

    def entries(self) -> tuple[str, ...]:
        unreduced: tuple[str, ...] = ()
        self.take("{")
        first = True
        while not self.at("}"):
            if not first:
                self.take(",")
                while self.at(" "):
                    self.pos += 1
            first = False
            start = self.pos
            tag = self.match(_TAG, "U:, V: or R:")
            self.take(":")
            got = self.axes()
            axes = (got,) if isinstance(got, str) else got
            if tag == "U":
                unreduced += axes
            elif tag in ("V", "R"):
                what = "varying (manual, inside shard_map)" if tag == "V" else "reduced"
                raise ShardingValidationError(
                    f"{tag}:{','.join(axes)} marks axes {what}; a sharding has no such axes, so this type has "
                    "no sharding equivalent (drop the entry to read the sharding alone)",
                    text=self.text,
                    pos=start,
                )
            else:
                self.pos = start
                raise self.fail("U:, V: or R:")
        self.take("}")
        return unreduced

    def read(self) -> JaxType:
        self.pos = len(self.text) - len(self.text.lstrip())
        dtype = self.match(_DTYPE, "a dtype such as float32")
        if self.at("<"):
            self.take("<")
            self.match(_NAME, "a memory space")
            self.take(">")
        shape, entries = self.dims()
        unreduced = self.entries() if self.at("{") else ()
        if self.at("("):
            raise ShardingValidationError(
                "the mesh axis-type suffix is not read: print the type without mesh_axis_types",
                text=self.text,
                pos=self.pos,
            )
        if self.text[self.pos :].strip():
            raise self.fail("end of input")
        return JaxType(dtype, shape, PartitionSpec(entries, unreduced=unreduced))


def parse_jax_type(text: str) -> JaxType:
    """``float32[8@X,4@Y]{U:Z}`` -> its dtype, shape and partition spec (``P('X', 'Y', unreduced={'Z'})``)."""
    return _Reader(text).read()


__all__ = ["JaxType", "looks_like_jax_type", "parse_jax_type"]
