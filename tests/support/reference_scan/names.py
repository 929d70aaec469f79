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
_SYMBOL = re.compile(rb" (@[\w$.\-]*)")
# The results an op lists before its last one (``%values, %indices = mhlo.topk``): each is defined too.
# (they open the line: ``(%iterArg = %0, %iterArg_0 = %1)`` of a while lists no results)
_EARLIER_LIST = re.compile(rb"[ \t]*((?:%[\w$.\-]+(?::\d+)?, )+)$")
_EARLIER = re.compile(rb"(%[\w$.\-]+)(?::\d+)?, ")
_ARGUMENT = re.compile(rb"%arg(\d+): ([^\s,)]+)")  # an MLIR function argument and its type
_PARAMETER = re.compile(rb"= (\S+) parameter\((\d+)\)")  # an HLO parameter: its type (the entry's come last)
# A function opens at a line holding ``func.func ... @name`` (its name bare, or quoted: the bytes between
# the quotes); a module header on such a line closes it. HLO instruction names are the module's own.
_MODULE = re.compile(rb"\s*(?:HloModule\s|module\b|//\s*-----)")
_FUNCTION = re.compile(rb"func\.func[^@]*@(?:\"((?:[^\"\\]|\\.)*)(\"?)|([\w$.\-]*))")


def names_in(data: bytes, start: int = 0, end: int | None = None) -> dict[bytes, bytes]:
    """The names ``data[start:end]`` defines, each with what it is: ``%name`` for SSA values and HLO
    instructions, ``arg[N]`` for function arguments and HLO parameters (of a number, a parameter wins and
    otherwise the last). A name outside the entry function is keyed after its function, as trace keys
    values: ``@f:%0``, ``@f:arg[0]`` (each function numbers its values from ``%0``)."""
    stop = len(data) if end is None else end
    out: dict[bytes, bytes] = {}
    params: set[bytes] = set()
    bounds = [*_scope_lines(data, start, stop), (stop, b"")]
    prefix, at = b"", start
    for line_start, opened in bounds:
        regions = _Regions(data, at)
        first_end = data.find(b"\n", at, line_start)
        first = data[at : line_start if first_end < 0 else first_end]
        if prefix == b"" and _opens_main(first):
            for i, ty in enumerate(_result_types(first)):
                _define(out, params, b"result[%d]" % i, ty)
        for m in _SSA.finditer(data, at, line_start):
            what = _what(data, m, line_start)
            if b"[" not in m[2]:  # an MLIR op: its place among its region's ops of its kind
                symbol = _SYMBOL.match(data, m.end())
                what += b" #%d" % regions.place(m.start(2), what.split(b" ", 1)[0] + (symbol[1] if symbol else b""))
            for name in (*_EARLIER.findall(data, _list_start(data, m.start(), at), m.start()), m[1]):
                _define(out, params, prefix + name, what)
        for n, t in _ARGUMENT.findall(data, at, line_start):
            _define(out, params, prefix + b"arg[%s]" % n, t)
        for t, n in _PARAMETER.findall(data, at, line_start):
            params.add(prefix + b"arg[%s]" % n)
            out[prefix + b"arg[%s]" % n] = t
        prefix, at = opened, line_start
    return out


class _Regions:
    """Per region (told by indentation: a line less indented than a region's ops closes it), how many ops
    of each kind define values, for the place of each op in a function read from ``start`` on."""

    def __init__(self, data: bytes, start: int) -> None:
        self.data, self.read = data, start
        self.levels: list[tuple[int, dict[bytes, int]]] = []

    def _close(self, indent: int) -> None:
        while self.levels and self.levels[-1][0] > indent:
            self.levels.pop()

    def place(self, op: int, kind: bytes) -> int:
        """The place (from 1) of the op at ``op`` among the ops of ``kind`` of its region so far."""
        line = self.data.rfind(b"\n", 0, op) + 1
        if line >= self.read:
            for text in self.data[self.read : line].split(b"\n"):
                body = text.lstrip(b" \t")
                if body and body[:1] not in _BLANK:
                    self._close(len(text) - len(body))
            end = self.data.find(b"\n", op)
            self.read = len(self.data) if end < 0 else end + 1
        indent = len(self.data[line:op]) - len(self.data[line:op].lstrip(b" \t"))
        self._close(indent)
        if not self.levels or self.levels[-1][0] < indent:
            self.levels.append((indent, {}))
        counts = self.levels[-1][1]
        counts[kind] = counts.get(kind, 0) + 1
        return counts[kind]


def _list_start(data: bytes, end: int, floor: int) -> int:
    """Where the results listed before the one defined at ``end`` begin (``end`` itself when none is)."""
    line_start = max(data.rfind(b"\n", floor, end) + 1, floor)
    m = _EARLIER_LIST.match(data, line_start, end)
    return m.start(1) if m is not None else end


def _define(out: dict[bytes, bytes], params: set[bytes], key: bytes, what: bytes) -> None:
    if key not in params:
        out[key] = what


def _scope_lines(data: bytes, start: int, stop: int) -> list[tuple[int, bytes]]:
    """(where it starts, the prefix after it) of each line of ``data[start:stop]`` that opens a function."""
    found, at = [], start
    for line in data[start:stop].split(b"\n"):
        if b"func.func" in line:
            prefix = _scope_prefix(line)
            if prefix is not None:
                found.append((at, prefix))
        at += len(line) + 1
    return found


def _scope_prefix(line: bytes) -> bytes | None:
    """The key prefix after a ``func.func`` line (empty in the entry function ``@main``, or after a module
    header), or None when it names no function."""
    line = line.rstrip()
    if line.lstrip().startswith(b"HloModule") or _MODULE.match(line):
        return b""
    f = _FUNCTION.search(line)
    if f is None:
        return None
    if f[3] is not None:
        name = f[3]
    else:  # quoted: the bytes between the quotes; an unterminated name runs to the line's last byte
        a = f.start(1)
        name = f[1] if f[2] else line[a : max(len(line) - 1, a)]
    return b"" if name == b"main" else b"@" + name.decode("utf-8", "replace").encode() + b":"


def _opens_main(line: bytes) -> bool:
    """Whether ``line`` opens the entry function (``func.func @main(``)."""
    bare = line.rstrip()
    header = bare.lstrip().startswith(b"HloModule") or _MODULE.match(bare) is not None
    return b"func.func" in line and not header and _scope_prefix(line) == b""


def _result_types(line: bytes) -> list[bytes]:
    """The result types a ``func.func`` line lists after its arguments' ``) -> ``: one type, or each of a
    parenthesized list, without its attributes; none when it lists none."""
    p = line.find(b"func.func")
    open_ = line.find(b"(", p) if p >= 0 else -1
    close = _top_level(line, open_ + 1, len(line), ord(")")) if open_ >= 0 else None
    if close is None or not line.startswith(b" -> ", close + 1):
        return []
    rest = line[close + 5 :]
    if not rest.startswith(b"("):
        return [_bare_type(rest)]
    end = _top_level(rest, 1, len(rest), ord(")"))
    if end is None:
        return []
    types, start = [], 1
    while (comma := _top_level(rest, start, end, ord(","))) is not None:
        types.append(_bare_type(rest[start:comma]))
        start = comma + 1
    types.append(_bare_type(rest[start:end]))
    return types


def _bare_type(text: bytes) -> bytes:
    brace = text.find(b" {")
    text = text if brace < 0 else text[:brace]
    attributes = text.find(b" attributes")
    return (text if attributes < 0 else text[:attributes]).strip(_BLANK)


def _top_level(data: bytes, start: int, stop: int, want: int) -> int | None:
    """The first ``want`` in ``data[start:stop]`` outside brackets opened there (``()[]{}<>``, not the ``>``
    of ``->``) and strings; a closing bracket not opened there ends the search."""
    depth, i = 0, start
    while i < stop:
        c = data[i]
        if c == 0x22:  # '"'
            end = _string_end(data, i)
            if end is None:
                return None
            i = end
            continue
        if c in b"([{<":
            depth += 1
        elif c == 0x3E and i > 0 and data[i - 1] == 0x2D:  # the > of ->
            pass
        elif c in b")]}>" and depth > 0:
            depth -= 1
        elif c == want and depth == 0:
            return i
        elif c in b")]}>":
            return None
        i += 1
    return None


def _string_end(data: bytes, i: int) -> int | None:
    """Past the string whose quote is at ``data[i]`` (backslash escapes), None when it does not end."""
    j = i + 1
    while j < len(data):
        found = [k for k in (data.find(b'"', j), data.find(b"\\", j)) if k >= 0]
        if not found:
            return None
        k = min(found)
        if data[k] == 0x22:
            return k + 1
        if k + 1 >= len(data):
            return None
        j = k + 2
    return None


def _what(data: bytes, m: re.Match[bytes], stop: int) -> bytes:
    """An HLO instruction is its type (its name is stable across passes); an MLIR op (a token with no
    ``[``) is the op, the symbol right after it (a custom call's target, a call's callee), the operands
    it names before its attributes and its result type: a pass that renumbers values gives ``%23`` to
    another ``dot_general``, which reads other operands, ``%37 = reshape %36`` of another type is
    another value, and so is a custom call of another target (``names_in`` adds its place among the
    function's ops of its kind: the same text at another place is another op)."""
    token = m[2]
    if token == b"sdy.reshard":  # what Shardy's export makes of a constraint: the same op on the same operand
        token = b"sdy.sharding_constraint"
    if b"[" in token:
        return token
    ends = [e for e in (data.find(b"{", m.end(), stop), data.find(b"\n", m.end(), stop)) if e >= 0]
    rest = data[m.end() : min(ends, default=stop)]
    symbol = _SYMBOL.match(data, m.end())
    what = b" ".join([token, *([symbol[1]] if symbol else []), *_OPERAND.findall(rest)])
    line_end = data.find(b"\n", m.end(), stop)
    result = _result_type(data[m.end() : stop if line_end < 0 else line_end])
    return what if result is None else what + b" : " + result


_BLANK = b" \t\n\r\x0c"  # (the ASCII whitespace the core trims)


def _result_type(line: bytes) -> bytes | None:
    """The type an MLIR op's line ends with: after its last `` : `` before a trailing ``attributes {``,
    after a function type's ``->``, without a region's opening ``{``."""
    line = line.split(b" attributes {", 1)[0]
    at = line.rfind(b" : ")
    if at < 0:
        return None
    ty = line[at + 3 :]
    trimmed = ty.rstrip(_BLANK)
    ty = trimmed[:-1] if trimmed.endswith(b"{") else ty
    arrow = ty.rfind(b"->")
    ty = (ty if arrow < 0 else ty[arrow + 2 :]).strip(_BLANK)
    return ty or None


__all__ = ["names_in"]
