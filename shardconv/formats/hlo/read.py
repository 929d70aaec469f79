"""HLO sharding text (or serialized OpSharding bytes) -> ``HloSharding``, validated strictly."""

from __future__ import annotations

import re
from collections.abc import Iterator
from math import prod

from shardconv.core.arguments import type_error
from shardconv.core.errors import ShardingError, ShardingSyntaxError, ShardingValidationError
from shardconv.core.limits import check_device_count, check_text_length
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    Mesh,
    MeshAxis,
    MeshSharding,
    SubgroupType,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.core.sources import remember
from shardconv.formats.grammar import parse
from shardconv.formats.hlo.verify import check_device_id, check_iota_fits, check_named, maximal_device, mesh_device_ids
from shardconv.text.patterns import lazy_pattern


def parse_hlo_text(text: str, *, num_devices: int | None = None) -> HloSharding:
    """Parse an HLO sharding string (all of docs/formats.md §1.1), applying XLA's normalisations."""
    check_text_length(len(text))
    if len(text) > _LONG:  # what a long text gets wrong is refused before any of it is read as a list
        refuse_hostile(text)
    everyday = _everyday(text, num_devices)
    if everyday is not None:
        return everyday
    if len(text) <= _LONG:
        refuse_hostile(text)
    from shardconv.formats.hlo.tree import HloTransformer

    sharding: HloSharding = parse("hlo_sharding", "start", text, HloTransformer(num_devices))
    return sharding


_LONG = 4096  # a text this short costs little whatever it holds: the everyday path comes first


def refuse_hostile(text: str) -> None:
    """The counts and products the parser would refuse, checked without building a list."""
    refuse_huge_products(text)  # (first, as the parser checks tile dims before the list they count)
    refuse_huge_meshes(text)
    refuse_wrong_lengths(text)
    refuse_extra_subgroups(text)


# The spellings XLA and torch-xla print most, exactly as printed: {replicated}, {maximal device=N}, and a
# tiled sharding by iota (``<=[8]``, ``<=[2,4]T(1,0)``) or by device list, maybe replicated on its last dim.
_INT = r"(?:0|[1-9][0-9]{0,17})"
_INTS = rf"{_INT}(?:,{_INT})*"
_TWO_OR_MORE = rf"{_INT}(?:,{_INT})+"  # (``T(...)`` comes with, and only with, two or more reshape dims)
_EVERYDAY = re.compile(
    rf"\{{(?:(replicated)|maximal device=({_INT})|devices=\[({_INTS})\]"
    rf"(?:<=\[(?:({_INT})\]|({_TWO_OR_MORE})\]T\(({_TWO_OR_MORE})\))|({_INTS}))( last_tile_dim_replicate)?)\}}"
)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(","))


def _everyday(text: str, num_devices: int | None) -> HloSharding | None:
    """The grammar's answer for an everyday spelling (``_EVERYDAY``, ``_named``, or a tuple of them as XLA prints one:
    ``{{...}, {...}}``) without loading the grammar: the CLI's one-value path, and a dump's values. None
    for anything else or anything invalid, so the grammar decides (and words any error);
    tests/formats/hlo/test_hlo_everyday.py holds the two to the same answers."""
    if text.startswith("{{") and text.endswith("}}"):
        elements = [_everyday_element(part, num_devices) for part in text[1:-1].split(", ")]
        return None if None in elements else HloSharding.tuple_of([e for e in elements if e is not None])
    return _everyday_element(text, num_devices)


def _everyday_element(text: str, num_devices: int | None) -> HloSharding | None:
    m = _EVERYDAY.fullmatch(text)
    if m is None:
        return _everyday_named(text, num_devices) if text.startswith("{mesh[") else None
    replicated, device, dims, flat, reshape, perm, listed, replicate_last = m.groups()
    try:
        if replicated:
            return HloSharding.replicated()
        if device is not None:
            return HloSharding.maximal(maximal_device([int(device)], num_devices))
        shape = _ints(dims)
        check_device_count(shape)
        if listed is None:
            iota = ((int(flat),), (0,)) if flat is not None else (_ints(reshape), _ints(perm))
            tile = TileAssignment.iota(shape, *iota)
            check_iota_fits(tile, num_devices)
        else:
            if listed.count(",") + 1 != prod(shape):  # counted before a single id is built
                return None  # (refuse_wrong_lengths words it)
            devices = _ints(listed)
            if len(devices) == 1:  # (the grammar's rule: one device is {maximal device=N})
                return None
            tile = TileAssignment.from_devices(shape, devices)  # (refuses a list of the wrong length)
            for d in devices:
                check_device_id(d, num_devices)
        return canonical_tiled(tile, (SubgroupType.REPLICATED,) if replicate_last else ())
    except ShardingError:
        return None


# A V3 sharding as XLA prints one (a collective's ``replica_groups=mesh[...] {...}`` is read as one): quoted
# plain axis names, the mesh's device ids listed or as an iota, closed dims of whole axes, nothing after.
_NAME = r"'[A-Za-z_][A-Za-z0-9_]*'"
_AXES = rf"\{{(?:{_NAME}(?:, ?{_NAME})*)?\}}"


# (compiled when a text first starts like one: half a millisecond a start-up that reads none need not pay)
_named = lazy_pattern(
    rf"\{{mesh\[({_NAME}={_INT}(?:,{_NAME}={_INT})*)\]"
    rf"(?:, device_ids=\((?:({_INTS})|\[({_INT})\]|\[({_TWO_OR_MORE})\]T\(({_TWO_OR_MORE})\))\))?"
    rf", \[({_AXES}(?:, {_AXES})*)?\]\}}"
)


def _everyday_named(text: str, num_devices: int | None) -> HloSharding | None:
    """``_everyday`` of a V3 sharding (``_named``), built and checked as the grammar's ``v3`` does."""
    m = _named().fullmatch(text)
    if m is None:
        return None
    mesh_axes, listed, flat, reshape, perm, dims = m.groups()
    axes = tuple(MeshAxis(name[1:-1], int(size)) for name, size in (a.split("=") for a in mesh_axes.split(",")))
    try:
        n = check_device_count(a.size for a in axes if a.size > 0)
        iota = ((int(flat),), (0,)) if flat is not None else (_ints(reshape), _ints(perm)) if reshape else None
        ids, device_iota = mesh_device_ids(n, _ints(listed) if listed is not None else None, iota)
        mesh = Mesh(axes=axes, explicit_device_ids=ids)
        split = tuple(map(_dim, dims[1:-1].split("}, {"))) if dims else ()
        ms = MeshSharding(mesh=mesh, dims=split, device_iota=device_iota)
        check_named(ms, num_devices)
    except ShardingError:
        return None
    return HloSharding(kind=Kind.MESH, mesh_sharding=ms)


def _dim(axes: str) -> DimSharding:
    """A closed dim of whole axes, from its text between the braces (``'a','b'``)."""
    return DimSharding(tuple(AxisRef(a.strip()[1:-1]) for a in axes.split(",")) if axes else ())


# What can follow a device list: the closing brace, a space, a comment, or an item (last_tile_dim(s),
# metadata=, shard_as / shard_like, device(s)=, replicated, unreduced): found by str.find, not a regex.
_LIST_STOPS = ("}", " ", "\t", "\n", "\r", "/", "l", "m", "s", "d", "r", "u")


def refuse_wrong_lengths(text: str) -> None:
    """Refuse an explicit device list whose length is not the product of its tile dims before the parser
    reads it (a 2 MB list is refused in milliseconds, not after tokenising every id): the same error,
    at the same place, as the parser's check. A list whose end is not plain, and text inside string
    literals, are left to the parser."""
    for head, open_ in _found(text, "devices=["):
        close = text.find("]", open_)
        start = close + 1
        while 0 < start < len(text) and text[start].isspace():
            start += 1
        if close < 0 or start >= len(text) or not text[start].isdigit():
            continue  # (an iota, or no list: not this check's)
        dims_text = "".join(text[open_:close].split())
        if _plain_end(text, open_, close) != close or not dims_text or ",," in dims_text:
            continue  # the parser reports it (an empty dim, not a plain list)
        if any(len(d) > 18 for d in dims_text.split(",")):
            continue  # (beyond int64)
        end = _list_end(text, start)
        spaced = end is None and len(text) > _LONG  # ``0, 1, 2``: counted by its commas, as it is long
        if spaced:
            end = _spaced_list_end(text, start)
        if end is None or text[end - 1] == "," or text.find(",,", start, end) >= 0 or _in_string(text, head):
            continue
        dims = [int(d) for d in dims_text.split(",") if d]
        need = prod(dims)
        have = text.count(",", start, end) + 1
        if have > need if spaced else have != need:  # (``0 1`` is one entry by its commas: the parser words it)
            raise ShardingValidationError(
                f"device list has {have} entries but the tile dims [{','.join(map(str, dims))}] need {need}",
                text=text,
                pos=start,
            )


def _spaced_list_end(text: str, start: int) -> int:
    """Where a device list with spaces inside (``0, 1, 2``) ends: its digits, commas and spaces, less
    the spaces after its last entry."""
    close = text.find("}", start)
    end = _plain_end(text, start, len(text) if close < 0 else close)
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


_PLAIN_LIST = re.compile(r"[0-9,\s]*")
# Each ASCII byte: 0 where it may stand in a plain list (a digit, a comma, a blank as ``\s`` reads one), else 1.
_NOT_IN_LIST = bytes(0 if chr(b) in "0123456789," or chr(b).isspace() else 1 for b in range(256))


def _plain_end(text: str, start: int, stop: int) -> int:
    """Where the run of digits, commas and blanks from ``start`` ends, at ``stop`` at the latest (a plain
    list's end): an ASCII text is read as bytes in a few passes in C, not by the regex's per-character
    step (4 ms over a 2 MB list)."""
    if not text.isascii():
        run = _PLAIN_LIST.match(text, start, stop)
        return run.end() if run is not None else start
    at = text[start:stop].encode("ascii").translate(_NOT_IN_LIST).find(1)
    return stop if at < 0 else start + at
_FACTOR = re.compile(r"0*(?:[2-9]|1[0-9])[0-9]*")  # a dim other than 0 and 1: the ones a product grows by


def refuse_huge_products(text: str) -> None:
    """Refuse tile dims or iota reshape dims whose product passes the device ceiling before the parser
    reads them: only the dims other than 1 are read, and the reading stops once the product passes 10^30,
    so a megabyte of dims is refused in microseconds. The parser's own error, at its place."""
    for head, start in _found(text, "devices=[", "<=["):
        close = text.find("]", start)
        if close < 0 or _plain_end(text, start, close) != close or _in_string(text, head):
            continue  # not a plain list: the parser words it
        factors = (int(f.group()) for f in _FACTOR.finditer(text, start, close) if len(f.group()) <= 19)
        try:
            check_device_count(factors)
        except ShardingError as e:
            raise e.located(text, head + (len("devices=") if text.startswith("d", head) else 0)) from None


# A V3 mesh's axes: ``'a'=2`` (or bare ``a=2``, jaxlib 0.9.1), a quoted name read whole (it may hold ``=``).
_mesh_axis = lazy_pattern(r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_.]*)\s*=\s*([0-9]+)""")


def refuse_huge_meshes(text: str) -> None:
    """Refuse a V3 mesh whose axes' product passes the device ceiling, and an explicit ``device_ids``
    list whose length is not that product, before the parser reads them: the axes are read until the
    product passes 10^30, the ids only counted (their commas). The parser's own errors, at its place."""
    for head, start in _found(text, "mesh["):
        if text.startswith("_", head - 1) or _in_string(text, head):
            continue  # (``maximal_mesh[device_id=N]``)
        close = text.find("]", start)
        if close < 0:
            continue
        sizes = (int(m.group(1)) for m in _mesh_axis().finditer(text, start, close) if len(m.group(1)) <= 19)
        try:
            need = check_device_count(n for n in sizes if n > 0)
        except ShardingError as e:
            raise e.located(text, head) from None
        ids = _explicit_ids(text, close)
        if ids is not None and (have := text.count(",", *ids) + 1) != need:
            raise ShardingValidationError(f"device_ids has {have} entries but the mesh has {need} devices",
                                          text=text, pos=head)


_IDS_HEAD = re.compile(r"\]\s*,\s*device_ids=\(")


def _explicit_ids(text: str, close: int) -> tuple[int, int] | None:
    """The span of the plain id list in ``device_ids=(...)`` right after a V3 mesh's ``]`` (``close``);
    None when there is none, or it is not a plain list (an iota, an empty entry: the parser words it)."""
    m = _IDS_HEAD.match(text, close)
    if m is None:
        return None
    start = m.end()
    end = text.find(")", start)
    if end < 0 or _plain_end(text, start, end) != end:
        return None
    first, last = start, end - 1
    while first < end and text[first].isspace():
        first += 1
    while last > first and text[last].isspace():
        last -= 1
    if first == end or text[first] == "," or text[last] == "," or text.find(",,", start, end) >= 0:
        return None
    return start, end


def _found(text: str, *needles: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every occurrence of each needle, found by ``str.find`` (a regex alternation
    tries every position: a third of a second over 11 MB)."""
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            yield at, at + len(needle)
            at = text.find(needle, at + 1)


_TILE_DIMS = re.compile(r"devices=\[([0-9,\s]*)\]")


def refuse_extra_subgroups(text: str) -> None:
    """Refuse more ``last_tile_dims`` entries than the sharding has tile dims (each is one of its trailing
    dims) by counting commas, before the parser reads them: the parser's error, at its place."""
    for head, start in _found(text, "last_tile_dims={"):
        close = text.find("}", start)
        body_start = text.rfind("{", 0, head)
        dims = _TILE_DIMS.search(text, max(body_start, 0), head)
        if close < 0 or dims is None or _in_string(text, head):
            continue
        entries = text.count(",", start, close) + 1
        have = dims.group(1).count(",") + 1
        if entries > have:
            raise ShardingValidationError(f"{entries} last_tile_dims but only {have} tile dims", text=text, pos=head)


def _list_end(text: str, start: int) -> int | None:
    """Where the device list starting at ``start`` ends; None when spaces inside it make that a job
    for the parser."""
    close = text.find("}", start)
    close = len(text) if close < 0 else close
    end = min((i for i in (text.find(c, start, close) for c in _LIST_STOPS) if i >= 0), default=close)
    if end < len(text) and text[end].isspace():
        j = end
        while j < close and text[j].isspace():
            j += 1
        if (j < close and (text[j].isdigit() or text[j] == ",")) or text[end - 1] == ",":
            return None
    return end


def _in_string(text: str, pos: int) -> bool:
    """``pos`` lies inside a quoted string (metadata={op_name="..."}): an odd number of quotes before it."""
    if '"' not in text and "'" not in text:
        return False
    head = text[:pos]
    return any((head.count(q) - head.count("\\" + q)) % 2 for q in ('"', "'"))


def parse_hlo_proto(data: bytes, *, num_devices: int | None = None) -> HloSharding:
    """Parse a serialized ``xla.OpSharding`` (``b""`` is replicated)."""
    from shardconv.formats.proto import from_proto_bytes

    return from_proto_bytes(data, num_devices=num_devices)


def parse_hlo(text_or_bytes: str | bytes, *, num_devices: int | None = None) -> HloSharding:
    """Text or serialized proto -> ``HloSharding``; ``""``/``b""`` mean replicated. Only ShardingErrors escape
    (and TypeError for a value that is neither)."""
    if not isinstance(text_or_bytes, (str, bytes, bytearray, memoryview)):
        expected = "str or bytes (HLO text or a serialized OpSharding)"
        raise type_error("parse_hlo", "text_or_bytes", expected, text_or_bytes)
    if isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(text_or_bytes)
        # A serialized OpSharding never starts with '{' (that would be a field-15 group), text always does.
        if not data.lstrip().startswith(b"{"):
            return parse_hlo_proto(data, num_devices=num_devices)
        try:
            text_or_bytes = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ShardingSyntaxError("bytes start like sharding text but are not UTF-8") from None
    if text_or_bytes == "":  # mhlo.sharding = "" (whitespace alone is not a sharding: XLA rejects it)
        return HloSharding.replicated()
    return remember(parse_hlo_text(text_or_bytes, num_devices=num_devices), text_or_bytes)


__all__ = ["parse_hlo", "parse_hlo_proto", "parse_hlo_text"]
