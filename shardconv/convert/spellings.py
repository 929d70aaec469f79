"""The HLO spellings of one sharding: V1 explicit device list, V2 iota, V3 mesh-based, and V3 → V2.

Model → model only; the CLI's ``--to v1/v2/v3`` and every HLO input that arrives as V3 call these.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..errors import NotExpressibleError
from ..model import HloSharding, Kind, Mesh, MeshSharding, TensorSharding, TileAssignment
from ..verify import verify_on
from .to_hlo import to_hlo
from .to_sdy import to_sdy, to_sdy_manual


def to_v1(hlo: HloSharding) -> HloSharding:
    """The same sharding with an explicit device list (V1); tuples element-wise."""
    if hlo.kind is Kind.TUPLE:
        return HloSharding.tuple_of([to_v1(e) for e in hlo.elements])
    if hlo.tile is None or not hlo.tile.is_iota:
        return hlo
    return replace(hlo, tile=TileAssignment.from_devices(hlo.tile.dims, hlo.tile.devices))


def to_v2(hlo: HloSharding) -> HloSharding:
    """The same sharding as an iota (V2): found by reading the device order on a one-axis mesh,
    which succeeds exactly when the order is a reshape+transpose of iota."""
    if hlo.kind is Kind.TUPLE:
        return HloSharding.tuple_of([to_v2(e) for e in hlo.elements])
    if hlo.tile is None or hlo.tile.is_iota:
        return hlo
    line = Mesh.of([("d", hlo.tile.num_devices)])
    try:
        out = to_hlo(to_sdy(hlo, line), line)
    except NotExpressibleError:
        out = None
    if out is None or out.tile is None or (out.tile.dims, out.tile.devices, out.subgroups) != (
        hlo.tile.dims, hlo.tile.devices, hlo.subgroups
    ):
        raise NotExpressibleError("the explicit device order is not a reshape+transpose of iota")
    return out


def to_v3(sharding: TensorSharding, mesh: Mesh, *, manual_axes: Sequence[str] = ()) -> HloSharding:
    """HLO V3 (mesh-based) spelling: Shardy's structure in XLA's syntax, on ``mesh`` itself."""
    verify_on(sharding, mesh)
    if manual_axes:
        raise NotExpressibleError("shardconv does not spell manual axes in HLO V3 yet")
    if sharding.unreduced_op != "sum":
        raise NotExpressibleError(f"HLO V3 has no unreduced={sharding.unreduced_op}")
    closed = tuple(replace(d, is_closed=True, priority=None) for d in sharding.dims)
    return HloSharding(Kind.MESH, mesh_sharding=MeshSharding(mesh, closed, sharding.replicated, sharding.unreduced))


def v3_to_v2(hlo: HloSharding) -> HloSharding:
    """A V3 (mesh-based) sharding as the tile-array sharding XLA derives from it; others unchanged."""
    if hlo.kind is not Kind.MESH or hlo.mesh_sharding is None:
        return hlo
    mesh = hlo.mesh_sharding.mesh
    sharding, manual = to_sdy_manual(hlo, mesh)
    return to_hlo(sharding, mesh, manual_axes=manual.axes)
