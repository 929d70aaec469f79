"""The names of the files XLA's ``--xla_dump_to`` writes, read once for every command: which module a
file belongs to and which point of its compile it shows (the stage ``check`` gives a module, the order
``trace`` follows a folder in). Names only; no file is opened here."""

from __future__ import annotations

import enum
import os
import re
from dataclasses import KW_ONLY

from shardconv.core.records import record


class Point(str, enum.Enum):
    """Which point of a module's compile a dump file shows."""

    BEFORE_OPTIMIZATIONS = "before_optimizations"  # the module as the compile got it
    PASS = "pass"  # after one pass (--xla_dump_hlo_pass_re): ``NNNN.PIPELINE.after_PASS.before_NEXT``
    AFTER_OPTIMIZATIONS = "after_optimizations"  # the compiled, per-device module
    COMPILED = "compiled"  # another view of the compiled module: buffer assignment, live ranges, after codegen
    SHARDY_STAGE = "shardy_stage"  # one of Shardy's stage modules: ``shardy/module_NNNN.NAME/NN.STAGE.mlir``
    OTHER = "other"  # another file of the module: its options, LLVM IR, an object file, ``module.mlir``


@record
class DumpName:
    """What a dump file's name says. ``folder`` is the dump folder its module's files share (a Shardy
    stage sits two folders below it; one out of its dump, its own); ``step`` is a pass's number, or a
    Shardy stage's own."""

    _: KW_ONLY
    folder: str
    module_id: int
    module: str | None  # as its ``HloModule`` line names it (``jit_f``); None for a stage out of its folder
    build: str | None = None  # a TPU compile's ``cl_NNN`` after the module's name (its passes run in another order)
    point: Point
    step: int | None = None
    pipeline: str | None = None  # XLA's pass pipeline (``spmd-partitioner``)
    after: str | None = None  # the pass just run; a Shardy stage's name (``after_propagation``, ``input_module``)
    before: str | None = None  # the pass run next
    in_dump: bool = True  # False for a Shardy stage's name on a file outside ``shardy/module_NNNN.NAME/``

    @property
    def key(self) -> tuple[str, int]:
        """(dump folder, module id): the files of one module of one dump."""
        return self.folder, self.module_id


# The time (in microseconds) XLA writes before each name with --xla_dump_include_timestamp
# (``1796599993003157.module_0000.jit_f.0003....txt``).
_TIMESTAMP = r"(?:\d+\.)?"
# ``module_0000.jit_f`` then, on a TPU, ``.cl_933746096``
_ID, _BUILD = _TIMESTAMP + r"module_(?P<id>\d+)\.", r"(?:\.(?P<build>cl_\d+))?"
# a module file's name is the shortest that lets the rest be one of these endings (a name may hold a dot)
_ENDINGS = re.compile(
    _ID + r"(?P<module>[^/]+?)" + _BUILD + r"\.(?:"
    r"(?P<step>\d{4,})\.(?P<pipeline>[^.]+)\.after_(?P<after>[^.]+)(?:\.before_(?P<before>[^.]+))?\.txt"
    r"|(?P<first>before_optimizations\.txt)"
    r"|(?:[a-z]+_)?after_optimizations(?P<view>[-_][\w-]*)?\.txt"  # cpu_after_optimizations.txt, -buffer-assignment
    r"|(?P<codegen>after_codegen\.txt)"
    r")"
)
_ANY = re.compile(_ID + r"(?P<module>[^./]+)" + _BUILD + r"(?:\.|$)")  # any other file of a module
_MODULE_FOLDER = re.compile(_ID + r"(?P<module>[^/]+?)" + _BUILD)  # DIR/module_NNNN.NAME/, DIR/shardy/module_NNNN.NAME/
_SHARDY_STAGE = re.compile(r"(?P<step>\d+)\.(?P<stage>[\w-]+)\.mlir")
_SHARDY_FOLDER = "shardy"  # DIR/shardy/module_NNNN.NAME/: where XLA dumps Shardy's stage modules


def dump_name(path: str) -> DumpName | None:
    """What the name of the file ``path`` says, or None when XLA's --xla_dump_to does not write it."""
    folder, name = os.path.split(path)
    m = _ENDINGS.fullmatch(name)
    if m is not None:
        if m.group("step") is not None:
            point = Point.PASS
        elif m.group("first") is not None:
            point = Point.BEFORE_OPTIMIZATIONS
        elif m.group("codegen") is not None or m.group("view") is not None:
            point = Point.COMPILED
        else:
            point = Point.AFTER_OPTIMIZATIONS
        step = m.group("step")
        return DumpName(
            folder=folder, module_id=int(m.group("id")), module=m.group("module"), build=m.group("build"),
            point=point, step=int(step) if step is not None else None, pipeline=m.group("pipeline"),
            after=m.group("after"), before=m.group("before"),
        )
    stage = _SHARDY_STAGE.fullmatch(name)
    if stage is not None:
        shardy, module_folder = os.path.split(folder)
        mod = _MODULE_FOLDER.fullmatch(module_folder)
        return DumpName(
            folder=os.path.dirname(shardy) if mod else folder, module_id=int(mod.group("id")) if mod else 0,
            module=mod.group("module") if mod else None, build=mod.group("build") if mod else None,
            point=Point.SHARDY_STAGE, step=int(stage.group("step")), after=stage.group("stage"),
            in_dump=mod is not None and os.path.basename(shardy) == _SHARDY_FOLDER,
        )
    m = _ANY.match(name)
    if m is None:
        m = _MODULE_FOLDER.fullmatch(os.path.basename(folder))  # a file in the module's own folder (``module.mlir``)
        folder = os.path.dirname(folder)
    if m is None:
        return None
    return DumpName(
        folder=folder, module_id=int(m.group("id")), module=m.group("module"), build=m.group("build"),
        point=Point.OTHER,
    )


def shardy_stage(path: str) -> str | None:
    """The stage a file named as one of Shardy's stage modules is (``after_propagation``), in its dump's
    ``shardy/`` folder or not; None for any other name."""
    name = dump_name(path)
    return name.after if name is not None and name.point is Point.SHARDY_STAGE else None


def dump_module(path: str) -> tuple[str, int] | None:
    """(dump folder, module id) of a file XLA's --xla_dump_to wrote for a module, None for any other file
    (a Shardy stage's name on a file out of its dump too)."""
    name = dump_name(path)
    return name.key if name is not None and name.in_dump else None


__all__ = ["DumpName", "Point", "dump_module", "dump_name", "shardy_stage"]
