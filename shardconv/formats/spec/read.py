"""Partition specs as text: JAX ``P(None, ('d','b'), P.UNCONSTRAINED, unreduced={'x'})`` / ``PartitionSpec(...)``
and torch-xla tuples, whose axes may be indices into the mesh's axis order (``(0, None)``).

A tiny tokenizer and recursive descent; nothing is evaluated.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from typing import Any

from shardconv.core.arguments import require_text, type_error
from shardconv.core.errors import NotExpressibleError, ShardingSyntaxError
from shardconv.core.model import UNCONSTRAINED, AxisName, PartitionEntry, PartitionSpec
from shardconv.core.sources import remember

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<name>[A-Za-z_][A-Za-z_0-9.]*)|(?P<int>-?\d+)|(?P<punct>[(),\[\]{}=]))"""
)
_PREFIXES = ("P", "PartitionSpec", "jax.sharding.PartitionSpec", "jax.sharding.P", "sharding.PartitionSpec")
_UNCONSTRAINED = {f"{p}.UNCONSTRAINED" for p in _PREFIXES} | {"UNCONSTRAINED"}


_SPACE = re.compile(r"\s*")
_MAX_INDEX_DIGITS = 19  # a mesh-axis index past int64 is no index (and int() of 4,300+ digits raises)


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """The tokens, each (kind, text, position), as the parser asks for them: one pass, never a copy of the
    rest of the text, so a spec that goes wrong early is refused before the rest is read."""
    end = len(text)
    pos = 0
    while True:
        m = _TOKEN.match(text, pos)
        if m is None:
            at = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches
            if at == end:
                return
            raise ShardingSyntaxError(f"unexpected character {text[at]!r} in partition spec", text=text, pos=at)
        kind = m.lastgroup or ""
        yield kind, m.group(kind), m.start(kind)
        pos = m.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.end = ("eof", "", len(text))
        self.cur = next(self.toks, self.end)  # the token not yet consumed
        self.nxt: tuple[str, str, int] | None = None  # the one after it, once looked at

    def peek(self) -> tuple[str, str, int]:
        return self.cur

    def peek_next(self) -> tuple[str, str, int]:
        if self.nxt is None:
            self.nxt = next(self.toks, self.end)
        return self.nxt

    def advance(self) -> None:
        if self.nxt is None:
            self.cur = next(self.toks, self.end)
        else:
            self.cur, self.nxt = self.nxt, None

    def take(self, value: str) -> None:
        kind, val, pos = self.peek()
        if val != value or kind == "str":
            raise ShardingSyntaxError(
                f"expected {value!r} in partition spec", text=self.text, pos=pos, expected=(value,)
            )
        self.advance()

    def fail(self, what: str) -> ShardingSyntaxError:
        _, val, pos = self.peek()
        return ShardingSyntaxError(f"expected {what}, got {val or 'end of input'!r}", text=self.text, pos=pos)

    def spec(self) -> PartitionSpec:
        kind, val, _ = self.peek()
        if kind == "name" and val in _PREFIXES:
            self.advance()
        elif kind == "name" and val != "None":
            raise self.fail("P(...), PartitionSpec(...) or a tuple")
        close = {"(": ")", "[": "]"}.get(self.peek()[1])
        if close is None or self.peek()[0] == "str":
            raise self.fail("'('")
        self.advance()
        entries: list[PartitionEntry] = []
        unreduced: tuple[str, ...] = ()
        while self.peek()[1] != close:
            if self._keyword_next():
                unreduced = self.unreduced()
            else:
                entries.append(self.entry())
            if self.peek()[1] != close:
                self.take(",")
        self.advance()
        if self.peek()[0] != "eof":
            raise self.fail("end of input")
        return PartitionSpec(tuple(entries), unreduced)

    def _keyword_next(self) -> bool:
        nxt = self.peek_next()
        return self.peek()[0] == "name" and nxt[1] == "=" and nxt[0] == "punct"

    def unreduced(self) -> tuple[str, ...]:
        """``unreduced={'x', 'y'}`` (JAX's keyword; a set, so ``{}``, ``()`` and ``[]`` are all accepted)."""
        _, key, pos = self.peek()
        if key != "unreduced":
            raise ShardingSyntaxError(
                f"unsupported partition spec keyword {key!r}; only unreduced= has a Shardy form",
                text=self.text,
                pos=pos,
            )
        self.advance()
        self.advance()
        close = {"{": "}", "(": ")", "[": "]"}.get(self.peek()[1])
        if close is None or self.peek()[0] == "str":
            raise self.fail("'{'")
        self.advance()
        names: list[str] = []
        while self.peek()[1] != close:
            k, v, p = self.peek()
            if k != "str":
                raise self.fail("a quoted axis name")
            self.advance()
            names.append(_unquote(v, self.text, p))
            if self.peek()[1] != close:
                self.take(",")
        self.advance()
        return tuple(names)

    def entry(self) -> PartitionEntry:
        kind, val, _ = self.peek()
        if kind == "name" and val == "None":
            self.advance()
            return None
        if kind == "name" and val in _UNCONSTRAINED:
            self.advance()
            return UNCONSTRAINED
        if kind in ("str", "int"):
            return self.axis()
        if val == "(" and kind == "punct":
            self.advance()
            names: list[AxisName] = []
            while self.peek()[1] != ")":
                if self.peek()[0] not in ("str", "int"):
                    raise self.fail("a quoted axis name or a mesh-axis index")
                names.append(self.axis())
                if self.peek()[1] != ")":
                    self.take(",")
            self.advance()
            if not names:
                return None
            return tuple(names)
        raise self.fail("None, P.UNCONSTRAINED, an axis name or index, or a tuple of them")

    def axis(self) -> AxisName:
        """A quoted axis name, or torch-xla's index into the mesh's axis order."""
        kind, val, pos = self.peek()
        self.advance()
        if kind == "str":
            return _unquote(val, self.text, pos)
        if val.startswith("-"):
            raise ShardingSyntaxError(f"mesh-axis index {val} is negative", text=self.text, pos=pos)
        if len(val.lstrip("0")) > _MAX_INDEX_DIGITS:
            raise ShardingSyntaxError(f"mesh-axis index {val[:20]}... is too large", text=self.text, pos=pos)
        return int(val)


def _unquote(token: str, text: str = "", pos: int = 0) -> str:
    """A quoted name read as the Python literal it is (the printer writes ``repr()``)."""
    if "\\" not in token:  # no escape: the name is what the quotes hold
        return token[1:-1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(ast.literal_eval(token))
    except (SyntaxError, ValueError):
        raise ShardingSyntaxError("invalid escape in axis name", text=text, pos=pos) from None


def parse_partition_spec(text: str) -> PartitionSpec:
    """A JAX or torch-xla partition spec: ``P(None, ('d','b'), 'c')``, ``P(P.UNCONSTRAINED, 'y', unreduced={'x'})``,
    ``(None, 'model')``, ``((0, 1), None)``."""
    return remember(_Parser(require_text(text, "parse_partition_spec")).spec(), text)


def spec_from_values(values: tuple[object, ...], function: str = "from_partition_spec") -> PartitionSpec:
    """A spec written as Python values, as torch-xla takes it: ``(0, None)``, ``(('x', 'y'), None)``."""
    def axis(v: object) -> AxisName:
        if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
            return v
        raise type_error(
            function, "spec", "entries of None, an axis name, a mesh-axis index >= 0 or a tuple of those", v
        )

    entries: list[PartitionEntry] = []
    for v in values:
        if v is None or v is UNCONSTRAINED:
            entries.append(v)
        elif isinstance(v, tuple):
            entries.append(tuple(map(axis, v)) or None)
        else:
            entries.append(axis(v))
    return PartitionSpec(tuple(entries))


def spec_from_jax(spec: Any) -> PartitionSpec:
    """A jax ``PartitionSpec`` as the model, read by its attributes (jax is not imported): ``P.UNCONSTRAINED``
    and ``unreduced`` kept; ``reduced`` has no Shardy sharding form and raises."""
    if getattr(spec, "reduced", None):
        raise NotExpressibleError(f"{spec!r} has reduced axes, which have no Shardy sharding form")
    entries: list[PartitionEntry] = []
    for p in spec.partitions:
        if p is type(spec).UNCONSTRAINED:
            entries.append(UNCONSTRAINED)
        elif p is None or isinstance(p, str):
            entries.append(p)
        else:
            entries.append(tuple(p) or None)
    return PartitionSpec(tuple(entries), tuple(sorted(spec.unreduced)))


__all__ = ["parse_partition_spec", "spec_from_jax", "spec_from_values"]
