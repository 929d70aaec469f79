"""The I/O edge of trace/: reads each log through native scans of a piece of whole dumps each (every
site with its own value name and place, read from the scan's columns) and follows each value from dump
to dump."""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, replace
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.records import record
from shardconv.scan.ahead import read_ahead
from shardconv.scan.headers import module_headers
from shardconv.scan.inputs import same_contents
from shardconv.scan.native import core_follower, follower_reach, site_count
from shardconv.scan.pieces import (
    DUMP_LINE,
    HLO_MODULE_LINE,
    SMALL_PIECE_BYTES,
    Cuts,
    Repeated,
    Unscanned,
    read_pieces,
    scan_whole,
)
from shardconv.scan.table import table
from shardconv.text.files import os_reason
from shardconv.trace.changes import Change, classify, counterparts, gained_kind, lost_kind, per_device, preferred
from shardconv.trace.dumps import (
    Dump,
    DumpRange,
    Repeat,
    header_dump,
    log_sequences,
    responsible_pass,
    split_dumps,
    xla_step,
)
from shardconv.trace.names import defined_as, key_parts, op_identity, printed_name, same_value
from shardconv.trace.values import DumpFacts, DumpSites, Readings, Sighting, SiteReader, observation

if TYPE_CHECKING:
    from shardconv.scan.table import Maybe, Names, Scan, SeenAt

ValueFilter = Callable[[str], bool]


def _every(key: str) -> bool:
    return True


KEEP_ALL: ValueFilter = _every  # no ``--value``: every value is followed (and no filter is asked)


class LogError(ShardingValidationError):
    """A log that cannot be traced: missing, not IR, or (for ``diff``) not one dump."""


@record
class Seen:
    """A dump once read: what the report lists about it. ``partitioned``: its pass made the module per
    device (entry arguments' or results' shapes became per-device pieces, or a pass named for SPMD
    partitioning stripped every sharding but theirs); ``dropped``: the shardings it took from values at
    once, told as one number, not as a loss per value."""

    _: KW_ONLY
    dump: Dump
    values: int
    dropped: int = 0
    dropped_by: str = ""  # the pass that partitioned the module
    partitioned: bool = False


@record
class Skipped:
    """A step file of a folder that could not be read (a dangling link, an unreadable or empty file):
    left out of its module's sequence, and said so."""

    path: str
    reason: str


def read_dumps(
    path: str, first_index: int, base: Dump | None = None, scanned: Scan | None = None
) -> Iterator[DumpSites | Repeat]:
    """The dumps of one file (``-`` is stdin), scanned a piece of whole dumps at a time (``scanned``: its
    scan, already made). In a pass log, a dump whose text is that of the dump before it again (after
    its ``// -----//`` line) comes as a ``Repeat``: its sites are never read, and, when the pieces left
    it unscanned, never scanned."""
    last: _Before | None = None  # the dump before, when it was a pass's whole dump
    index = first_index
    known = Readings()
    # a scanning thread per processor: the core follows the dumps too, and scanning is the slower side
    pieces = read_pieces(path, LogError, names=True, cuts=_CUTS, scanned=scanned)
    for piece, lines in pieces:
        if isinstance(piece, Repeated):
            repeated = _repeat(piece, lines, last, path, index) if base is None else None
            if repeated is not None:
                repeat, last = repeated
                index = repeat.dump.index + 1
                yield repeat
                continue
            piece = piece.scan()  # the reader needs its sites after all
        assert not isinstance(piece, Unscanned)  # (only a reader looking for words or a line leaves pieces unscanned)
        reader = SiteReader(piece, path, lines, known)
        headers = module_headers(piece, lines)
        for r in split_dumps(headers, site_count(piece), reader.line, path, index, base):
            index = r.dump.index + 1
            digest = _digest(piece, r) if r.dump.pass_name is not None and base is None else None
            if digest is not None and last is not None and last.digest == digest:
                yield Repeat(r.dump, r.dump.line - last.dump.line)
                last = replace(last, dump=r.dump, line_module=r.line_module)
                continue
            last = _Before(r.dump, digest, r.line_module) if digest is not None else None
            yield DumpSites(r.dump, reader, range(r.start, r.stop), table(piece).definitions(r.segments))
    if index == first_index:
        raise LogError(f"{path}: no HLO or MLIR dump found")


# pieces of whole dumps or HLO modules (as the scan reads them), the dumps repeating the one before unscanned
_CUTS = Cuts(lines=(DUMP_LINE, HLO_MODULE_LINE), repeats=True, piece_bytes=SMALL_PIECE_BYTES, whole_modules=True)


@record
class _Before:
    """The dump before, read from a pass's dump line: its text's digest, and the module that line
    names (None: the dump's module is the one its text names)."""

    dump: Dump
    digest: tuple[object, ...]
    line_module: str | None


def _repeat(
    piece: Repeated, lines: int, before: _Before | None, path: str, index: int
) -> tuple[Repeat, _Before] | None:
    """The unscanned dump ``piece`` as a Repeat of the dump before it, and what it then is as the dump
    before the next, when that dump was the whole text it repeats (not a later dump in it) and its line
    tells its module as the scan would; else None."""
    start = lines + 1 - piece.lines  # the line the text it repeats began on
    if before is None or before.dump.line != start:
        return None
    dump = header_dump(index, path, lines + 1, _text(piece.header))
    if dump is None or (dump.module is None and before.line_module is not None):
        return None  # (the module its text names, which the dump before's line overrode, is not known)
    repeat = Repeat(replace(dump, module=dump.module or before.dump.module), lines + 1 - before.dump.line)
    return repeat, _Before(repeat.dump, before.digest, dump.module)


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace")


def _digest(scan: Scan, r: DumpRange) -> tuple[object, ...]:
    """A dump's text after its ``// -----//`` line, as the scan hashed it: its module lines and the digest
    of each of its segments (each taken after its own header line)."""
    t = table(scan)
    return (*r.module_lines, *(d for d in map(t.segment_digest, r.segments) if d is not None))


_BY_POSITION = ("arg[", "result[")  # arguments and results: keys by position (bare: the entry function's)


@record
class _Fresh:
    """A dump read fresh, every name it defines, and its entry ROOT's sightings under the ROOT's name
    (``SiteReader.root``): what a change against it is worded from."""

    dump: Dump
    names: Names
    root: dict[str, list[Sighting]]


def follow(
    dumps: Iterator[DumpSites | Repeat | Skipped], keep: ValueFilter = KEEP_ALL
) -> Iterator[Seen | Change | Skipped]:
    """Each dump as it is read, then the changes of its values against the last dump each value was
    seen in (placement computed on the mesh in force in each dump), and against the dump before: a value
    it defines with a sharding on one side only gained or lost it. A value missing from the last
    64 dumps read fresh (the core's ``FORGET``) is forgotten (memory stays flat whatever the names)."""
    # (an element of an op that names its results apart is followed whatever ``keep`` says of its key,
    # and its changes kept by either name: ``--value %indices`` finds ``%values#1``)
    follower = _Follower(keep if keep is KEEP_ALL else lambda key: "#" in key or keep(key), keep)
    for ds in dumps:
        if isinstance(ds, Skipped):
            yield ds
            continue
        for item in follower.repeat(ds) if isinstance(ds, Repeat) else follower.fresh(ds):
            if isinstance(item, Change) and "#" in item.value:
                key, item = item.value, _printed(item)
                if keep is not KEEP_ALL and not (keep(key) or keep(item.value)):
                    continue
            yield item


def _printed(c: Change) -> Change:
    """``c`` with its value named as its dump prints it (``printed_name``, read off its later side's line)."""
    o = c.after if c.after is not None else c.before
    name = printed_name(c.value, o.path, o.line) if o is not None else c.value
    return c if name == c.value else replace(c, value=name)


class _Follower:
    """What following one sequence of dumps remembers: the core's follower (where each value was last
    seen, in which of the last 64 dumps read fresh), the dump read fresh last, and the copies (Repeats)
    of the dumps read fresh."""

    def __init__(self, keep: ValueFilter, wanted: ValueFilter) -> None:
        self.keep = None if keep is KEEP_ALL else keep
        self.wanted = None if wanted is KEEP_ALL else wanted  # ``--value`` itself (``keep`` also takes ``#`` keys)
        self.native = core_follower()
        self.copies: dict[int, tuple[Dump, int]] = {}  # a dump read fresh -> its latest copy, lines moved
        self.recent: deque[int] = deque()  # the dumps read fresh a value may still be compared from
        self.reach = follower_reach()
        self.facts: DumpFacts | None = None
        self.previous: _Fresh | None = None
        self.values = 0  # how many values the dump read fresh last shards
        self.cut = False  # whether a dump showed the module partitioned
        self.told = False  # and whether a Seen said so (with ``--value``: where that value took part)

    def repeat(self, ds: Repeat) -> Iterator[Seen]:
        """The dump before again: no change, its values now sit here too."""
        assert self.previous is not None
        index = self.previous.dump.index
        self.copies[index] = (ds.dump, (self.copies[index][1] if index in self.copies else 0) + ds.delta)
        yield Seen(dump=ds.dump, values=self.values)

    def fresh(self, ds: DumpSites) -> Iterator[Seen | Change]:
        """A dump read fresh, then its changes: gained and changed values in its order, then lost ones."""
        self.facts = ds.reader.facts(ds.sites, self.facts)
        previous, names = self.previous, ds.names
        now = _Fresh(ds.dump, names, ds.reader.root(ds.sites, self.facts))
        same_module = previous is not None and previous.dump.module == ds.dump.module
        try:
            n, positional, maybe, gone = ds.reader.follow(self.native, ds.sites, self.facts, names, now, same_module)
        except OSError as e:  # (a long dump's definitions, read again from its file)
            raise LogError(f"{ds.dump.path}: {os_reason(e, ds.dump.path)}") from None
        lost = self._lost(gone, names)
        rooted = [(key, held) for key, held in lost if key in now.root]  # not lost: the ROOT now
        lost = [x for x in lost if x[0] not in now.root]
        seen = Seen(dump=ds.dump, values=n)
        if previous is not None:
            by = responsible_pass(_latest(previous.dump, self.copies)[0], ds.dump)
            # entry arguments or results cut into per-device pieces, or a partitioner that stripped every
            # sharding but theirs: the module is partitioned, and the shardings it lost went with that
            # (the partitioner's own cleanup passes dump the pieces before it strips the shardings)
            pieces = [key for _, key, obs, held in maybe if held is not None and _cut(key, held[1], obs)]
            if pieces or (lost and positional and (self.cut or _PARTITIONER.search(by))):
                dropped = [key for key, obs in lost if self._wanted(key, obs, previous.dump)]
                if self.wanted is None or dropped or any(self._wanted(k) for k in pieces):
                    seen = Seen(dump=ds.dump, values=n, dropped=len(dropped), dropped_by=by, partitioned=not self.told)
                    self.told = True
                self.cut, lost = True, []
        yield seen
        yield from self._changes(maybe, now)
        if previous is not None:
            for key, held in rooted:
                change = self._changed(key, (previous, held), (now, now.root[key]))
                if change is not None:
                    yield change
            yield from self._losses(lost, ds)
        self.previous, self.values = now, n
        self._forget(ds.dump.index)

    def _forget(self, index: int) -> None:
        """Dump ``index`` read fresh: the copies of a dump no value can be compared from any more go."""
        self.recent.append(index)
        if len(self.recent) > self.reach + 1:
            self.copies.pop(self.recent.popleft(), None)

    def _wanted(self, key: str, seen: list[Sighting] | None = None, dump: Dump | None = None) -> bool:
        """Whether ``--value`` names ``key`` (an element of an op that names its results apart: by its
        printed name too, read off its line in ``dump``)."""
        if self.wanted is None or self.wanted(key):
            return True
        if "#" not in key or not seen or dump is None:
            return False
        return self.wanted(printed_name(key, dump.path, seen[0][1]))

    def _changes(self, maybe: list[Maybe], now: _Fresh) -> Iterator[Change]:
        """The values of ``now`` that gained their sharding or changed since last seen, in its order (the
        core left out those read as they were, and new ones the dump before did not define)."""
        keep, p = self.keep, self.previous
        for ask, key, obs, held in maybe:
            if keep is not None and not keep(key):
                continue
            was: tuple[_Fresh, list[Sighting]] | None = None if held is None else (held[2], held[1])
            if (held is None and not ask) or (ask and p is not None and same_value(p.names, now.names, key)):
                if p is None or key not in p.root:
                    yield self._gain(key, obs, now.dump)
                    continue
                was = (p, p.root[key])  # not gained: the ROOT before
            if was is not None:
                change = self._changed(key, was, (now, obs))
                if change is not None:
                    yield change

    def _lost(self, gone: list[tuple[bool, SeenAt]], names: Names) -> list[tuple[str, list[Sighting]]]:
        """The values sharded in the dump before, not here, that both dumps define alike."""
        p, keep = self.previous, self.keep
        return [
            (key, held) for ask, (key, held, _) in gone
            if (keep is None or keep(key)) and (not ask or (p is not None and same_value(names, p.names, key)))
        ]

    def _gain(self, key: str, obs: list[Sighting], dump: Dump) -> Change:
        assert self.previous is not None
        before, _ = _latest(self.previous.dump, self.copies)
        after = observation(key, preferred(obs), dump)
        return Change(
            kind=gained_kind(after),
            value=key,
            pass_name=responsible_pass(before, dump),
            dump=dump.index,
            before=None,
            after=after,
        )

    def _changed(
        self, key: str, was: tuple[_Fresh, list[Sighting]], now: tuple[_Fresh, list[Sighting]]
    ) -> Change | None:
        """How a value differs from where it was last seen (``was``: that dump and its sightings there), if
        at all; nothing is built for a value read as it was."""
        (before, held), (after, obs) = was, now
        a, b = counterparts(held, obs)
        if a[0] is b[0] or a[0] == b[0] or _renamed(key, (before.names, held), (after.names, obs)):
            return None  # read as it was (nothing can differ), or a pass gave its name to another value
        latest = _latest(before.dump, self.copies)
        cited = observation(key, a, before.dump, latest)
        return classify(cited, observation(key, b, after.dump), responsible_pass(latest[0], after.dump))

    def _losses(self, lost: list[tuple[str, list[Sighting]]], ds: DumpSites) -> Iterator[Change]:
        assert self.previous is not None
        latest = _latest(self.previous.dump, self.copies)
        for key, obs in lost:
            gone = observation(key, preferred(obs), self.previous.dump, latest)
            yield Change(
                kind=lost_kind(gone),
                value=key,
                pass_name=responsible_pass(latest[0], ds.dump),
                dump=ds.dump.index,
                before=gone,
                after=None,
            )


def _positional(key: str) -> bool:
    """An argument or result, paired by position: its type may change (partitioning, HLO against sdy)."""
    return _BY_POSITION[0] in key or _BY_POSITION[1] in key  # (asked of every change: no generator)


_PARTITIONER = re.compile(r"spmd.?partition", re.IGNORECASE)  # XLA's spmd-partitioning pass, by its name


def _cut(key: str, before: list[Sighting], after: list[Sighting]) -> bool:
    """Whether the entry argument or result ``key`` became a per-device piece of itself (partitioning)."""
    return _positional(key) and per_device(before[0][0].shape, after[0][0].shape)


def _renamed(key: str, before: tuple[Names, list[Sighting]], after: tuple[Names, list[Sighting]]) -> bool:
    """Whether ``key`` names another value than where it was last seen (``before``: that dump's names and
    the value's sightings there): another definition, op or tensor type under the same name; for an
    argument or result, which go by position, another tensor type than its own or a per-device piece
    of it (partitioning's)."""
    if _positional(key):
        was, now = before[1][0][0].shape, after[1][0][0].shape
        return was is not None and now is not None and was != now and not per_device(was, now)
    def identity(names: Names, seen: list[Sighting]) -> tuple[object, ...]:
        first = seen[0][0]
        return defined_as(names, key), op_identity(first.op), first.shape

    return identity(*before) != identity(*after)


def _latest(dump: Dump, copies: dict[int, tuple[Dump, int]]) -> tuple[Dump, int]:
    """A dump read fresh, or its latest copy (a Repeat) and how many lines further on it starts: a
    change is cited against the dump right before it."""
    return copies.get(dump.index, (dump, 0))


def trace_paths(paths: Sequence[str], keep: ValueFilter = KEEP_ALL) -> Iterator[Seen | Change | Skipped]:
    """``shardconv trace``: every sequence of dumps in ``paths`` (see ``log_sequences``), followed: a
    ``Seen`` per dump as it is read, then a ``Change`` per value that changed in it; a ``Skipped`` per
    step file that cannot be read (its module is followed without it). From examples/:

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
    named = {os.path.normpath(p) for p in paths}  # files the user named: an error there stops the run

    def dumps(seq: Iterator[Prepared]) -> Iterator[DumpSites | Repeat | Skipped]:
        nonlocal index
        before: tuple[Dump, Dump] | None = None  # the file before: its base and its one dump
        for _, path, base, alike, scanned in seq:
            repeat = _file_repeat(before, path, base, index, alike)
            read = [repeat] if repeat is not None else read_dumps(path, index, base, scanned)
            found = 0
            try:
                for ds in read:
                    index, found = ds.dump.index + 1, found + 1
                    yield ds
            except (OSError, ShardingError) as e:
                if base is None or found or os.path.normpath(path) in named:  # only a walked file is skipped
                    raise
                why = os_reason(e, path) if isinstance(e, OSError) else e.message.removeprefix(f"{path}: ")
                yield Skipped(path, why)  # (the file is named beside its reason)
                before = None
                continue
            before = (base, ds.dump) if found == 1 and base is not None else None

    # one read-ahead for all sequences: the first file of the next is scanned while the last is followed
    for _, seq in groupby(read_ahead(_prepared(sequences)), key=itemgetter(0)):
        yield from follow(dumps(seq), keep)


Prepared = tuple[int, str, "Dump | None", bool, "Scan | None"]  # sequence, file, base, alike, scan


def _prepared(sequences: list[list[tuple[str, Dump | None]]]) -> Iterator[Prepared]:
    """Each file of each sequence (numbered), with its base; for a step file, whether it holds the bytes
    of the step file before it, and if not, its scan when it is read in one piece (made here, ahead of
    its reader, while the file before is followed: see ``read_ahead``). A file that cannot be scanned
    here is scanned again by its reader, which reports why."""
    for n, seq in enumerate(sequences):
        was = None
        for path, base in seq:
            alike = was is not None and base is not None and same_contents(was, path)
            scanned = None
            if base is not None and not alike:
                try:
                    scanned = scan_whole(path, names=True)
                except (OSError, ShardingError):
                    scanned = None
            yield n, path, base, alike, scanned
            was = path if base is not None else None


def _file_repeat(
    before: tuple[Dump, Dump] | None, path: str, base: Dump | None, index: int, alike: bool
) -> Repeat | None:
    """A step file of an XLA dump folder with the bytes of the file before it (``alike``; ``before``: that
    file's base and one dump, a plain module), as a Repeat of that dump; None when it must be read."""
    if before is None or base is None or not alike:
        return None
    was_base, dump = before
    from_base = replace(was_base, index=dump.index, path=dump.path, line=dump.line, module=dump.module)
    if dump != from_base or base.module != was_base.module:
        return None
    return Repeat(replace(base, index=index, path=path, line=dump.line, module=dump.module), 0)


def diff_paths(a: str, b: str, keep: ValueFilter = KEEP_ALL) -> Iterator[Seen | Change | Skipped]:
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
        return KEEP_ALL

    def keep(key: str) -> bool:
        parts = key_parts(key)
        return bool({key, parts.local, parts.local.lstrip("%"), parts.value, parts.value.lstrip("%")} & wanted)

    return keep


__all__ = [
    "LogError", "Seen", "Skipped", "ValueFilter", "diff_paths", "follow", "read_dumps", "trace_paths", "value_filter",
]
