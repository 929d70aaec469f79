"""Partition specs as text: JAX ``P(None, ('d','b'), 'c')`` / ``PartitionSpec(...)`` and torch-xla tuples.

A tiny tokenizer and recursive descent; nothing is evaluated.
"""

from __future__ import annotations

import re

from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.model import PartitionEntry, PartitionSpec

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z_][A-Za-z_0-9.]*)|(?P<int>-?\d+)|(?P<punct>[(),\[\]]))"""
)
_PREFIXES = ("P", "PartitionSpec", "jax.sharding.PartitionSpec", "jax.sharding.P", "sharding.PartitionSpec")


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            at = len(text) - len(text[pos:].lstrip())
            raise ShardingSyntaxError(f"unexpected character {text[at]!r} in partition spec", text=text, pos=at)
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", len(self.text))

    def take(self, value: str) -> None:
        kind, val, pos = self.peek()
        if val != value or kind == "str":
            raise ShardingSyntaxError(f"expected {value!r} in partition spec", text=self.text, pos=pos, expected=(value,))
        self.i += 1

    def fail(self, what: str) -> ShardingSyntaxError:
        _, val, pos = self.peek()
        return ShardingSyntaxError(f"expected {what}, got {val or 'end of input'!r}", text=self.text, pos=pos)

    def spec(self) -> PartitionSpec:
        kind, val, _ = self.peek()
        if kind == "name" and val in _PREFIXES:
            self.i += 1
        elif kind == "name" and val != "None":
            raise self.fail("P(...), PartitionSpec(...) or a tuple")
        close = {"(": ")", "[": "]"}.get(self.peek()[1])
        if close is None or self.peek()[0] == "str":
            raise self.fail("'('")
        self.i += 1
        entries: list[PartitionEntry] = []
        while self.peek()[1] != close:
            entries.append(self.entry())
            if self.peek()[1] != close:
                self.take(",")
        self.i += 1
        if self.peek()[0] != "eof":
            raise self.fail("end of input")
        return PartitionSpec(tuple(entries))

    def entry(self) -> PartitionEntry:
        kind, val, pos = self.peek()
        if kind == "name" and val == "None":
            self.i += 1
            return None
        if kind == "str":
            self.i += 1
            return _unquote(val, self.text, pos)
        if kind == "int":
            raise ShardingSyntaxError(
                "integer mesh-axis indices (torch-xla) need the mesh's axis names: write the names instead",
                text=self.text,
                pos=pos,
            )
        if val == "(":
            self.i += 1
            names: list[str] = []
            while self.peek()[1] != ")":
                k, v, p = self.peek()
                if k != "str":
                    if k == "int":
                        raise ShardingSyntaxError("integer mesh-axis indices need axis names", text=self.text, pos=p)
                    raise self.fail("a quoted axis name")
                self.i += 1
                names.append(_unquote(v, self.text, p))
                if self.peek()[1] != ")":
                    self.take(",")
            self.i += 1
            if not names:
                return None
            return tuple(names)
        raise self.fail("None, an axis name or a tuple of axis names")


def _unquote(token: str, text: str = "", pos: int = 0) -> str:
    """A quoted name read as the Python literal it is (the printer writes ``repr()``)."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(ast.literal_eval(token))
    except (SyntaxError, ValueError):
        raise ShardingSyntaxError("invalid escape in axis name", text=text, pos=pos) from None


def parse_partition_spec(text: str) -> PartitionSpec:
    """``P(None, ('d','b'), 'c')``, ``PartitionSpec(...)``, ``(None, 'model')``, ``(('batch','model'), None)``."""
    return _Parser(text).spec()


__all__ = ["parse_partition_spec"]
