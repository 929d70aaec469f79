"""Which stage of a compile a module is at, so that the rules about XLA's mesh-less import of HLO
shardings apply only to modules that import reads. XLA imports a module's HLO shardings into Shardy
once, at the start of its ``shardy-xla`` pass; what Shardy exports after propagation, and the per-device
modules the partitioner makes from it, are never imported again.

The module's own text decides first: a scheduled module (``is_scheduled=true`` in its ``HloModule``
header) and a module that carries ``mhlo.spmd_output_sharding`` (what XLA writes from a compiled,
partitioned program) are per device. Where the text of a stage is
the same as the text of an input (Shardy's HLO export reads like any HLO-only module), the stage XLA
names in its dump file (read by ``scan/dump_names.py``) decides: ``*.after_shardy-xla.*`` and Shardy's
``NN.output_module.mlir`` are the export; ``*after_optimizations*``, ``*.after_codegen.txt`` and every
per-pass dump from ``spmd-partitioning`` on are per device. A TPU compile runs its passes in another
order (its dump names carry ``cl_NNN``): there the steps of the module's export and partitioning dumps
beside the file decide. Any other file is an input.
"""

from __future__ import annotations

import enum
import os
import re
import time
from collections.abc import Iterable, Mapping

from shardconv.scan.dump_names import DumpName, Point, dump_name
from shardconv.scan.modules import DistinctValue


class Stage(str, enum.Enum):
    INPUT = "input"  # a module a compile starts from: XLA imports its HLO shardings
    EXPORTED = "exported"  # Shardy's export, after propagation: the partitioner's input
    PARTITIONED = "partitioned"  # per device, after spmd-partitioning


# a TPU compile's pipelines run in another order than the CPU's (dozens of passes before the
# partitioner's), so the module's own dumps beside it say where it stands
_TPU_PARTITIONING = "tpu-spmd-partitioning"
# the pipelines tpu-spmd-partitioning runs inside itself once the module is per device: their dumps come
# before the pass's own (``0027.spmd-cleanup...``, ``0031.optimizer-tpu-spmd-collectives...``, then
# ``0032.xla-partitioner.after_tpu-spmd-partitioning``)
_TPU_PARTITIONING_PIPELINES = frozenset({"spmd-cleanup", "optimizer-tpu-spmd-collectives"})
# the pipelines XLA runs before its partitioner (the import happens in spmd-partitioner's shardy-xla)
_BEFORE_PARTITIONER = frozenset({"async-collective", "pre-spmd-partitioner"})
_EXPORT_PASSES = frozenset({"shardy-xla", "sharding-propagation"})
_PARTITIONED_HEADER = re.compile(rb"^\s*HloModule\s[^\n]*\bis_scheduled=true\b")
_PARTITIONED_SITE = "mhlo.spmd_output_sharding"


# The collectives SPMD partitioning makes to move shards between devices: in a per-device module their
# shardings are the partitioner's own (a reversed dim's collective-permute lists the devices in another
# order), not a placement anyone wrote.
PARTITIONER_COLLECTIVES = frozenset({
    "all-gather", "all-gather-start", "all-reduce", "all-reduce-start", "all-to-all", "collective-permute",
    "collective-permute-start", "ragged-all-to-all", "reduce-scatter",
})


def stage_of_name(path: str) -> Stage:
    """The stage XLA's dump file name says (``INPUT`` for a name XLA did not write)."""
    name = dump_name(path)
    if name is None:
        return Stage.INPUT
    if name.point in (Point.AFTER_OPTIMIZATIONS, Point.COMPILED):
        return Stage.PARTITIONED
    if name.point is Point.PASS:
        return _tpu_stage(name) if name.build is not None else _pass_stage(name)
    if name.point is Point.SHARDY_STAGE and name.in_dump:
        return Stage.INPUT if name.after == "input_module" else Stage.EXPORTED
    return Stage.INPUT


def _pass_stage(name: DumpName) -> Stage:
    """A CPU or GPU per-pass dump's stage: before the partitioner's pipeline, and in it up to Shardy's
    export, an input; the export itself; per device after it."""
    if name.pipeline in _BEFORE_PARTITIONER or (
        name.pipeline == "spmd-partitioner" and (name.after == "pipeline-start" or name.before in _EXPORT_PASSES)
    ):
        return Stage.INPUT
    return Stage.EXPORTED if name.after in _EXPORT_PASSES else Stage.PARTITIONED


def _tpu_stage(name: DumpName) -> Stage:
    """A TPU per-pass dump's stage, from where its step falls between the steps of its module's export
    (``after_shardy-xla``) and partitioning dumps beside it; ``INPUT`` when the folder holds neither."""
    export, partitioned = _tpu_steps(name.folder).get(name.module_id, (None, None))
    step = name.step if name.step is not None else 0
    if partitioned is not None and step >= partitioned:
        return Stage.PARTITIONED
    if export is not None and step >= export:
        return Stage.EXPORTED
    return Stage.INPUT


Steps = Mapping[int, tuple[int | None, int | None]]
_LISTED: dict[str, tuple[int, Steps]] = {}  # folder -> (its mtime when listed, its TPU modules' steps)
_LISTED_FOLDERS = 64
# A folder changed this recently may change again within one tick of its file system's clock, keeping
# its mtime: its listing is not kept (a language server, alive for hours, would never see the change).
_SETTLED_NS = 2_000_000_000


def _tpu_steps(folder: str) -> Steps:
    """Per module id, (step of its export dump, step of its partitioning dump) in ``folder``, each None
    if absent; listed again whenever the folder changes."""
    where = folder or "."
    try:
        mtime = os.stat(where).st_mtime_ns
        kept = _LISTED.get(folder)
        if kept is not None and kept[0] == mtime:
            return kept[1]
        names = os.listdir(where)
    except OSError:
        return {}
    steps = _module_steps(dump_name(os.path.join(folder, n)) for n in names)
    if time.time_ns() - mtime > _SETTLED_NS:
        if len(_LISTED) >= _LISTED_FOLDERS:  # (a bounded memory starts again: safe beside a server's threads)
            _LISTED.clear()
        _LISTED[folder] = (mtime, steps)
    return steps


def _module_steps(names: Iterable[DumpName | None]) -> Steps:
    """The first export step of each TPU module among ``names``, and its first per-device one: the
    partitioning's dump, or one of the pipelines it runs inside itself after the export."""
    exports: dict[int, int] = {}
    per_device: dict[int, list[int]] = {}
    for d in names:
        if d is None or d.point is not Point.PASS or d.build is None or d.step is None:
            continue
        if d.after in _EXPORT_PASSES:
            exports[d.module_id] = min(d.step, exports.get(d.module_id, d.step))
        elif d.after == _TPU_PARTITIONING or d.pipeline in _TPU_PARTITIONING_PIPELINES:
            per_device.setdefault(d.module_id, []).append(d.step)
    steps: dict[int, tuple[int | None, int | None]] = {}
    for module in exports.keys() | per_device.keys():
        export = exports.get(module)
        after = [s for s in per_device.get(module, []) if export is None or s > export]
        steps[module] = (export, min(after, default=None))
    return steps


def module_stage(file_stage: Stage, header: bytes, hlo: Iterable[DistinctValue]) -> Stage:
    """The stage of a module: its text first (its ``HloModule`` line ``header``, its HLO sites ``hlo``),
    then ``file_stage``, what its dump file's name says."""
    if _PARTITIONED_HEADER.match(header) or any(dv.site.site == _PARTITIONED_SITE for dv in hlo):
        return Stage.PARTITIONED
    return file_stage


__all__ = ["PARTITIONER_COLLECTIVES", "Stage", "module_stage", "stage_of_name"]
