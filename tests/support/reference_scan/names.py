"""Names: which values a dump defines, sharded or not (SSA results, HLO instructions, function
arguments), each with what it is (its op, or its type), so that a value that gains or loses its
sharding is told apart from one a pass created, deleted or renamed (``%0`` of another op is another
value). Read off the dump's bytes (three regex passes in C), never held with them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from support.reference_scan.lines import ByteSource

# ``%5 = stablehlo.add``, ``%r:2 = sdy.manual_computation``, ``%dot.2 = f32[16,32]{1,0}``: name and the
# token after it (an MLIR op, an HLO type).
_SSA = re.compile(rb"(%[\w$.\-]+)(?::\d+)? = (\S+)")
_ARGUMENT = re.compile(rb"%arg(\d+): ([^\s,)]+)")  # an MLIR function argument and its type
_PARAMETER = re.compile(rb"= (\S+) parameter\((\d+)\)")  # an HLO parameter: its type (the entry's come last)
# ``@f:%0:in[1]``: the function (its name may hold ":"), the value, and the part of it.
_KEY = re.compile(r"^(?:@.*:)?(?P<value>%[^#:]+|arg\[\d+\]|result\[\d+\])(?P<part>#\d+|:(?:in|out)(?:\[\d+\])?)?$")

Names = Mapping[bytes, bytes]  # value name -> what it is


@dataclass(frozen=True)
class KeyParts:
    """A value key taken apart: ``value`` is what the dump defines (``%0``, ``arg[1]``), ``part`` the
    element of it (``#1``, ``:in[0]``) or empty."""

    value: str
    part: str

    @property
    def local(self) -> str:
        """The key without its function: ``%0:in[0]`` for ``@f:%0:in[0]``."""
        return self.value + self.part


def key_parts(key: str) -> KeyParts:
    m = _KEY.match(key)
    if m is None:  # not a key trace/values.py makes: at most its function goes
        return KeyParts(key.rpartition(":")[2] if key.startswith("@") else key, "")
    return KeyParts(m.group("value"), m.group("part") or "")


def same_value(a: Names, b: Names, key: str) -> bool:
    """Whether two dumps both define the value ``key`` stands for, as the same thing (the same op, or
    type). A function result, followed by position only, never is: its place in the text has no name."""
    what = defined_as(a, key)
    return what is not None and defined_as(b, key) == what


def defined_as(names: Names, key: str) -> bytes | None:
    """What a dump defines the value ``key`` stands for as (its op, or type); None when it does not
    define it by name (a function result is followed by position only: its place has no name)."""
    plain = key[0] == "%" and "#" not in key and ":" not in key  # most keys: the value itself
    value = key if plain else key_parts(key).value
    if value.startswith("result["):
        return None
    return names.get(value.encode())


def names_in(data: bytes, start: int = 0, end: int | None = None) -> dict[bytes, bytes]:
    """The names ``data[start:end]`` defines, each with what it is: ``%name`` for SSA values and HLO
    instructions, ``arg[N]`` for function arguments and HLO parameters (the last of each number wins:
    XLA prints the entry computation last)."""
    stop = len(data) if end is None else end
    out = dict(_SSA.findall(data, start, stop))
    out.update((b"arg[%s]" % n, t) for n, t in _ARGUMENT.findall(data, start, stop))
    out.update((b"arg[%s]" % n, t) for t, n in _PARAMETER.findall(data, start, stop))
    return out


class NameScanner:
    """A byte source passing ``stream`` through while noting the names its complete lines define;
    ``take`` hands over those noted since the last call."""

    def __init__(self, stream: ByteSource) -> None:
        self.stream = stream
        self.tail = b""  # a line the last read cut
        self.names: dict[bytes, bytes] = {}

    def read(self, n: int = -1, /) -> bytes:
        data = self.stream.read(n)
        if not data:
            if self.tail:
                self.names.update(names_in(self.tail))
                self.tail = b""
            return data
        first, last = data.find(b"\n") + 1, data.rfind(b"\n") + 1
        if not first:
            self.tail += data
            return data
        self.names.update(names_in(self.tail + data[:first]))
        self.names.update(names_in(data, first, last))
        self.tail = data[last:]
        return data

    def take(self) -> Names:
        """The names noted since the last call (the reader reads ahead: a dump's own give or take the
        start of the next one, in a file that holds several)."""
        out, self.names = self.names, {}
        return out


__all__ = ["KeyParts", "NameScanner", "Names", "defined_as", "key_parts", "names_in", "same_value"]
