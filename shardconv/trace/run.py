"""The I/O edge of trace/: reads logs with check's streaming reader (every site with its own value
name: a repeated line re-pointed, not re-extracted) and follows each value from dump to dump, holding
one dump at a time."""

from __future__ import annotations

import io
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import BinaryIO

from shardconv.check.lines import ReadOptions, open_input, read_sites
from shardconv.check.sniff import SNIFF_BYTES
from shardconv.core.errors import ShardingValidationError
from shardconv.trace.changes import Change, classify, counterparts, preferred
from shardconv.trace.dumps import (
    Dump,
    DumpSites,
    Repeat,
    header_dump,
    log_sequences,
    responsible_pass,
    split_dumps,
    xla_step,
)
from shardconv.trace.names import NameScanner, Names, defined_as, key_parts, names_in, same_value
from shardconv.trace.pieces import Piece, is_pass_log, pieces
from shardconv.trace.values import DumpFacts, Observation, dump_facts, observations

ValueFilter = Callable[[str], bool]
_EVERY_SITE = ReadOptions(named=True)  # every site with its own name; a repeated line costs a replace()


class LogError(ShardingValidationError):
    """A log that cannot be traced: missing, not IR, or (for ``diff``) not one dump."""


@dataclass(frozen=True)
class Seen:
    """A dump once read: what the report lists about it. ``dropped``: the shardings its pass took from
    every value but the entry's arguments and results at once (SPMD partitioning: from here the module is
    per device), told as one number, not as a loss per value."""

    dump: Dump
    values: int
    dropped: int = 0
    dropped_by: str = ""  # the pass that dropped them


def read_dumps(path: str, first_index: int, base: Dump | None = None) -> Iterator[DumpSites | Repeat]:
    """The dumps of one file (``-`` is stdin), streamed. A pass log is read dump by dump, and a dump
    whose text is the one before it again comes as a ``Repeat`` (nothing extracted)."""
    try:
        stream = open_input(path)
    except OSError as e:
        raise LogError(f"{path}: {e.strerror or e}") from None
    with stream if path != "-" else nullcontext(stream):
        head = stream.read(SNIFF_BYTES)
        if is_pass_log(head):
            yield from _pass_log(stream, head, path, first_index, base)
            return
        source = NameScanner(_Replay(head, stream))
        kind, sites = read_sites(source, path, _EVERY_SITE)
        if kind.skipped:
            raise LogError(f"{path}: {kind.reason}")
        for ds in split_dumps(sites, path, first_index, base):
            ds.names = source.take()
            yield ds


def _pass_log(stream: BinaryIO, head: bytes, path: str, index: int, base: Dump | None) -> Iterator[DumpSites | Repeat]:
    """The dumps of a log cut at its ``// -----`` lines; pieces that are not IR (prose) are passed over."""
    last: Piece | None = None  # the piece before, when it was one dump
    found = False
    for piece in pieces(stream, head):
        first_line = piece.data[: piece.data.find(b"\n")].decode("utf-8", "replace")
        header = header_dump(index, path, piece.line, first_line)
        if header is not None and last is not None and piece.body == last.body:
            yield Repeat(header, piece.line - last.line)
            last = piece
            index += 1
            continue
        kind, sites = read_sites(io.BytesIO(piece.data), path, _EVERY_SITE)
        if kind.skipped:
            last = None
            continue
        dumps = list(split_dumps(sites, path, index, base, piece.line - 1))
        names = names_in(piece.data) if dumps else {}
        for ds in dumps:
            ds.names = names  # a piece is one dump but in a log split only at its modules
        yield from dumps
        found = found or bool(dumps)
        index += len(dumps)
        last = piece if len(dumps) == 1 and header is not None else None
    if not found:
        raise LogError(f"{path}: no HLO or MLIR dump found")


class _Replay:
    """``head`` again, then the rest of ``stream``: the reader sniffs what was already read."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head = head
        self.stream = stream

    def read(self, n: int = -1) -> bytes:
        if not self.head:
            return self.stream.read(n)
        if n < 0:
            out, self.head = self.head + self.stream.read(), b""
            return out
        out, self.head = self.head[:n], self.head[n:]
        return out


_BY_POSITION = ("arg[", "result[")  # arguments and results: keys by position (bare: the entry function's)
FORGET = 64  # fresh dumps a value may be missing from (another function's dumps) and still be compared


@dataclass(frozen=True)
class _Fresh:
    """The last dump read fresh: its values, and every name it defines."""

    dump: Dump
    seen: dict[str, list[Observation]]
    names: Names


def follow(
    dumps: Iterator[DumpSites | Repeat], keep: ValueFilter = lambda key: True
) -> Iterator[Seen | Change]:
    """Each dump as it is read, then the changes of its values against the last dump each value was
    seen in (placement computed on the mesh in force in each dump), and against the dump before: a value
    it defines with a sharding on one side only gained or lost it. A value missing from the last
    ``FORGET`` dumps read fresh is forgotten (memory stays flat whatever the names)."""
    # by key, oldest sighting first: the dump last read fresh that held it, that dump's count, and what
    # that dump defines it as (another op or type under the same name is another value)
    last: OrderedDict[str, tuple[Dump, list[Observation], int, bytes | None]] = OrderedDict()
    copies: dict[int, tuple[Dump, int]] = {}  # a dump read fresh -> its latest copy (Repeat), lines moved
    facts: DumpFacts | None = None
    previous: _Fresh | None = None
    count = 0
    for ds in dumps:
        if isinstance(ds, Repeat):  # the dump before again: no change, its values now sit here too
            assert previous is not None
            index = previous.dump.index
            copies[index] = (ds.dump, (copies[index][1] if index in copies else 0) + ds.delta)
            yield Seen(ds.dump, len(previous.seen))
            continue
        facts = dump_facts(ds.dump.path, ds.sites, facts)
        seen = observations(ds.dump.index, ds.dump.path, ds.sites, facts, ds.line_base)
        count += 1
        lost = [] if previous is None else [
            (key, obs) for key, obs in previous.seen.items()
            if key not in seen and keep(key) and same_value(previous.names, ds.names, key)
        ]
        # every value but the entry's arguments and results lost its sharding: the module is partitioned
        stripped = bool(lost) and all(key.startswith(_BY_POSITION) for key in seen)
        if stripped:
            assert previous is not None
            yield Seen(ds.dump, len(seen), len(lost), responsible_pass(_latest(previous.dump, copies)[0], ds.dump))
        else:
            yield Seen(ds.dump, len(seen))
        for key, obs in seen.items():
            if not keep(key):
                continue
            prev = last.get(key)
            what = defined_as(ds.names, key) if not _positional(key) else None
            last[key] = (ds.dump, obs, count, what)
            last.move_to_end(key)
            if previous is not None and key not in previous.seen and same_value(previous.names, ds.names, key):
                before, _ = _latest(previous.dump, copies)
                yield Change("placement", key, responsible_pass(before, ds.dump), ds.dump.index, None, preferred(obs))
                continue
            if prev is None or (prev[3] is not None and what is not None and prev[3] != what):
                continue  # first seen, or a pass gave its name to another value: nothing to compare
            a, b = counterparts(prev[1], obs)
            latest = _latest(prev[0], copies)
            change = classify(_cited(a, latest), b, responsible_pass(latest[0], ds.dump))
            if change is not None:
                yield change
        if previous is not None and not stripped:
            latest = _latest(previous.dump, copies)
            for key, obs in lost:
                gone = _cited(preferred(obs), latest)
                yield Change("placement", key, responsible_pass(latest[0], ds.dump), ds.dump.index, gone, None)
        while last and next(iter(last.values()))[2] <= count - FORGET:
            last.popitem(last=False)
        previous = _Fresh(ds.dump, seen, ds.names)


def _positional(key: str) -> bool:
    """An argument or result, paired by position: its type may change (partitioning, HLO against sdy)."""
    return any(p in key for p in _BY_POSITION)


def _latest(dump: Dump, copies: dict[int, tuple[Dump, int]]) -> tuple[Dump, int]:
    """A dump read fresh, or its latest copy (a Repeat) and how many lines further on it starts: a
    change is cited against the dump right before it."""
    return copies.get(dump.index, (dump, 0))


def _cited(o: Observation, latest: tuple[Dump, int]) -> Observation:
    """A value of a dump read fresh, as ``latest`` (see ``_latest``) shows it."""
    dump, moved = latest
    return o if dump.index == o.dump else replace(o, dump=dump.index, line=o.line + moved)


def trace_paths(paths: Sequence[str], keep: ValueFilter = lambda key: True) -> Iterator[Seen | Change]:
    """``shardconv trace``: every sequence of dumps in ``paths`` (see ``log_sequences``), followed: a
    ``Seen`` per dump as it is read, then a ``Change`` per value that changed in it. From examples/:

    >>> import shardconv as sc
    >>> for item in sc.trace_paths(["seed-before-import.mlir", "seed-pass-log.txt"]):
    ...     if isinstance(item, sc.Change) and item.before is not None and item.after is not None:
    ...         print(item.kind, item.value, item.pass_name, item.devices, item.after.text)
    placement arg[0] Before AnalyzeMeshPass (1, 2, 3, 4, 5, 6) #sdy.sharding<@mesh, [{}, {"_axis_0"}]>
    """
    sequences = log_sequences(paths)
    if not sequences:
        raise LogError(f"no pass log or XLA per-pass dump in {', '.join(paths)}")
    index = 0
    for seq in sequences:
        def dumps(seq: list[tuple[str, Dump | None]] = seq) -> Iterator[DumpSites | Repeat]:
            nonlocal index
            for path, base in seq:
                for ds in read_dumps(path, index, base):
                    index = ds.dump.index + 1
                    yield ds

        yield from follow(dumps(), keep)


def diff_paths(a: str, b: str, keep: ValueFilter = lambda key: True) -> Iterator[Seen | Change]:
    """``shardconv diff``: the two dumps (one each) followed as a sequence of two; the items are
    ``trace_paths``'s (``diff_paths("a.mlir", "b.mlir", value_filter(["arg[0]"]))``)."""

    def one(path: str, index: int) -> DumpSites | Repeat:
        step = xla_step(path) if path != "-" else None
        found = list(read_dumps(path, index, step.dump if step else None))
        if len(found) != 1:
            raise LogError(f"{path} holds {len(found)} dumps, not one: use shardconv trace to follow a pass log")
        return found[0]

    yield from follow(iter([one(a, 0), one(b, 1)]), keep)




def value_filter(names: Sequence[str]) -> ValueFilter:
    """``--value``: a key matches a name given whole (``@f:%3``), without its function (``%3``,
    ``arg[0]``) or without its ``%`` (``dot.2``); ``%r`` also matches ``%r#1`` and a manual computation's
    ``%r:in[0]`` / ``%r:out[1]``. No names keep every value."""
    wanted = {n.strip() for n in names}
    if not wanted:
        return lambda key: True

    def keep(key: str) -> bool:
        parts = key_parts(key)
        return bool({key, parts.local, parts.local.lstrip("%"), parts.value, parts.value.lstrip("%")} & wanted)

    return keep


__all__ = ["LogError", "Seen", "ValueFilter", "diff_paths", "follow", "read_dumps", "trace_paths", "value_filter"]
