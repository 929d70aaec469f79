"""Which stage of a compile a module is at, so that the rules about XLA's mesh-less import of HLO
shardings apply only to modules that import reads. XLA imports a module's HLO shardings into Shardy
once, at the start of its ``shardy-xla`` pass; what Shardy exports after propagation, and the per-device
modules the partitioner makes from it, are never imported again.

The module's own text decides first: a scheduled module (``is_scheduled=true`` in its ``HloModule``
header) and a module that carries ``mhlo.spmd_output_sharding`` (what XLA writes from a compiled,
partitioned program) are per device. Where the text of a stage is
the same as the text of an input (Shardy's HLO export reads like any HLO-only module), the stage XLA
names in its dump file decides: ``*.after_shardy-xla.*`` and Shardy's ``NN.output_module.mlir`` are
the export, ``*_after_optimizations*`` and every per-pass dump from ``spmd-partitioning`` on are per
device. A TPU compile runs its passes in another order (its dump names carry ``cl_NNN``): there the
steps of the module's export and partitioning dumps beside the file decide. Any other file is an input.
"""

from __future__ import annotations

import enum
import os
import re
from functools import lru_cache

from shardconv.check.context import ModuleContext
from shardconv.text.files import XLA_DUMP_TIMESTAMP


class Stage(str, enum.Enum):
    INPUT = "input"  # a module a compile starts from: XLA imports its HLO shardings
    EXPORTED = "exported"  # Shardy's export, after propagation: the partitioner's input
    PARTITIONED = "partitioned"  # per device, after spmd-partitioning


# module_0000.jit_f.0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioning.txt
_PER_PASS = re.compile(
    XLA_DUMP_TIMESTAMP
    + r"module_\d+\.[^./]+\.\d+\.(?P<pipeline>[^.]+)\.after_(?P<after>[^.]+)(?:\.before_(?P<next>[^.]+))?"
)
_SHARDY_STAGE = re.compile(r"\d+\.(?P<stage>[\w-]+)\.mlir")
# a TPU compile's per-pass dump: module_0016.jit_f.cl_933746096.0021.spmd-cleanup.after_pipeline-start.before_dce.txt;
# its pipelines run in another order than the CPU's (dozens of passes before the partitioner's, two after
# Shardy's export and before the partitioning), so the module's own dumps beside it say where it stands
_TPU_PER_PASS = re.compile(
    XLA_DUMP_TIMESTAMP + r"(?P<module>module_\d+\.[^./]+\.cl_\d+)\.(?P<step>\d+)\.[^.]+\.after_(?P<after>[^.]+)"
)
_TPU_PARTITIONING = "tpu-spmd-partitioning"
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
    name = os.path.basename(path)
    if re.search(r"_after_optimizations", name):
        return Stage.PARTITIONED
    m = _PER_PASS.match(name)
    if m is not None:
        pipeline, after, nxt = m.group("pipeline", "after", "next")
        if pipeline in _BEFORE_PARTITIONER or (
            pipeline == "spmd-partitioner" and (after == "pipeline-start" or nxt in _EXPORT_PASSES)
        ):
            return Stage.INPUT
        return Stage.EXPORTED if after in _EXPORT_PASSES else Stage.PARTITIONED
    m = _TPU_PER_PASS.match(name)
    if m is not None:
        return _tpu_stage(os.path.dirname(path), m.group("module"), int(m.group("step")))
    m = _SHARDY_STAGE.fullmatch(name)
    if m is not None and os.path.basename(os.path.dirname(os.path.dirname(path))) == "shardy":
        return Stage.INPUT if m.group("stage") == "input_module" else Stage.EXPORTED
    return Stage.INPUT


def _tpu_stage(folder: str, module: str, step: int) -> Stage:
    """A TPU per-pass dump's stage, from where its step falls between the steps of its module's export
    (``after_shardy-xla``) and partitioning dumps beside it; ``INPUT`` when the folder holds neither."""
    export, partitioned = _tpu_steps(folder, module)
    if partitioned is not None and step >= partitioned:
        return Stage.PARTITIONED
    if export is not None and step >= export:
        return Stage.EXPORTED
    return Stage.INPUT


@lru_cache(maxsize=64)
def _tpu_steps(folder: str, module: str) -> tuple[int | None, int | None]:
    """(step of ``module``'s export dump, step of its partitioning dump) in ``folder``, each None if absent."""
    export = partitioned = None
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return None, None
    for name in names:
        m = _TPU_PER_PASS.match(name)
        if m is None or m.group("module") != module:
            continue
        step = int(m.group("step"))
        if m.group("after") in _EXPORT_PASSES and (export is None or step < export):
            export = step
        elif m.group("after") == _TPU_PARTITIONING and (partitioned is None or step < partitioned):
            partitioned = step
    return export, partitioned


def module_stage(ctx: ModuleContext) -> Stage:
    """The stage of ``ctx``'s module: its text first, then its dump file's name."""
    header = ctx.num_partitions.site.line_text if ctx.num_partitions is not None else b""
    if _PARTITIONED_HEADER.match(header) or any(dv.site.site == _PARTITIONED_SITE for dv in ctx.hlo):
        return Stage.PARTITIONED
    return stage_of_name(ctx.path)


def imported(ctx: ModuleContext) -> bool:
    """XLA imports this module's HLO shardings without a mesh: it holds HLO shardings, no sharding
    mesh of its own, and is a compile's input (not Shardy's export, not a per-device module)."""
    return bool(ctx.hlo) and not ctx.sharding_meshes() and module_stage(ctx) is Stage.INPUT


__all__ = ["PARTITIONER_COLLECTIVES", "Stage", "imported", "module_stage", "stage_of_name"]
