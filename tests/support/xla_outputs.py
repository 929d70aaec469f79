"""XLA's view of a module's output shardings, as the outputs tests ask it: jaxlib's MLIR->HLO converter
(the path ``PJRT_Executable_OptimizedProgram`` feeds), the HloModuleProto's spmd fields, the ROOT sharding."""

from __future__ import annotations

import os
import re

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from jax._src.lib import _jax
from jax._src.lib import xla_client as xc

from shardconv.text.brackets import skip_group


def compile_module(text: str) -> tuple[str, dict[int, list[bytes]]]:
    """XLA's HLO text for an MLIR module and the raw HloModuleProto fields 12/14 (spmd shardings)."""
    c = _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
    return c.as_hlo_text(), fields_of(c.as_serialized_hlo_module_proto(), (12, 14))


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = s = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return v, i


def fields_of(b: bytes, wanted: tuple[int, ...]) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        fn, wt = key >> 3, key & 7
        if wt == 0:
            _, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if fn in wanted:
                out.setdefault(fn, []).append(b[i : i + n])
            i += n
        else:
            i += 4 if wt == 5 else 8
    return out


def xla_string(blob: bytes) -> str:
    op = xc.OpSharding()
    op.ParseFromString(blob)
    return repr(xc.HloSharding.from_proto(op))


def root_sharding(hlo: str) -> str | None:
    """``sharding={...}`` of the ENTRY computation's ROOT instruction, None when it has none."""
    entry = hlo[hlo.index("\nENTRY ") :]
    line = next(ln for ln in entry.splitlines() if ln.lstrip().startswith("ROOT "))
    k = line.find("sharding={")
    if k < 0:
        return None
    start = k + len("sharding=")
    return line[start : skip_group(line, start, own_kind_only=True)]


def _xla_leaves(op: xc.OpSharding) -> list[str]:
    """XLA's ``GetOpSharding``: a tuple's elements, recursively; else the sharding itself."""
    if op.type == xc.OpSharding.Type.TUPLE:
        return [leaf for e in op.tuple_shardings for leaf in _xla_leaves(e)]
    return [repr(xc.HloSharding.from_proto(op))]


def leaves_of(text: str) -> list[str]:
    return _xla_leaves(xc.HloSharding.from_string(text).to_proto())


def pjrt_outputs(module: str, n_leaves: int) -> list[str]:
    """What PJRT's GetOutputShardings returns for a module compiled as it says: ``xla_outputs``, except
    none (an empty list) for a module without spmd_output_sharding on one partition, where no SPMD
    partitioner runs (the real executable's answer: test_outputs_undecided's one_device program)."""
    _, fields = compile_module(module)
    one = re.search(r"mhlo\.num_partitions = (\d+)", module)
    if 12 not in fields and n_leaves and (one is None or one.group(1) == "1"):
        return []
    return xla_outputs(module, n_leaves)


def xla_outputs(module: str, n_leaves: int) -> list[str]:
    """What XLA reports for a module's outputs: the converted HloModule's spmd_output_sharding when the
    module carries one, else the ROOT sharding of the converted entry (replicated when it has none)."""
    hlo, fields = compile_module(module)
    if 12 in fields:
        op = xc.OpSharding()
        op.ParseFromString(fields[12][0])
        return _xla_leaves(op)
    root = root_sharding(hlo)
    return ["{replicated}"] * n_leaves if root is None else leaves_of(root)


