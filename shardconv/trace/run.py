"""The I/O edge of trace/: reads logs with check's streaming reader (every site, repeats off: names
matter here) and follows each value from dump to dump, holding one dump at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from shardconv.check.lines import ReadOptions, open_input, read_sites
from shardconv.core.errors import ShardingValidationError
from shardconv.trace.changes import Change, classify, counterparts
from shardconv.trace.dumps import Dump, DumpSites, log_sequences, responsible_pass, split_dumps, xla_step
from shardconv.trace.values import DumpFacts, Observation, dump_facts, observations

ValueFilter = Callable[[str], bool]
_EVERY_SITE = ReadOptions(repeats=False)


class LogError(ShardingValidationError):
    """A log that cannot be traced: missing, not IR, or (for ``diff``) not one dump."""


@dataclass(frozen=True)
class Seen:
    """A dump once read: what the report lists about it."""

    dump: Dump
    values: int


def read_dumps(path: str, first_index: int, base: Dump | None = None) -> Iterator[DumpSites]:
    """The dumps of one file (``-`` is stdin), streamed."""
    try:
        stream = open_input(path)
    except OSError as e:
        raise LogError(f"{path}: {e.strerror or e}") from None
    with stream if path != "-" else nullcontext(stream):
        kind, sites = read_sites(stream, path, _EVERY_SITE)
        if kind.skipped:
            raise LogError(f"{path}: {kind.reason}")
        yield from split_dumps(sites, path, first_index, base)


def follow(
    dumps: Iterator[DumpSites], keep: ValueFilter = lambda key: True
) -> Iterator[Seen | Change]:
    """Each dump as it is read, then the changes of its values against the last dump each value was
    seen in (placement computed on the mesh in force in each dump)."""
    last: dict[str, tuple[Dump, list[Observation]]] = {}
    facts: DumpFacts | None = None
    for ds in dumps:
        facts = dump_facts(ds.dump.path, ds.sites, facts)
        seen = observations(ds.dump.index, ds.dump.path, ds.sites, facts)
        yield Seen(ds.dump, len(seen))
        for key, obs in seen.items():
            if not keep(key):
                continue
            prev = last.get(key)
            last[key] = (ds.dump, obs)
            if prev is None:
                continue
            a, b = counterparts(prev[1], obs)
            change = classify(a, b, responsible_pass(prev[0], ds.dump))
            if change is not None:
                yield change


def trace_paths(paths: Sequence[str], keep: ValueFilter = lambda key: True) -> Iterator[Seen | Change]:
    """``shardconv trace``: every sequence of dumps in ``paths`` (see ``log_sequences``), followed."""
    index = 0
    for seq in log_sequences(paths):
        def dumps(seq: list[tuple[str, Dump | None]] = seq) -> Iterator[DumpSites]:
            nonlocal index
            for path, base in seq:
                for ds in read_dumps(path, index, base):
                    index = ds.dump.index + 1
                    yield ds

        yield from follow(dumps(), keep)


def diff_paths(a: str, b: str, keep: ValueFilter = lambda key: True) -> Iterator[Seen | Change]:
    """``shardconv diff``: the two dumps (one each) followed as a sequence of two."""

    def one(path: str, index: int) -> DumpSites:
        step = xla_step(path) if path != "-" else None
        found = list(read_dumps(path, index, step.dump if step else None))
        if len(found) != 1:
            raise LogError(f"{path} holds {len(found)} dumps, not one: use shardconv trace to follow a pass log")
        return found[0]

    yield from follow(iter([one(a, 0), one(b, 1)]), keep)




def value_filter(names: Sequence[str]) -> ValueFilter:
    """``--value``: a key matches a name given whole (``@f:%3``), without its function (``%3``,
    ``arg[0]``) or without its ``%`` (``dot.2``); no names keep every value."""
    wanted = {n.strip() for n in names}
    if not wanted:
        return lambda key: True

    def keep(key: str) -> bool:
        local = key.rpartition(":")[2] if key.startswith("@") else key
        return bool({key, local, local.lstrip("%"), local.partition("#")[0]} & wanted)

    return keep


__all__ = ["LogError", "Seen", "ValueFilter", "diff_paths", "follow", "read_dumps", "trace_paths", "value_filter"]
