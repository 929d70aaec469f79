"""Names: which values a dump defines, sharded or not (SSA results, HLO instructions, function
arguments), each with what it is (its op, or its type), so that a value that gains or loses its
sharding is told apart from one a pass created, deleted or renamed (``%0`` of another op is another
value). Read off the dump's bytes (three regex passes in C), never held with them."""

from __future__ import annotations

import re


# ``%5 = stablehlo.add``, ``%r:2 = sdy.manual_computation``, ``%dot.2 = f32[16,32]{1,0}``: name and the
# token after it (an MLIR op, an HLO type); an op's operands follow it (``_what``).
_SSA = re.compile(rb"(%[\w$.\-]+)(?::\d+)? = (\S+)")
_OPERAND = re.compile(rb"%[\w$.\-]+")
_ARGUMENT = re.compile(rb"%arg(\d+): ([^\s,)]+)")  # an MLIR function argument and its type
_PARAMETER = re.compile(rb"= (\S+) parameter\((\d+)\)")  # an HLO parameter: its type (the entry's come last)
# ``@f:%0:in[1]``: the function (its name may hold ":"), the value, and the part of it.
def names_in(data: bytes, start: int = 0, end: int | None = None) -> dict[bytes, bytes]:
    """The names ``data[start:end]`` defines, each with what it is: ``%name`` for SSA values and HLO
    instructions, ``arg[N]`` for function arguments and HLO parameters (the last of each number wins:
    XLA prints the entry computation last)."""
    stop = len(data) if end is None else end
    out = {m[1]: _what(data, m, stop) for m in _SSA.finditer(data, start, stop)}
    out.update((b"arg[%s]" % n, t) for n, t in _ARGUMENT.findall(data, start, stop))
    out.update((b"arg[%s]" % n, t) for t, n in _PARAMETER.findall(data, start, stop))
    return out


def _what(data: bytes, m: re.Match[bytes], stop: int) -> bytes:
    """An HLO instruction is its type (its name is stable across passes); an MLIR op (a token with no
    ``[``) is the op and the operands it names before its attributes: a pass that renumbers values gives
    ``%23`` to another ``dot_general`` of the same type, which reads other operands."""
    token = m[2]
    if b"[" in token:
        return token
    ends = [e for e in (data.find(b"{", m.end(), stop), data.find(b"\n", m.end(), stop)) if e >= 0]
    rest = data[m.end() : min(ends, default=stop)]
    return b" ".join([token, *_OPERAND.findall(rest)])


__all__ = ["names_in"]
