"""Text is a value, never an argument of the wrong type: whatever string the public API is given, what
goes wrong is a ShardingError (exit 2 from the CLI), never a TypeError or another exception."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shardconv as sc

MESH = "x=2,y=2"
CALLS: dict[str, Callable[[str], object]] = {
    "to_v3": lambda s: sc.to_v3(s, MESH),
    "to_v3 on its own mesh": lambda s: sc.to_v3(s, s),
    "to_sdy": lambda s: sc.to_sdy(s, MESH),
    "to_sdy without a mesh": lambda s: sc.to_sdy(s),
    "to_sdy of rank 2": lambda s: sc.to_sdy(s, MESH, rank=2),
    "to_hlo": lambda s: sc.to_hlo(s, MESH),
    "to_hlo without a mesh": lambda s: sc.to_hlo(s),
    "to_v1": lambda s: sc.to_v1(s),
    "verify": lambda s: sc.verify(s, MESH),
    "conversion_notes": lambda s: sc.conversion_notes(s, mesh=MESH),
    "roundtrip": lambda s: sc.roundtrip(s, MESH),
    "parse_mesh": lambda s: sc.parse_mesh(s),
    "parse_partition_spec": lambda s: sc.parse_partition_spec(s),
    "from_partition_spec": lambda s: sc.from_partition_spec(s, MESH),
}
PIECES = [
    *"{}[]<>=,@\"'#:()?\\ 0123456789-_xyzT.",
    "devices=", "<=", "replicated", "maximal", "device=", "last_tile_dims=", "manual", "unreduced", "P(",
    "{mesh[", "'x'=2", "'y'=2", "device_ids=", "last_tile_dim_replicate", "metadata={", "#sdy.sharding<",
    "#sdy.sharding_per_value<[", "<@mesh, [", '{"x"}', '"y"', "{}", 'mesh<["x"=2, "y"=2]>', "replicated={",
    "{maximal_mesh[device_id=1]}", "{?}", "p1", ":(1)2", "sdy.mesh @mesh = ", "float32[8@x]",
]


@pytest.mark.parametrize(
    "text",
    [
        '#sdy.sharding_per_value<[<@mesh, [{"x"}]>]>',  # several values where one is taken
        "{devices=[2,2]<=[4]}",  # needs a mesh when none is given
        "P('x')",  # a partition spec where a sharding is taken
        '<["x"=2]>',  # a mesh where a sharding is taken
    ],
)
def test_text_of_another_kind_is_a_sharding_error(text: str) -> None:
    for name, call in CALLS.items():
        try:
            call(text)
        except sc.ShardingError:
            pass
        except Exception as e:  # noqa: BLE001 - the point: any other exception is the defect
            pytest.fail(f"{name}({text!r}) raised {type(e).__name__}: {e}")


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    st.one_of(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.text(max_size=40)),
    st.sampled_from(sorted(CALLS)),
)
def test_any_string_fails_only_with_a_sharding_error(text: str, name: str) -> None:
    try:
        CALLS[name](text)
    except sc.ShardingError:
        pass
    except Exception as e:  # noqa: BLE001 - the point: any other exception is the defect
        pytest.fail(f"{name}({text!r}) raised {type(e).__name__}: {e}")
