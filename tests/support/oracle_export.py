"""XLA's own sdy -> HLO export (jaxlib) as a test oracle: many shardings in one MLIR module per call.

Each case becomes a parameter of ``@main`` carrying ``sdy.sharding``; the HLO text of the converted
module gives XLA's ``sharding={...}`` for each parameter (None when XLA attaches none).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import prod

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from shardconv.core.model import Mesh, TensorSharding  # noqa: E402
from shardconv.formats.sdy.write import print_mesh, print_sharding  # noqa: E402
from shardconv.text.brackets import skip_group  # noqa: E402


@dataclass(frozen=True)
class ExportCase:
    mesh: Mesh
    sharding: TensorSharding


def _shape(case: ExportCase) -> str:
    dims = [prod(r.size(case.mesh) for r in d.axes) for d in case.sharding.dims]
    return "tensor<" + "".join(f"{d}x" for d in dims) + "f32>"


def export_module(cases: Sequence[ExportCase]) -> str:
    """One module declaring every mesh once and one parameter per case."""
    meshes: dict[Mesh, str] = {}
    args = []
    for i, c in enumerate(cases):
        key = Mesh(axes=c.mesh.axes, explicit_device_ids=c.mesh.explicit_device_ids)
        name = meshes.setdefault(key, f"m{len(meshes)}")
        sh = replace(c.sharding, mesh=name)
        args.append(f"%arg{i}: {_shape(c)} {{sdy.sharding = {print_sharding(sh)}}}")
    decls = "\n".join(f"  {print_mesh(replace(m, name=n), form='decl')}" for m, n in meshes.items())
    return f"module @m {{\n{decls}\n  func.func @main({', '.join(args)}) {{\n    return\n  }}\n}}\n"


_PARAM = re.compile(r"parameter\((\d+)\)(, sharding=)?")


def _braced(text: str, start: int) -> str:
    return text[start : skip_group(text, start, own_kind_only=True, comments=False)]


def xla_export(cases: Sequence[ExportCase]) -> list[str | None]:
    """XLA's exported HLO sharding text for each case: one jaxlib call per device count in the batch
    (XLA aborts on a module whose meshes disagree on the number of devices)."""
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(cases):
        groups.setdefault(c.mesh.num_devices, []).append(i)
    out: list[str | None] = [None] * len(cases)
    for idx in groups.values():
        for i, text in zip(idx, _export_one_module([cases[i] for i in idx])):
            out[i] = text
    return out


def _export_one_module(cases: Sequence[ExportCase]) -> list[str | None]:
    from jax._src.lib import _jax

    text = export_module(cases)
    if os.environ.get("SHARDCONV_DUMP_ORACLE"):
        open(os.environ["SHARDCONV_DUMP_ORACLE"], "w").write(text)
    hlo = _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False).as_hlo_text()
    out: list[str | None] = [None] * len(cases)
    for m in _PARAM.finditer(hlo):
        if m.group(2):
            out[int(m.group(1))] = _braced(hlo, m.end())
    return out
