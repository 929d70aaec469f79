"""The spellings that differ between XLA/Shardy releases, each from a public source: what shardconv
reads from it and what it prints back at each release it targets (docs/releases.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

XLA_TESTS = "xla/service/spmd/shardy/test"
SIMPLIFY = f"{XLA_TESTS}/stablehlo_export_pipeline_simplify_replicated.mlir"


@dataclass(frozen=True)
class HloCase:
    """``text`` as the release named by ``source`` writes it, and shardconv's printing per release."""

    text: str
    source: str
    prints: dict[str, str | None] = field(default_factory=dict)  # xla_version -> its printing; None: it has no such sharding


def from_0_9_2(bare: str, quoted: str) -> dict[str, str | None]:
    """``bare`` in jaxlib 0.9.1, ``quoted`` from 0.9.2 on (every later release prints the same)."""
    return {"0.9.1": bare, "0.9.2": quoted, "0.10.2": quoted, "head": quoted}


HLO: tuple[HloCase, ...] = (
    # jaxlib 0.9.1 writes V3 axis names bare (XLA's tests of that time); 0.9.2 and later quote them.
    HloCase("{mesh[a=2,b=4], [{a}, {b}]}", "xla/hlo/ir/hlo_sharding_test.cc",
            from_0_9_2("{mesh[a=2,b=4], [{a}, {b}]}", "{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], [{c}, {a, b:(2)2, ?}]}", "xla/hlo/ir/named_sharding_test.cc",
            from_0_9_2("{mesh[a=2,b=4,c=3,d=8], [{c}, {a, b:(2)2, ?}]}",
                       "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'c'}, {'a', 'b':(2)2, ?}]}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], [], unreduced={d:(4)2}}", "xla/hlo/ir/named_sharding_test.cc",
            from_0_9_2("{mesh[a=2,b=4,c=3,d=8], [], unreduced={d:(4)2}}",
                       "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [], unreduced={'d':(4)2}}")),
    HloCase("{mesh[a=2,b=4,c=3,d=8], manual}", "xla/hlo/ir/named_sharding_test.cc",
            from_0_9_2("{mesh[a=2,b=4,c=3,d=8], manual}", "{mesh['a'=2,'b'=4,'c'=3,'d'=8], manual}")),
    HloCase("{mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}", "xla/hlo/ir/named_sharding_test.cc",
            from_0_9_2("{mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}",
                       "{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}")),
    HloCase("{mesh[ooo=10], device_ids=(8,3,7,5,4,2,6,0,1,9), [{ooo}]}", "xla/hlo/ir/mesh_and_axis_test.cc",
            from_0_9_2("{mesh[ooo=10], device_ids=(8,3,7,5,4,2,6,0,1,9), [{ooo}]}",
                       "{mesh['ooo'=10], device_ids=(8,3,7,5,4,2,6,0,1,9), [{'ooo'}]}")),
    HloCase("{mesh[a=2,b=2], [{a}]}", f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir",
            from_0_9_2("{mesh[a=2,b=2], [{a}]}", "{mesh['a'=2,'b'=2], [{'a'}]}")),
    # jaxlib 0.9.1 keeps no dims when none holds an axis (named_sharding.h of the time, and the oracle).
    HloCase("{mesh['a'=2,'b'=4], [{?}, {}]}", "xla/hlo/ir/named_sharding.h",
            from_0_9_2("{mesh[a=2,b=4], replicated}", "{mesh['a'=2,'b'=4], [{?}, {}]}")),
    HloCase("{mesh['a'=2,'b'=2], [{}], unreduced={'a', 'b'}}", "xla/hlo/ir/named_sharding.h",
            from_0_9_2("{mesh[a=2,b=2], unreduced}", "{mesh['a'=2,'b'=2], [{}], unreduced={'a', 'b'}}")),
    # The single-device mesh: maximal_mesh up to jaxlib 0.10.2, single_device at head.
    HloCase("{maximal_mesh[device_id=5]}", "xla/hlo/ir/named_sharding_test.cc",
            {**from_0_9_2("{maximal_mesh[device_id=5]}", "{maximal_mesh[device_id=5]}"),
             "head": "{single_device[device_id=5]}"}),
    HloCase("{single_device[device_id=5]}", f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir",
            {**from_0_9_2("{maximal_mesh[device_id=5]}", "{maximal_mesh[device_id=5]}"),
             "head": "{single_device[device_id=5]}"}),
    HloCase("{single_device[device_id=1]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            {**from_0_9_2("{maximal_mesh[device_id=1]}", "{maximal_mesh[device_id=1]}"),
             "head": "{single_device[device_id=1]}"}),
    # Head's export writes these as 0.10.2 does.
    HloCase("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            from_0_9_2("{mesh[a=2,b=2,c=2,d=2], [{a, ?}, {b, ?}]}", "{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}")),
    HloCase("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{}, {}], manual={'a', 'b'}}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            from_0_9_2("{mesh[a=2,b=2,c=2,d=2], [], manual={a, b}}",
                       "{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{}, {}], manual={'a', 'b'}}")),
    # Head's export writes the short forms at any rank: fully manual, and a sharding that uses no
    # axis on the empty mesh. jaxlib 0.10.2 reads a short form as rank 0, so its printing keeps the long forms.
    # With simplify-replicated-shardings (SIMPLIFY) explicitly replicated axes and the empty mesh simplify too.
    HloCase("{mesh[], [{}, {}]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            {**from_0_9_2("", "{mesh[], [{}, {}]}"), "0.9.1": None, "head": "{mesh[], replicated}"}),
    HloCase("{mesh['axis_0'=16], [{}, {}], replicated={'axis_0'}}", SIMPLIFY,
            {**from_0_9_2("{mesh[axis_0=16], [], replicated={axis_0}}",
                          "{mesh['axis_0'=16], [{}, {}], replicated={'axis_0'}}"),
             "head": "{mesh[], replicated}"}),
    HloCase("{mesh['axis_0'=16], [{}, {}], unreduced={'axis_0'}}", SIMPLIFY,
            {**from_0_9_2("{mesh[axis_0=16], unreduced}",
                          "{mesh['axis_0'=16], [{}, {}], unreduced={'axis_0'}}")}),
    HloCase("{mesh['axis_0'=16], [{?}, {}]}", SIMPLIFY,
            {**from_0_9_2("{mesh[axis_0=16], replicated}", "{mesh['axis_0'=16], [{?}, {}]}")}),
    HloCase("{mesh['x'=8,'y'=4], [{}], manual={'x', 'y'}}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            {**from_0_9_2("{mesh[x=8,y=4], manual}", "{mesh['x'=8,'y'=4], [{}], manual={'x', 'y'}}"),
             "head": "{mesh['x'=8,'y'=4], manual}"}),
    HloCase("{mesh['axis_0'=16], [{}, {}]}", f"{XLA_TESTS}/stablehlo_export_pipeline.mlir",
            {**from_0_9_2("{mesh[axis_0=16], replicated}", "{mesh['axis_0'=16], [{}, {}]}"),
             "head": "{mesh[], replicated}"}),
    # The rank-0 shorthand: from jaxlib 0.10.0 on, axes of size 1 may be left out of "every axis".
    HloCase("{mesh['a'=1,'b'=4], [], unreduced={'b'}}", "xla/hlo/ir/mesh_and_axis.cc",
            {**from_0_9_2("{mesh[a=1,b=4], [], unreduced={b}}", "{mesh['a'=1,'b'=4], [], unreduced={'b'}}"),
             "0.10.2": "{mesh['a'=1,'b'=4], unreduced}", "head": "{mesh['a'=1,'b'=4], unreduced}"}),
    HloCase("{mesh['a'=2,'b'=1], [], manual={'a'}}", "xla/hlo/ir/mesh_and_axis.cc",
            {**from_0_9_2("{mesh[a=2,b=1], [], manual={a}}", "{mesh['a'=2,'b'=1], [], manual={'a'}}"),
             "0.10.2": "{mesh['a'=2,'b'=1], manual}", "head": "{mesh['a'=2,'b'=1], manual}"}),
)
