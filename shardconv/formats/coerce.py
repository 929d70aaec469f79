"""The public entry points' arguments brought to model objects: a model as is, text parsed (and
remembered, so later errors point into it), anything else a TypeError that says what was expected."""

from __future__ import annotations

from collections.abc import Mapping
from math import prod
from typing import Any

from shardconv.core.arguments import type_error
from shardconv.core.errors import ShardingValidationError
from shardconv.core.mesh_invariants import verify_mesh
from shardconv.core.model import (
    HloSharding,
    Mesh,
    MeshAxis,
    PartitionSpec,
    TensorSharding,
    TensorShardingPerValue,
)

SdyArg = TensorSharding | TensorShardingPerValue | str
HloArg = HloSharding | str | bytes
MeshLike = Mesh | str
SpecArg = PartitionSpec | str | tuple[object, ...]


def as_hlo(value: object, function: str, parameter: str = "sharding") -> HloSharding:
    """An ``HloSharding``, or HLO text / a serialized OpSharding parsed."""
    if type(value) is HloSharding:
        return value
    if isinstance(value, str) and not value.strip():
        from shardconv.formats.detect import detect_kind

        detect_kind(value)  # raises: empty text is no sharding (b"", the empty proto, is replicated)
    if isinstance(value, (str, bytes)):
        from shardconv.formats.hlo.read import parse_hlo

        return parse_hlo(value)
    raise type_error(function, parameter, "an HloSharding or HLO sharding text such as '{devices=[2,4]<=[8]}'", value)


def as_sdy(value: object, function: str, parameter: str = "sharding") -> TensorSharding | TensorShardingPerValue:
    """A Shardy sharding (or per-value sharding), or its text parsed."""
    if type(value) is TensorSharding or type(value) is TensorShardingPerValue:
        return value
    if isinstance(value, str):
        from shardconv.formats.sdy.read import parse_sdy, parse_sdy_per_value

        per_value = value.lstrip().startswith(("#sdy.sharding_per_value", "<[<"))
        return parse_sdy_per_value(value) if per_value else parse_sdy(value)
    raise type_error(
        function,
        parameter,
        "a TensorSharding, a TensorShardingPerValue or Shardy text such as '<@mesh, [{\"x\"}]>'",
        value,
    )


AnyValue = HloSharding | TensorSharding | TensorShardingPerValue


def as_any(value: object, function: str, parameter: str = "sharding") -> AnyValue:
    """An HLO or Shardy sharding as a model, its text (told apart as ``convert`` tells it), or a
    serialized OpSharding."""
    expected = "an HloSharding, a TensorSharding, or HLO or Shardy text such as '{devices=[2,4]<=[8]}'"
    if isinstance(value, bytes) or type(value) is HloSharding:
        return as_hlo(value, function, parameter)
    if type(value) is TensorSharding or type(value) is TensorShardingPerValue:
        return value
    if isinstance(value, str):
        from shardconv.formats.detect import parse_input

        parsed = parse_input(value).value
        if isinstance(parsed, (HloSharding, TensorSharding, TensorShardingPerValue)):
            return parsed

        hint = " (shardconv.from_partition_spec(spec, mesh) makes it one)" if isinstance(parsed, PartitionSpec) else ""
        raise ShardingValidationError(  # a wrong value in the text, not an argument of the wrong type
            f"{function}() takes a sharding, and {value!r} is a {type(parsed).__name__}{hint}"
        )
    raise type_error(function, parameter, expected, value)


def as_mesh(value: object, function: str, parameter: str = "mesh") -> Mesh:
    """A ``Mesh``, mesh text (``x=2,y=4``, ``<["x"=2]>``, ...), or a torch-xla ``Mesh`` (its plain
    ``device_ids``/``mesh_shape``/``axis_names`` attributes are read; torch-xla is never imported).
    Verified here, so a bad mesh is reported as itself, never pointed into a sharding's text."""
    if type(value) is Mesh:
        verify_mesh(value)
        return value
    if isinstance(value, str):
        from shardconv.formats.sdy.read import parse_mesh

        return parse_mesh(value)
    if all(hasattr(value, a) for a in ("device_ids", "mesh_shape", "axis_names")) and not hasattr(value, "devices"):
        return torch_mesh(value.device_ids, value.mesh_shape, value.axis_names)  # type: ignore[attr-defined]  # duck-typed torch-xla Mesh (hasattr above)
    raise type_error(function, parameter, "a Mesh or mesh text such as 'x=2,y=4'", value)


def as_mesh_arg(value: object, function: str) -> Mesh | Mapping[str, Mesh] | None:
    """``as_mesh``, also allowing None (an inlined mesh) and a name -> mesh mapping."""
    if value is None:
        return value
    if isinstance(value, Mapping):
        return {k: as_mesh(v, function) for k, v in value.items()}
    return as_mesh(value, function)


def torch_mesh(device_ids: object, mesh_shape: object, axis_names: object = None) -> Mesh:
    """torch-xla's ``Mesh(device_ids, mesh_shape, axis_names)`` as a shardconv mesh: the ids fill the
    shape in C order, as torch-xla's ``get_logical_mesh`` reshapes them; unnamed axes become ``_axis_N``."""
    ids = [int(d) for d in _flat(device_ids)]  # type: ignore[call-overload]  # ids are ints or numpy ints
    shape = [int(s) for s in mesh_shape]  # type: ignore[attr-defined]  # any sequence of ints
    given: Any = axis_names  # any sequence of names (torch-xla passes a tuple)
    names = [f"_axis_{i}" for i in range(len(shape))] if given is None else [str(n) for n in given]
    if len(names) != len(shape):
        raise ShardingValidationError(f"torch-xla mesh: {len(names)} axis names for a {len(shape)}-axis mesh_shape")
    if (prod(shape) if shape else len(ids)) != len(ids):
        raise ShardingValidationError(f"torch-xla mesh: {len(ids)} device ids for mesh_shape {tuple(shape)}")
    return Mesh.of(tuple(MeshAxis(n, s) for n, s in zip(names, shape)), ids)


def _flat(values: object) -> list[object]:
    """A numpy array (any shape) or a nested sequence, flattened in C order (numpy is not imported)."""
    if hasattr(values, "ravel"):
        return list(values.ravel().tolist())
    out: list[object] = []
    for v in values:  # type: ignore[attr-defined]  # a nested sequence (no ravel: not numpy)
        out.extend(_flat(v) if isinstance(v, (list, tuple)) else [v])
    return out


def as_spec(value: object, function: str, parameter: str = "spec") -> PartitionSpec:
    """A ``PartitionSpec``, its text (``P(...)`` or a tuple), or a torch-xla spec as a plain tuple."""
    if type(value) is PartitionSpec:
        return value
    if isinstance(value, str):
        from shardconv.formats.spec.read import parse_partition_spec

        return parse_partition_spec(value)
    if isinstance(value, tuple):
        from shardconv.formats.spec.read import spec_from_values

        return spec_from_values(value, function)
    raise type_error(function, parameter, "a PartitionSpec, spec text such as \"P(None, 'x')\", or a tuple", value)


__all__ = ["as_hlo", "as_mesh", "as_mesh_arg", "as_sdy", "as_spec", "torch_mesh"]
