"""The model's HTML printers (``_repr_html_`` in Jupyter): the device grid of ``ui/picture.py``.
Importing this module registers them with core/printing.py."""

from __future__ import annotations

from shardconv.convert import to_hlo, v3_to_v2
from shardconv.core.model import HloSharding, Kind, Mesh, TensorSharding
from shardconv.core.placement import placement
from shardconv.core.printing import printer
from shardconv.ui.picture import html_fragment


@printer(HloSharding, "html")
def hlo_html(hlo: HloSharding) -> str:
    """One grid per sharding (per element of a tuple), captioned with the sharding's text."""
    if hlo.kind is Kind.TUPLE:
        return "".join(hlo_html(e) for e in hlo.elements)
    flat = v3_to_v2(hlo)
    return html_fragment(placement(flat), caption=str(hlo))


@printer(TensorSharding, "html")
def sdy_html(sharding: TensorSharding) -> str | None:
    """The grid of the HLO sharding XLA exports for ``sharding``; None when the mesh is only a name."""
    if not isinstance(sharding.mesh, Mesh):
        return None
    return html_fragment(placement(to_hlo(sharding, sharding.mesh)), caption=str(sharding))
