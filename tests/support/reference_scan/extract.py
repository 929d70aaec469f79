"""Extraction: the sharding-related values on one logical line of a dump (HLO text or MLIR; both
syntaxes are tried, so mixed logs work), each with its span and the tensor type and value it annotates.
Just enough lexing to cut values out (balanced brackets and strings from ``shardconv.text.brackets`` on
a latin-1 view of the line, so offsets are bytes); no sharding grammar here (that is ``formats``)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace
from operator import itemgetter

from support.reference_scan.keywords import MODULE_START, NEEDLES, search_keyword
from support.reference_scan.plain_keys import MLIR_RESULT, PlainKey, op_tail_key, plain_hlo_key, plain_op_key
from support.reference_scan.shapes import hlo_shapes, mlir_shapes
from shardconv.scan.sites import PLAIN, Shape, SiteKind, ValueSite
from shardconv.core.errors import ShardingSyntaxError
from shardconv.text.brackets import skip_group, string_end
from shardconv.text.escapes import EscapeError
from shardconv.text.layered import StringEncoding, decode_layered, encode_layered


def match_close(line: str, open_pos: int) -> int:
    """Index just past the bracket closing ``line[open_pos]`` (quotes skipped), or -1 if unclosed.
    ``line`` is the latin-1 view of a dump line, so offsets are byte offsets."""
    if line.startswith("<=", open_pos):
        return -1  # HLO's iota operator, not a bracket
    try:
        return skip_group(line, open_pos, own_kind_only=True, comments=False)
    except ShardingSyntaxError:
        return -1


# ``"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name = "NAME"}>``: a line whose op is sdy.mesh in generic form, and
# the first sym_name on it
_GENERIC_MESH_NAME = re.compile(rb'\s*"sdy\.mesh"\(.*?sym_name = "([^"]*)"', re.S)
_MESH_DECL_NAME = re.compile(rb'sdy\.mesh\s+@([\w$.\-]+|"(?:[^"\\]|\\.)*")')
_HLO_INSTR = re.compile(rb"^\s*(?:ROOT\s+)?(%?[\w.\-]+)\s*=\s*")
_HLO_ARRAY = re.compile(rb"[a-z][a-z0-9]*\[[^\]]*\]")
# an entry of an ``xla.sdy.meshes`` dict; a name starts where its run of name characters starts (tried from
# inside a run, a name ends where the whole run's would, so that match is the same: only slower, quadratic
# in a long run)
_MESH_ENTRY = re.compile(rb'((?<![\w$.\-])[\w$.\-]+|"[^"]*")\s*=\s*(#sdy\.mesh<)')
_MLIR_MODULE = re.compile(rb"^\s*module\b(?:\s+@([\w$.\-]+))?")
MEMO_LIMIT = 1 << 14
# ``%arg: tensor<...> {sdy.sharding = #sdy.sharding<@mesh, [...]>}`` up to the next argument.
_ARG_SHARDING = re.compile(
    rb'(tensor<[^>]*>) \{sdy\.sharding = (\#sdy\.sharding<@[\w$.\-]+, \[(?:[^\]"]|"[^"]*")*\]'
    rb"(?:, \w+=\{[^}]*\})*>)\}(?:, |\)|$)"
)
# A whole argument ``%name: tensor<...> {sdy.sharding = #sdy.sharding<...>}`` (for findall over a signature).
_PLAIN_ARG = re.compile(
    rb'((%[\w#.$\-]+): (tensor<[^>]*>) \{sdy\.sharding = (\#sdy\.sharding<@[\w$.\-]+, \[[^\]"]*(?:"[^"]*"[^\]"]*)*\]'
    rb"(?:, \w+=\{[^}]*\})*>)\})(?=, %|\))"
)

_FUNC = re.compile(rb"\bfunc\.func\b[^(]*?@[\w$.\-\"]+\s*\(")
_ARG = re.compile(rb"(%[\w#.$\-]+):\s*")
_LOC_TAIL = re.compile(rb"\s+loc\((?:[^()]|\([^()]*\))*\)\s*$")
_RESULT_NAMES = re.compile(rb"%[\w#.$\-]+(?::(\d+))?")  # each name of ``%a:2, %b =`` and its count
_CLOSE_REGION = re.compile(rb"^(\s*)\}\s*(?:\{.*\}\s*)?:\s*(.*)$")  # (an attribute dict may follow the region)

_PER_VALUE_PREFIXES = (
    ("#sdy.sharding_per_value<", SiteKind.SDY_PER_VALUE),
    ("#sdy.sharding<", SiteKind.SDY_SHARDING),
    ("#sdy.mesh<", SiteKind.SDY_MESH),
    ("#sdy<manual_axes", SiteKind.MANUAL_AXES),
)


_BLANKS = " \t\n\r\x0b\x0c"


_SHARD_LIST = re.compile(r"\s*(?:split_axes|halo_sizes|sharded_dims_offsets)(?!\w)\s*=\s*(?=\[)", re.ASCII)


def _shard_lists_end(t: str, i: int) -> int:
    """The end of a ``shard.sharding`` op's last ``LIST = [...]`` after its grid name at ``i``; -1 when one
    is not closed on its line."""
    while (m := _SHARD_LIST.match(t, i)) is not None:
        i = match_close(t, m.end())
        if i < 0:
            return -1
    return i


# The groups of a keyword whose value does not open after it (see ``_dispatch``).
_BAD = ("hlobad", "sdybad", "npbad", "mnpbad", "mstrbad", "meshbad", "shmeshbad", "sdyopbad")


def _bad_value_end(t: str, a: int) -> int:
    """The end of a value no parser reads, from ``a``: its token (to a blank, ``,`` or ``}``, a ``<...>``
    in it taken whole), else the rest of its line."""
    rest = t[a:].split("\n", 1)[0].rstrip(_BLANKS)
    i = 0
    while i < len(rest) and rest[i] not in _BLANKS + ",}":
        if rest[i] == "<":
            e = match_close(rest, i)
            if e < 0:
                return a + len(rest)
            i = e
        else:
            i += 1
    return a + (i or len(rest))


def _inside_string(before: bytes) -> bool:
    """Whether ``before`` (a line up to a value) leaves a string literal open."""
    quoted = escaped = False
    for b in before:
        if escaped:
            escaped = False
        elif quoted and b == 0x5C:
            escaped = True
        elif b == 0x22:
            quoted = not quoted
    return quoted


def _string_kind(key: str, text: bytes) -> SiteKind | None:
    """The kind of value a string under ``key`` holds, from its first bytes as written (maybe cut short)."""
    if key in ("mhlo.sharding", "mhlo.spmd_output_sharding"):
        return SiteKind.HLO
    if text.startswith(b"{"):
        return SiteKind.SDY_MESH if key.endswith("meshes") or b"#sdy.mesh" in text else None
    if not text:
        return _KEY_KINDS.get(key)
    for prefix, kind in _PER_VALUE_PREFIXES:
        p = prefix.encode()
        if text.startswith(p) or p.startswith(text):
            return kind
    return _KEY_KINDS.get(key)


# the kind of value a frontend attribute's key announces, whatever its string holds
_KEY_KINDS = {
    "xla.sdy.sharding": SiteKind.SDY_SHARDING, "xla.sdy.in_shardings": SiteKind.SDY_PER_VALUE,
    "xla.sdy.out_shardings": SiteKind.SDY_PER_VALUE, "xla.sdy.manual_axes": SiteKind.MANUAL_AXES,
    "xla.sdy.meshes": SiteKind.SDY_MESH,
}


@dataclass
class _Pending:
    """A manual/named computation whose operand and result types come on its closing line."""

    indent: int
    lineno: int
    ins: list[ValueSite] = field(default_factory=list)
    outs: list[ValueSite] = field(default_factory=list)


@dataclass(frozen=True)
class _Signature:
    """A ``func.func`` signature on a line, lexed once (its args can number in the thousands)."""

    open_paren: int
    close: int  # just past the closing paren, -1 when it is not on this line
    arg_ends: list[int]  # where each ``%argN: `` ends, in order
    arg_names: list[str]
    result_types: list[int]  # where each result's type after `` -> `` starts


@dataclass
class _Line:
    """One line being scanned, with lazily computed context."""

    text: bytes
    offset: int  # file offset of text[0]
    lineno: int
    col_base: int
    _hlo: tuple[str | None, tuple[Shape, ...] | None] | None = None
    _chars: str | None = None
    _sig: _Signature | bool | None = False  # False: not lexed yet

    @property
    def chars(self) -> str:
        """The line as latin-1 text for ``shardconv.text.brackets`` (same offsets), made once per line."""
        if self._chars is None:
            self._chars = self.text.decode("latin-1")
        return self._chars

    def position(self, i: int) -> tuple[int, int]:
        """1-based line and byte column of ``text[i]``; a logical line may span several (an attribute
        whose value starts on the next line)."""
        nl = self.text.rfind(b"\n", 0, i)
        if nl < 0:
            return self.lineno, self.col_base + i + 1
        return self.lineno + self.text.count(b"\n", 0, i), i - nl

    def physical(self, i: int) -> bytes:
        """The physical line holding ``text[i]`` (the whole text unless the logical line spans several),
        without its line break (a CRLF line's ``\\r`` too: an editor shows the line without it)."""
        if b"\n" not in self.text:
            return self.text
        start = self.text.rfind(b"\n", 0, i) + 1
        end = self.text.find(b"\n", i)
        return self.text[start:end].removesuffix(b"\r") if end >= 0 else self.text[start:]

    def signature(self) -> _Signature | None:
        if self._sig is False:
            f = _FUNC.search(self.text)
            if f is None:
                self._sig = None
            else:
                open_paren = f.end() - 1
                close = _signature_close(self.text, open_paren)
                if close < 0:
                    close = match_close(self.chars, open_paren)
                stop = close if close >= 0 else len(self.text)
                args = list(_ARG.finditer(self.text, open_paren, stop))
                results = _result_starts(self.chars, close) if close >= 0 else []
                self._sig = _Signature(
                    open_paren, close, [a.end() for a in args], [a.group(1).decode() for a in args], results
                )
        return self._sig if isinstance(self._sig, _Signature) else None

    def hlo_context(self) -> tuple[str | None, tuple[Shape, ...] | None]:
        if self._hlo is None:
            self._hlo = _hlo_context(self.text, self.chars)
        return self._hlo


class LineExtractor:
    """Stateful per file: remembers open manual computations until their closing line."""

    def __init__(self, path: str, *, memo_limit: int = MEMO_LIMIT, named: bool = False) -> None:
        self.path = path
        self.pending: list[_Pending] = []
        self.memo_limit = memo_limit  # 0: every line extracted afresh (what --fix needs: every span)
        # A repeat gives the first sites re-pointed at its own line (its value name, span and line), not
        # the first line's sites again: what trace needs, for a replace() instead of an extraction.
        self.named = named
        self.repeats: dict[bytes, list[ValueSite]] = {}  # plain lines by (type, value)
        self.args: dict[tuple[bytes, bytes], ValueSite] = {}  # func.func arguments by (type, sharding)
        # ``named`` only: op lines by what follows their result names, arguments by their text, each with
        # the file offset that key started at (the sites are re-pointed by the difference).
        self.tails: dict[bytes, tuple[list[ValueSite], int]] = {}

    # ---- entry points ----------------------------------------------------------------------
    def scan(self, text: bytes, offset: int, lineno: int, col_base: int = 0, *, plain: bool = False) -> list[ValueSite]:
        """Every site on the line; ``offset`` is the file offset of ``text[0]``. A plain HLO instruction
        line (``plain``: its only keyword is one ``sharding``) whose (type, sharding) was seen before in this
        module gives that line's sites again (the dedup stage counts them; ``named``: re-pointed at this
        line), so the common case costs a few ``bytes.find`` calls."""
        memo = self.memo_limit and not col_base and not self.pending
        found = (plain_hlo_key(text) if plain else plain_op_key(text)) if memo else None
        if found is None:
            if memo and self.named and (tail := op_tail_key(text)) is not None:
                return self._tail(text, offset, lineno, tail)
            return self._scan(text, offset, lineno, col_base)
        key, at = found
        hit = self.repeats.get(key)
        if hit is None:
            sites = self._scan(text, offset, lineno, col_base)
            if self.named and not _one_site_at(sites, text, offset + at):
                return sites  # not a line a repeat can be re-pointed from: never memoized
            if len(self.repeats) >= self.memo_limit:
                self.repeats.clear()
            hit = self.repeats[key] = sites
        elif self.named:
            name = (_HLO_INSTR if plain else MLIR_RESULT).match(text)
            ln = _Line(text, offset, lineno, col_base)
            return [_moved(ln, hit[0], at, name.group(1).decode() if name else None)]
        return hit

    def seen(self, text: bytes, plain: bool) -> list[ValueSite] | None:
        """The sites of an earlier line of this module with the same plain key as ``text``, if any (never
        when ``named``: a repeat is then scanned, re-pointed)."""
        if not self.memo_limit or self.pending or self.named:
            return None
        found = plain_hlo_key(text) if plain else plain_op_key(text)
        return None if found is None else self.repeats.get(found[0])

    def _tail(self, text: bytes, offset: int, lineno: int, tail: PlainKey) -> list[ValueSite]:
        """The sites of an MLIR op line with the tail key ``tail``: an earlier line's re-pointed when one
        had that tail (the values are where the tail puts them; only the result name differs)."""
        key, at = tail
        name = MLIR_RESULT.match(text)
        assert name is not None  # op_tail_key matched it
        value = name.group(1).decode()
        hit = self.tails.get(key)
        if hit is not None:
            ln = _Line(text, offset, lineno, 0)
            return [_moved(ln, s, s.start - hit[1] + at, value) for s in hit[0]]
        sites = self._scan(text, offset, lineno, 0)
        if not self.pending and all(s.value == value for s in sites):  # nothing else hangs on the line
            self._remember(key, sites, offset + at)
        return sites

    def _remember(self, key: bytes, sites: list[ValueSite], start: int) -> None:
        if len(self.tails) >= self.memo_limit:
            self.tails.clear()
        self.tails[key] = (sites, start)

    def _scan(self, text: bytes, offset: int, lineno: int, col_base: int) -> list[ValueSite]:
        ln = _Line(text, offset, lineno, col_base)
        out: list[ValueSite] = []
        if not col_base and MODULE_START.match(text):
            out.append(self._occ(ln, SiteKind.MODULE_START, "module", 0, 0))
            self.repeats.clear()  # a new module: its values are new
            self.args.clear()
            self.tails.clear()
        if self.pending:
            out.extend(self._close_region(ln))
        pos = 0
        nexts = [-1] * len(NEEDLES)
        sig = ln.signature() if self.memo_limit and b"func.func" in text else None
        if sig is not None and len(sig.arg_ends) > 1:
            pos = self._arguments(ln, sig, nexts, out)
        while True:
            m = search_keyword(text, pos, nexts)
            if m is None:
                return out
            try:
                pos = self._dispatch(ln, m, out)
            except EscapeError:
                pos = m.end()
            if pos <= m.start():
                pos = m.end()

    def _arguments(self, ln: _Line, sig: _Signature, nexts: list[int], out: list[ValueSite]) -> int:
        """The values of a long ``func.func`` signature's arguments; returns where the arguments end.
        An argument whose attributes are one ``sdy.sharding`` is read with one regex match, and one
        whose (type, sharding) was seen before in this module gives that first site again."""
        t = ln.text
        stop = sig.close if sig.close >= 0 else len(t)
        if sig.close >= 0 and self._plain_arguments(ln, sig, out):
            return stop
        bounds = [*sig.arg_ends[1:], stop]
        for i, a in enumerate(sig.arg_ends):
            b = bounds[i]
            if t.find(b"sharding", a, b) < 0 and t.find(b"sdy.", a, b) < 0:
                continue
            m = _ARG_SHARDING.match(t, a, b)
            if m is None:  # other attributes: the general search, inside this argument only
                self._argument(ln, a, b, sig.arg_names[i], nexts, out)
                continue
            key = (m.group(1), m.group(2))
            site = self.args.get(key)
            if site is None:
                if len(self.args) >= self.memo_limit:
                    self.args.clear()
                shapes = mlir_shapes(m.group(1))[:1] or None
                site = self.args[key] = self._occ(
                    ln,
                    SiteKind.SDY_SHARDING,
                    "sdy.sharding",
                    m.start(2),
                    m.end(2),
                    value=sig.arg_names[i],
                    shapes=shapes,
                )
            elif self.named:
                site = _moved(ln, site, m.start(2), sig.arg_names[i])
            out.append(site)
        return stop

    def _argument(self, ln: _Line, a: int, b: int, name: str, nexts: list[int], out: list[ValueSite]) -> None:
        """The values of the argument ``ln.text[a:b]`` (its type and attributes) the general way; when
        ``named``, an earlier argument with the same text gives its sites re-pointed instead."""
        t = ln.text
        key = b"arg\0" + t[a:b] if self.named and b"\n" not in t else None  # never an op line's tail
        hit = self.tails.get(key) if key is not None else None
        if hit is not None:
            out.extend(_moved(ln, s, s.start - hit[1] + ln.offset + a, name) for s in hit[0])
            return
        first = len(out)
        pos = a
        while (found := search_keyword(t, pos, nexts)) is not None and found.start() < b:
            pos = max(self._dispatch(ln, found, out), found.end())
        sites = out[first:]
        if key is not None and all(s.value == name and s.end <= ln.offset + b for s in sites):
            self._remember(key, sites, ln.offset + a)

    def _plain_arguments(self, ln: _Line, sig: _Signature, out: list[ValueSite]) -> bool:
        """All arguments at once when each is exactly ``%name: TYPE {sdy.sharding = ...}`` (one findall,
        checked to cover the whole argument list): one site per distinct (type, sharding), handed again
        for the others. False (nothing added) for any other signature."""
        t = ln.text
        a, b = sig.open_paren + 1, sig.close - 1
        found = _PLAIN_ARG.findall(t, a, b + 1)
        n = len(found)
        if n != len(sig.arg_names) or sum(map(len, map(_whole, found))) + 2 * (n - 1) != b - a:
            return False
        if list(map(_name, found)) != [x.encode() for x in sig.arg_names]:
            return False
        keys = list(map(_type_and_sharding, found))
        sites: dict[tuple[bytes, bytes], ValueSite] = {}
        own: dict[tuple[bytes, bytes], int] = {}  # keys whose site was made here: the argument it is
        for i in sorted(dict(zip(reversed(keys), range(n - 1, -1, -1))).values()):
            key = keys[i]
            site = self.args.get(key)
            if site is None:
                own[key] = i
                if len(self.args) >= self.memo_limit:
                    self.args.clear()
                at = t.index(key[1], sig.arg_ends[i])
                shapes = mlir_shapes(key[0])[:1] or None
                site = self.args[key] = self._occ(
                    ln,
                    SiteKind.SDY_SHARDING,
                    "sdy.sharding",
                    at,
                    at + len(key[1]),
                    value=sig.arg_names[i],
                    shapes=shapes,
                )
            sites[key] = site
        if not self.named:
            out.extend(map(sites.__getitem__, keys))
            return True
        for i, key in enumerate(keys):
            site = sites[key]
            if own.get(key) != i:  # another argument's site, re-pointed at this one
                site = _moved(ln, site, t.index(key[1], sig.arg_ends[i]), sig.arg_names[i])
            out.append(site)
        return True

    def finish(self) -> list[ValueSite]:
        """Occurrences still waiting for a closing line at end of file (types unknown)."""
        rest = [o for p in self.pending for o in (*p.ins, *p.outs)]
        self.pending.clear()
        return rest

    # ---- dispatch ----------------------------------------------------------------------------
    def _dispatch(self, ln: _Line, m: re.Match[bytes], out: list[ValueSite]) -> int:
        g = m.lastgroup
        t = ln.chars
        if g == "hlo":
            end = match_close(t, m.end() - 1)
            value, shapes = ln.hlo_context()
            if end < 0:
                return self._unfinished(ln, m, SiteKind.HLO, "sharding=", m.end() - 1, value, shapes, out)
            out.append(self._occ(ln, SiteKind.HLO, "sharding=", m.end() - 1, end, value=value, shapes=shapes))
            return end
        if g in _BAD:  # no value opens after its keyword: the token there is the site
            if ln.text.lstrip().startswith(b"//") or _inside_string(ln.text[: m.end()]):
                return m.end()
            if g == "hlobad":
                kind, key, (value, shapes) = SiteKind.HLO, "sharding=", ln.hlo_context()
            elif g == "sdybad":
                kind, key, (value, shapes) = SiteKind.SDY_SHARDING, "sdy.sharding", _mlir_context(ln, m.start())
            elif g == "mstrbad":
                key, (value, shapes) = m.group("mstrbadkey").decode(), _mlir_context(ln, m.start())
                kind = SiteKind.HLO
            elif g == "meshbad":
                value, shapes = "@" + m.group("meshbadname").decode().strip('"'), None
                kind, key = SiteKind.SDY_MESH, "sdy.mesh"
            elif g == "shmeshbad":
                decl = _MESH_DECL_NAME.search(ln.text, 0, m.start())
                value = "@" + decl.group(1).decode().strip('"') if decl else None
                kind, key, shapes = SiteKind.STABLEHLO_MESH, "stablehlo.mesh", None
            elif g == "sdyopbad":
                key = "sdy." + m.group("sdyopbadname").decode()
                kind, (value, shapes) = SiteKind.SDY_SHARDING_BARE, _mlir_context(ln, m.start())
            else:
                key = "num_partitions" if g == "npbad" else "mhlo.num_partitions"
                kind, value, shapes = SiteKind.NUM_PARTITIONS, "module", None
            end = _bad_value_end(t, m.end())
            site = self._occ(ln, kind, key, m.end(), end, value=value, shapes=shapes)
            out.append(site if end > m.end() else replace(site, broken="unfinished"))
            return m.end()
        if g == "hlofe":
            key = m.group("hlofekey").decode()
            value, shapes = ln.hlo_context()
            if m.group("hlofeopen") == b'"':
                end = string_end(t, m.end() - 1)
                if end < 0:
                    return self._unfinished_string(ln, m, key, value, shapes, out)
                self._string_value(ln, key, m.end(), end - 1, "c", value, shapes, out)
                return end
            end = match_close(t, m.end() - 1)
            if end < 0:
                return self._unfinished(ln, m, SiteKind.SDY_MESH, key, m.end() - 1, value, shapes, out)
            self._mesh_dict(ln, key, m.end() - 1, end, ln.text[m.end() - 1 : end], PLAIN, out)
            return end
        if g in ("hlonp", "mnp"):
            vg = "hlonpv" if g == "hlonp" else "mnpv"
            site = "num_partitions" if g == "hlonp" else "mhlo.num_partitions"
            out.append(self._occ(ln, SiteKind.NUM_PARTITIONS, site, m.start(vg), m.end(vg), value="module"))
            return m.end()
        if g == "mstr":
            key = m.group("mstrkey").decode()
            end = string_end(t, m.end() - 1)
            value, shapes = _mlir_context(ln, m.start())
            if end < 0:
                return self._unfinished_string(ln, m, key, value, shapes, out)
            self._string_value(ln, key, m.end(), end - 1, "mlir", value, shapes, out)
            return end
        if g == "sdyattr":
            end = match_close(t, m.end() - 1)
            kind = {b"sharding": SiteKind.SDY_SHARDING, b"sharding_per_value": SiteKind.SDY_PER_VALUE}.get(
                m.group("sdyattrkind"), SiteKind.SDY_MESH
            )
            if end < 0:
                value, shapes = (None, None) if kind is SiteKind.SDY_MESH else _mlir_context(ln, m.start())
                site = _attr_site(ln.text, m.start(), kind)
                return self._unfinished(ln, m, kind, site, m.start(), value, shapes, out)
            declared = _GENERIC_MESH_NAME.match(ln.text) if kind is SiteKind.SDY_MESH else None
            if declared is not None:  # a mesh declared in generic form: its op's sym_name names it
                name = declared.group(1).decode()
                out.append(self._occ(ln, SiteKind.SDY_MESH, "sdy.mesh", m.start(), end, value="@" + name))
                return end
            value, shapes = (None, None) if kind is SiteKind.SDY_MESH else _mlir_context(ln, m.start())
            site = _attr_site(ln.text, m.start(), kind)
            out.append(self._occ(ln, kind, site, m.start(), end, value=value, shapes=shapes))
            return end
        if g == "meshdecl":
            end = match_close(t, m.end() - 1)
            name = m.group("meshname").decode()
            if end < 0:
                at = "@" + name.strip('"')
                return self._unfinished(ln, m, SiteKind.SDY_MESH, "sdy.mesh", m.end() - 1, at, None, out)
            out.append(self._occ(ln, SiteKind.SDY_MESH, "sdy.mesh", m.end() - 1, end, value="@" + name.strip('"')))
            return end
        if g in ("sdyop", "oparg"):
            end = match_close(t, m.end() - 1)
            site = "sdy." + m.group("sdyopname").decode() if g == "sdyop" else m.group("opargkey").decode() + "="
            value, shapes = _mlir_context(ln, m.start())
            if end < 0:
                return self._unfinished(ln, m, SiteKind.SDY_SHARDING_BARE, site, m.end() - 1, value, shapes, out)
            out.append(self._occ(ln, SiteKind.SDY_SHARDING_BARE, site, m.end() - 1, end, value=value, shapes=shapes))
            return end
        if g == "mclist":
            return self._region_list(ln, m, out)
        if g == "maxes":
            end = match_close(t, m.end() - 1)
            value, _ = _mlir_context(ln, m.start())
            if end < 0:
                return self._unfinished(ln, m, SiteKind.MANUAL_AXES, "manual_axes", m.end() - 1, value, None, out)
            out.append(self._occ(ln, SiteKind.MANUAL_AXES, "manual_axes", m.end() - 1, end, value=value))
            return end
        if g == "unspec":
            value, shapes = ln.hlo_context() if b"custom_call_target" in ln.text else _mlir_context(ln, m.start())
            dims = self._occ(ln, SiteKind.UNSPECIFIED_DIMS, "unspecified_dims", m.start("unspecv"), m.end("unspecv"))
            out.append(replace(dims, value=value, shapes=shapes))
            return m.end()
        if g == "shmesh":
            end = match_close(t, m.end() - 1)
            decl = _MESH_DECL_NAME.search(ln.text, 0, m.start())
            name = "@" + decl.group(1).decode().strip('"') if decl else None
            if end < 0:
                return self._unfinished(ln, m, SiteKind.STABLEHLO_MESH, "stablehlo.mesh", m.end() - 1, name, None, out)
            out.append(self._occ(ln, SiteKind.STABLEHLO_MESH, "stablehlo.mesh", m.end() - 1, end, value=name))
            return end
        if g == "collective":  # the whole `<mesh = ..., axes = [...]>`, named by its mesh (none when inline)
            name = "@" + m.group("collname").decode() if m.group("collname") is not None else None
            open_at = m.start() + len(b"replica_group_mesh_axes")
            end = match_close(t, open_at)
            if end < 0:
                return self._unfinished(ln, m, SiteKind.COLLECTIVE_MESH, "replica_groups", open_at, name, None, out)
            out.append(self._occ(ln, SiteKind.COLLECTIVE_MESH, "replica_groups", open_at, end, value=name))
            return end
        if g in ("shardgrid", "shardsharding"):  # the op from its keyword: a grid to its `)`, a sharding its lists
            grid = g == "shardgrid"
            name = "@" + m.group("gridname" if grid else "shardgrid_name").decode().strip('"')
            kind, key = (SiteKind.SHARD_GRID, "shard.grid") if grid else (SiteKind.SHARD_SHARDING, "shard.sharding")
            end = match_close(t, m.end() - 1) if grid else _shard_lists_end(t, m.end())
            if end < 0:
                return self._unfinished(ln, m, kind, key, m.start(), name, None, out)
            out.append(self._occ(ln, kind, key, m.start(), end, value=name))
            return end
        if g == "expected":
            off = m.group("expectedoff")
            delta = 0 if off is None else -1 if off == b"@above" else 1 if off == b"@below" else int(off[1:])
            marker = self._occ(ln, SiteKind.EXPECTED_ERROR, "expected-error", m.start(), m.end())
            out.append(replace(marker, target_line=ln.lineno + delta))
            return m.end()
        return m.end()  # pragma: no cover - every group is handled above

    def _unfinished(
        self,
        ln: _Line,
        m: re.Match[bytes],
        kind: SiteKind,
        site: str,
        a: int,
        value: str | None,
        shapes: tuple[Shape, ...] | None,
        out: list[ValueSite],
    ) -> int:
        """A value that starts at ``a`` and does not end on its line: a site to the line's end, marked
        unfinished (none on a ``//`` comment line or inside a string literal); the scan goes on past its keyword."""
        t = ln.text
        if not t.lstrip().startswith(b"//") and not _inside_string(t[:a]):
            end = max(a, len(t.rstrip()))
            out.append(replace(self._occ(ln, kind, site, a, end, value=value, shapes=shapes), broken="unfinished"))
        return m.end()

    def _unfinished_string(
        self,
        ln: _Line,
        m: re.Match[bytes],
        key: str,
        value: str | None,
        shapes: tuple[Shape, ...] | None,
        out: list[ValueSite],
    ) -> int:
        """A string value whose closing quote is missing: unfinished, of the kind its key and first bytes say."""
        kind = _string_kind(key, ln.text[m.end() :].rstrip())
        if kind is None:
            return m.end()
        if kind is SiteKind.SDY_MESH:
            shapes = None
        elif key == "mhlo.spmd_output_sharding":
            value = "module"
        return self._unfinished(ln, m, kind, key, m.end() - 1, value, shapes, out)

    # ---- value kinds -------------------------------------------------------------------------
    def _string_value(
        self,
        ln: _Line,
        key: str,
        a: int,
        b: int,
        outer: str,
        value: str | None,
        shapes: tuple[Shape, ...] | None,
        out: list[ValueSite],
    ) -> None:
        """A string attribute: an HLO sharding (``mhlo.sharding``) or an sdy value (``xla.sdy.*``)."""
        raw = ln.text[a:b]
        try:
            data, enc = decode_layered(raw, outer)
        except EscapeError:
            kind = _string_kind(key, raw)
            if kind is None:
                raise
            site = self._occ(ln, kind, key, a - 1, b + 1, value=value, shapes=shapes)
            out.append(replace(site, broken="undecodable"))
            return
        if key in ("mhlo.sharding", "mhlo.spmd_output_sharding"):
            text = data.decode("utf-8", "surrogateescape")
            binary = None if _looks_textual(data) else data
            site = key
            v = "module" if key == "mhlo.spmd_output_sharding" else value
            out.append(
                self._occ(
                    ln,
                    SiteKind.HLO,
                    site,
                    a,
                    b,
                    value=v,
                    shapes=shapes,
                    text=text if binary is None else "",
                    data=binary,
                    encoding=enc,
                )
            )
            return
        text = data.decode("utf-8", "surrogateescape").strip()
        if text.startswith("{") and "#sdy.mesh" in text:
            self._mesh_dict(ln, key, a, b, data, enc, out)
            return
        kind = next((k for prefix, k in _PER_VALUE_PREFIXES if text.startswith(prefix)), _KEY_KINDS.get(key))
        if kind is not None:
            out.append(
                self._occ(
                    ln,
                    kind,
                    key,
                    a,
                    b,
                    value=value,
                    shapes=None if kind is SiteKind.SDY_MESH else shapes,
                    text=text,
                    encoding=enc,
                )
            )

    def _mesh_dict(
        self, ln: _Line, key: str, a: int, b: int, data: bytes, enc: StringEncoding, out: list[ValueSite]
    ) -> None:
        """``{mesh = #sdy.mesh<...>, other = #sdy.mesh<...>}``: one SDY_MESH occurrence per entry."""
        raw = ln.text[a:b]
        cursor = 0
        chars = data.decode("latin-1")
        for m in _MESH_ENTRY.finditer(data):
            end = match_close(chars, m.start(2) + len("#sdy.mesh"))
            if end < 0:  # an entry whose ``<`` does not close inside the dict: unfinished, the dict's rest its text
                name = "@" + m.group(1).decode().strip('"')
                text = data[m.start(2) :].decode("utf-8", "surrogateescape")
                whole = StringEncoding("whole")
                site = self._occ(ln, SiteKind.SDY_MESH, key, a, b, value=name, text=text, encoding=whole)
                out.append(replace(site, broken="unfinished"))
                continue
            mesh_text = data[m.start(2) : end]
            encoded = encode_layered(mesh_text, enc) if enc.outer != "none" else mesh_text
            at = raw.find(encoded, cursor)
            sa, sb = (a + at, a + at + len(encoded)) if at >= 0 else (a, b)
            cursor = at + len(encoded) if at >= 0 else cursor
            name = "@" + m.group(1).decode().strip('"')
            out.append(
                self._occ(
                    ln,
                    SiteKind.SDY_MESH,
                    key,
                    sa,
                    sb,
                    value=name,
                    text=mesh_text.decode("utf-8", "surrogateescape"),
                    encoding=enc if at >= 0 else StringEncoding("whole"),
                )
            )

    def _region_list(self, ln: _Line, m: re.Match[bytes], out: list[ValueSite]) -> int:
        """``in_shardings=[...]`` / ``out_shardings=[...]`` of a manual or named computation."""
        t = ln.text
        end = match_close(ln.chars, m.end() - 1)
        key = m.group("mclistkey").decode()
        value, _ = _mlir_context(ln, m.start())
        if end < 0:
            return self._unfinished(ln, m, SiteKind.SDY_PER_VALUE_LIST, key, m.end() - 1, value, None, out)
        site = self._occ(ln, SiteKind.SDY_PER_VALUE_LIST, key, m.end() - 1, end, value=value)
        closes_later = t.rstrip().endswith(b"{")
        if not closes_later:
            out.append(replace(site, shapes=_mlir_context(ln, m.start())[1]))
            return end
        indent = len(t) - len(t.lstrip())
        top = self.pending[-1] if self.pending else None
        if top is None or top.lineno != ln.lineno or top.indent != indent:
            self.pending.append(_Pending(indent, ln.lineno))
        (self.pending[-1].ins if key == "in_shardings" else self.pending[-1].outs).append(site)
        return end

    def _close_region(self, ln: _Line) -> list[ValueSite]:
        m = _CLOSE_REGION.match(ln.text)
        if m is None or not self.pending or len(m.group(1)) != self.pending[-1].indent:
            return []
        p = self.pending.pop()
        sig = _LOC_TAIL.sub(b"", m.group(2))
        arrow = sig.rfind(b"->")
        ins = mlir_shapes(sig[:arrow]) if arrow >= 0 else ()
        outs = mlir_shapes(sig[arrow:]) if arrow >= 0 else mlir_shapes(sig)
        return [replace(o, shapes=ins) for o in p.ins] + [replace(o, shapes=outs) for o in p.outs]

    # ---- helpers -----------------------------------------------------------------------------
    def _occ(
        self,
        ln: _Line,
        kind: SiteKind,
        site: str,
        a: int,
        b: int,
        *,
        value: str | None = None,
        shapes: tuple[Shape, ...] | None = None,
        text: str | None = None,
        data: bytes | None = None,
        encoding: StringEncoding = PLAIN,
    ) -> ValueSite:
        raw = ln.text[a:b]
        line, col = ln.position(a)
        end_line, end_col = ln.position(b)
        return ValueSite(
            path=self.path,
            kind=kind,
            site=site,
            line=line,
            col=col,
            end_line=end_line,
            end_col=end_col,
            start=ln.offset + a,
            end=ln.offset + b,
            raw=raw,
            text=raw.decode("utf-8", "surrogateescape") if text is None else text,
            data=data,
            encoding=encoding,
            value=value,
            shapes=shapes,
            line_text=ln.physical(a),
        )



_whole, _name, _type_and_sharding = itemgetter(0), itemgetter(1), itemgetter(2, 3)


def _one_site_at(sites: list[ValueSite], text: bytes, start: int) -> bool:
    """Whether a plain line's sites are one value starting at file offset ``start``, on one physical
    line: what a later line with the same plain key can be re-pointed from."""
    return len(sites) == 1 and sites[0].start == start and b"\n" not in text


def _moved(ln: _Line, s: ValueSite, a: int, value: str | None) -> ValueSite:
    """``s`` (the site of an earlier value with the same type and sharding) re-pointed at ``ln.text[a:]``
    and named ``value``: the site a scan of this line would give, without the scan."""
    b = a + len(s.raw)
    line, col = ln.position(a)
    end_line, end_col = ln.position(b)
    return ValueSite(  # spelled out: several times faster than dataclasses.replace, and this runs per value
        path=s.path,
        kind=s.kind,
        site=s.site,
        line=line,
        col=col,
        end_line=end_line,
        end_col=end_col,
        start=ln.offset + a,
        end=ln.offset + b,
        raw=s.raw,
        text=s.text,
        data=s.data,
        encoding=s.encoding,
        value=value,
        shapes=s.shapes,
        target_line=s.target_line,
        line_text=ln.physical(a),
    )


def _looks_textual(data: bytes) -> bool:
    """An ``mhlo.sharding`` holds text when it decodes and starts like a sharding; else a proto."""
    if not data:
        return True
    s = data.lstrip()
    return s[:1] == b"{" and all(b >= 0x20 or b in (0x09, 0x0A, 0x0D) for b in data)


def _attr_site(t: bytes, start: int, kind: SiteKind) -> str:
    """Name of the attribute a ``#sdy...`` value is assigned to (``sdy.sharding``), or its kind."""
    m = re.search(rb"([\w.]+)\s*=\s*$", t[max(0, start - 64) : start])
    return m.group(1).decode() if m else kind.value


def _hlo_context(t: bytes, chars: str) -> tuple[str | None, tuple[Shape, ...] | None]:
    """Name and shape(s) of the HLO instruction on this line (tuple types flattened)."""
    m = _HLO_INSTR.match(t)
    if m is None:
        return None, None
    name = m.group(1).decode()
    p = m.end()
    if t[p : p + 1] == b"(":
        end = match_close(chars, p)
        return name, (hlo_shapes(t[p:end]) if end > 0 else None)
    a = _HLO_ARRAY.match(t, p)
    if a is None:
        return name, None if not t.startswith(b"token[]", p) else ((),)
    return name, hlo_shapes(a.group(0))


_SIGNATURE_ENDS = (b") -> ", b") {", b") attributes ")


_OPENS, _CLOSES = "([{<", ")]}>"
_BLANKS = " \t\n\r\x0b\x0c"
_ARROW = re.compile(r"[ \t\n\r\x0b\x0c]*->[ \t\n\r\x0b\x0c]*")


def _result_starts(t: str, close: int) -> list[int]:
    """Where each result type after a signature's `` -> `` starts: one per top-level entry of its
    parenthesised list (a token or a tuple is one, as a tensor is), or the one bare type."""
    arrow = _ARROW.match(t, close)
    if arrow is None or arrow.end() >= len(t) or t[arrow.end()] == "{":
        return []
    open_ = arrow.end()
    if t[open_] != "(":
        return [open_]
    end = match_close(t, open_)
    stop = end - 1 if end >= 0 else len(t)
    out, depth, entry, j = [], 0, True, open_ + 1
    while j < stop:
        c = t[j]
        if entry and c not in _BLANKS:
            out.append(j)
            entry = False
        if c == '"':
            j = string_end(t, j)
            j = stop if j < 0 else j
            continue
        if t.startswith("->", j):
            j += 2
            continue
        if c in _OPENS:
            depth += 1
        elif c in _CLOSES:
            depth = max(depth - 1, 0)
        elif c == "," and depth == 0:
            entry = True
        j += 1
    return out


def _signature_close(t: bytes, open_paren: int) -> int:
    """Just past the paren closing a func signature, found in C: the first ``) -> `` / ``) {`` after
    which the parens balance (strings hold only balanced ones: sub-axes ``"a":(1)2``); -1 if none."""
    for mark in _SIGNATURE_ENDS:
        c = t.find(mark, open_paren)
        if c >= 0 and t.count(b"(", open_paren, c + 1) == t.count(b")", open_paren, c + 1):
            return c + 1
    return -1


def _mlir_context(ln: _Line, pos: int) -> tuple[str | None, tuple[Shape, ...] | None]:
    """Value name and type(s) an MLIR attribute at ``pos`` belongs to: a function argument or result,
    an op's results, or the module."""
    t = ln.text
    sig = ln.signature()
    if sig is not None and sig.open_paren < pos:
        return _func_context(ln, sig, pos)
    mod = _MLIR_MODULE.match(t)
    if mod is not None:
        return "module", None
    r = MLIR_RESULT.match(t)
    name = r.group(1).decode() if r else None
    body = _LOC_TAIL.sub(b"", t.rstrip())
    colon = body.rfind(b" : ")
    if colon < 0 or colon < pos:
        return name, None
    tail = body[colon + 3 :]
    arrow = tail.rfind(b"->")
    if arrow >= 0:
        return name, mlir_shapes(tail[arrow + 2 :]) or None
    # ``a, b`` without an arrow: the op's results are the last of them (select prints its predicate's type first)
    shapes = mlir_shapes(tail)
    results = sum(int(n or 1) for n in _RESULT_NAMES.findall(r.group(0))) if r else 0
    if 0 < results < len(shapes):
        shapes = shapes[-results:]
    return name, shapes or None


def _func_context(ln: _Line, sig: _Signature, pos: int) -> tuple[str | None, tuple[Shape, ...] | None]:
    t = ln.text
    if sig.close < 0 or pos < sig.close:
        i = bisect.bisect_right(sig.arg_ends, pos) - 1
        if i < 0:
            return None, None
        shapes = mlir_shapes(t[sig.arg_ends[i] : pos])[:1]
        return sig.arg_names[i], shapes or None
    i = bisect.bisect_right(sig.result_types, pos) - 1
    if i < 0:
        return None, None
    return f"result[{i}]", mlir_shapes(t[sig.result_types[i] : pos])[:1] or None


__all__ = ["MODULE_START", "LineExtractor"]
