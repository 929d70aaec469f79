"""Names: which values a dump defines, sharded or not (SSA results, HLO instructions, function
arguments), each with what it is (an MLIR op and the operands it names, an HLO type), so that a
value that gains or loses its sharding is told apart from one a pass created, deleted or renamed
(``%0`` of another op is another value). The native scan reads them (``Scan.defined``); this is how trace asks them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shardconv.core.records import record
from shardconv.scan.regions import results_on_line

if TYPE_CHECKING:
    from shardconv.scan.table import Names

# ``@f:%0:in[1]``: the function (its name may hold ":"), the value, and the part of it.
_KEY = re.compile(
    r"^(?P<function>@.*:)?(?P<value>%[^#:]+|arg\[\d+\]|result\[\d+\])(?P<part>#\d+|:(?:in|out)(?:\[\d+\])?)?$"
)


@record
class KeyParts:
    """A value key taken apart: ``value`` is what the dump defines (``%0``, ``arg[1]``) in ``function``
    (``@f:``, empty for the entry one), ``part`` the element of it (``#1``, ``:in[0]``) or empty."""

    value: str
    part: str
    function: str = ""

    @property
    def local(self) -> str:
        """The key without its function: ``%0:in[0]`` for ``@f:%0:in[0]``."""
        return self.value + self.part


def key_parts(key: str) -> KeyParts:
    m = _KEY.match(key)
    if m is None:  # not a key trace/values.py makes: at most its function goes
        if key.startswith("@"):
            function, _, value = key.rpartition(":")
            return KeyParts(value, "", function + ":")
        return KeyParts(key, "")
    return KeyParts(m.group("value"), m.group("part") or "", m.group("function") or "")


def printed_name(key: str, path: str, line: int) -> str:
    """The name the dump prints for the value ``key`` sits on line ``line`` of ``path``: an element of an
    op that names its results apart (``%values, %indices = mhlo.topk``) is its own name (``%indices``,
    not ``%values#1``); any other key is itself."""
    parts = key_parts(key)
    if not parts.part.startswith("#"):
        return key
    results = results_on_line(path, line)
    i = int(parts.part[1:])
    if i >= len(results) or results[0].partition("#")[0] != parts.value:
        return key
    return parts.function + results[i]


def same_value(a: Names, b: Names, key: str) -> bool:
    """Whether two dumps both define the value ``key`` stands for, as the same thing (the same op on the
    same operands, or HLO type). A function result, followed by position only, never is: its place in the
    text has no name."""
    what = defined_as(a, key)
    return what is not None and defined_as(b, key) == what


# Shardy's export turns a sharding constraint into a reshard of the same operand (the scan's names say
# so of their definitions too): one value, whichever of the two ops holds it.
_SAME_OP = {"sdy.reshard": "sdy.sharding_constraint"}


def op_identity(op: str | None) -> str | None:
    """The op a value is followed by: ``sdy.reshard`` is the constraint it was made from."""
    return _SAME_OP.get(op, op) if op is not None else None


def defined_as(names: Names, key: str) -> bytes | None:
    """What a dump defines the value ``key`` stands for as (its op and operands, or HLO type), in the
    key's own function: functions number their values apart, and ``%0`` of ``@f`` is not the entry's
    ``%0``. None when it does not define it by name (a function result is followed by position only:
    its place has no name)."""
    parts = key_parts(key)
    if parts.value.startswith("result["):
        return None
    return names.get((parts.function + parts.value).encode())


__all__ = ["KeyParts", "defined_as", "key_parts", "op_identity", "same_value"]
