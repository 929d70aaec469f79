"""The spellings that differ between XLA/Shardy releases, each from a public source: what shardconv
reads from it and what it prints back at each release it targets (docs/releases.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

XLA_TESTS = "xla/service/spmd/shardy/test"


@dataclass(frozen=True)
class HloCase:
    """``text`` as the release named by ``source`` writes it, and shardconv's printing per release."""

    text: str
    source: str
    prints: dict[str, str] = field(default_factory=dict)  # xla_version -> printed text; missing: = "0.10.2"


def quoted(text: str) -> dict[str, str]:
    """The same text at every release."""
    return {"0.9.2": text, "0.10.2": text, "head": text}


HLO: tuple[HloCase, ...] = (
    # V3's first spelling in XLA's sources (bare names), before any jaxlib shipped V3.
    HloCase("{mesh[a=2,b=4], [{a}, {b}]}", "xla/hlo/ir/hlo_sharding_test.cc",
            quoted("{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], [{c}, {a, b:(2)2, ?}]}", "xla/hlo/ir/named_sharding_test.cc",
            quoted("{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'c'}, {'a', 'b':(2)2, ?}]}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], [], unreduced={d:(4)2}}", "xla/hlo/ir/named_sharding_test.cc",
            quoted("{mesh['a'=2,'b'=4,'c'=3,'d'=8], [], unreduced={'d':(4)2}}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], manual}", "xla/hlo/ir/named_sharding_test.cc",
            quoted("{mesh['a'=2,'b'=4,'c'=3,'d'=8], manual}")),
    HloCase("{mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}", "xla/hlo/ir/named_sharding_test.cc",
            quoted("{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}")),
    HloCase("{mesh[ooo=10], device_ids=(8,3,7,5,4,2,6,0,1,9), [{ooo}]}", "xla/hlo/ir/mesh_and_axis_test.cc",
            quoted("{mesh['ooo'=10], device_ids=(8,3,7,5,4,2,6,0,1,9), [{'ooo'}]}")),
    HloCase("{mesh[a=2,b=2], [{a}]}", f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir",
            quoted("{mesh['a'=2,'b'=2], [{'a'}]}")),
    # The single-device mesh: maximal_mesh up to jaxlib 0.10.2, single_device at head.
    HloCase("{maximal_mesh[device_id=5]}", "xla/hlo/ir/named_sharding_test.cc",
            {"0.9.2": "{maximal_mesh[device_id=5]}", "0.10.2": "{maximal_mesh[device_id=5]}",
             "head": "{single_device[device_id=5]}"}),
    HloCase("{single_device[device_id=5]}", f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir",
            {"0.9.2": "{maximal_mesh[device_id=5]}", "0.10.2": "{maximal_mesh[device_id=5]}",
             "head": "{single_device[device_id=5]}"}),
    HloCase("{single_device[device_id=1]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            {"0.9.2": "{maximal_mesh[device_id=1]}", "0.10.2": "{maximal_mesh[device_id=1]}",
             "head": "{single_device[device_id=1]}"}),
    # Head's export writes these as 0.10.2 does.
    HloCase("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            quoted("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}")),
    HloCase("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{}, {}], manual={'a', 'b'}}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            quoted("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{}, {}], manual={'a', 'b'}}")),
    HloCase("{mesh[], [{}, {}]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir", quoted("{mesh[], [{}, {}]}")),
    # The rank-0 shorthand: from jaxlib 0.10.0 on, axes of size 1 may be left out of "every axis".
    HloCase("{mesh['a'=1,'b'=4], [], unreduced={'b'}}", "xla/hlo/ir/mesh_and_axis.cc",
            {"0.9.2": "{mesh['a'=1,'b'=4], [], unreduced={'b'}}", "0.10.2": "{mesh['a'=1,'b'=4], unreduced}",
             "head": "{mesh['a'=1,'b'=4], unreduced}"}),
    HloCase("{mesh['a'=2,'b'=1], [], manual={'a'}}", "xla/hlo/ir/mesh_and_axis.cc",
            {"0.9.2": "{mesh['a'=2,'b'=1], [], manual={'a'}}", "0.10.2": "{mesh['a'=2,'b'=1], manual}",
             "head": "{mesh['a'=2,'b'=1], manual}"}),
)
