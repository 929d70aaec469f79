"""Public entry points: a wrong type is a TypeError naming the expected types, text is accepted where a
model is expected, and the order is always sharding, then mesh."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import shardconv as sc

ROOT = Path(__file__).resolve().parents[2]

MESH = sc.parse_mesh("x=2,y=4")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: sc.parse_hlo(12345), "parse_hlo() argument 'text_or_bytes' must be str or bytes"),
        (lambda: sc.parse_sdy(None), "parse_sdy() argument 'text' must be str, not NoneType"),
        (lambda: sc.parse_mesh(["x", 2]), "parse_mesh() argument 'text' must be str, not list"),
        (lambda: sc.parse_partition_spec(("x",)), "parse_partition_spec() argument 'text' must be str"),
        (lambda: sc.to_sdy(3.5, MESH), "to_sdy() argument 'hlo' must be an HloSharding or HLO sharding text"),
        (lambda: sc.to_sdy("{devices=[2,4]<=[8]}", 8), "to_sdy() argument 'mesh' must be a Mesh or mesh text"),
        (lambda: sc.to_hlo(sc.parse_hlo("{replicated}"), MESH), "to_hlo() argument 'sharding' must be a TensorSharding"),
        (lambda: sc.to_hlo('<@mesh, [{"x"}]>', MESH, manual_axes="x"), "argument 'manual_axes' must be a sequence"),
        (lambda: sc.verify(42, MESH), "verify() argument 'sharding' must be a TensorSharding"),
        (lambda: sc.xla_import("{replicated}"), "xla_import() argument 'shardings' must be a sequence"),
        (lambda: sc.xla_import([1]), "xla_import() argument 'shardings' must be an HloSharding"),
        (lambda: sc.from_partition_spec(["x"], MESH), "from_partition_spec() argument 'spec' must be a PartitionSpec"),
        (lambda: sc.to_sdy("{{replicated}}", MESH, rank="2"), "to_sdy() argument 'rank' must be an int or a sequence"),
        (lambda: sc.from_jax("x=2"), "from_jax() argument 'obj' must be a jax NamedSharding"),
        (lambda: sc.to_v1(3), "to_v1() argument 'hlo' must be an HloSharding or HLO sharding text"),
        (lambda: sc.v3_to_v2(None), "v3_to_v2() argument 'hlo' must be an HloSharding"),
        (lambda: sc.to_v3('<@mesh, [{"x"}]>', 8), "to_v3() argument 'mesh' must be a Mesh or mesh text"),
        (lambda: sc.conversion_notes(3), "conversion_notes() argument 'text' must be str, not int"),
        (lambda: sc.conversion_notes("{replicated}", mesh=3), "conversion_notes() argument 'mesh' must be a Mesh"),
        (lambda: sc.check_text("x", path=3.5), "check_text() argument 'path' must be str, not float"),
        (lambda: sc.roundtrip(3, MESH), "roundtrip() argument 'sharding' must be an HloSharding, a TensorSharding"),
        (lambda: sc.roundtrip("{replicated}", 8), "roundtrip() argument 'mesh' must be a Mesh or mesh text"),
    ],
)
def test_wrong_types_are_type_errors(call, expected: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError) as info:
        call()
    assert expected in str(info.value)


def _arguments(f: object) -> tuple[list[str], list[str]]:
    """The names of ``f``'s required positional parameters, and of those with defaults."""
    import inspect

    ps = list(inspect.signature(f).parameters.values())  # type: ignore[arg-type]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p.name for p in ps if p.default is inspect.Parameter.empty and p.kind in positional]
    optional = [p.name for p in ps if p.default is not inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
    return required, optional


def test_no_public_function_fails_on_a_wrong_argument_but_with_a_type_or_sharding_error() -> None:
    """Every public function, each argument in turn of the wrong type (an int, None, a float, any object, a
    word): a TypeError saying what was expected, or a ShardingError (or OSError, for a path), never an
    AttributeError or the like from deep inside."""
    import inspect

    wrongs = (3, None, 3.5, object(), "bogus")
    fine = {"mesh": "x=2,y=4", "shardings": ["{replicated}"], "paths": ["{replicated}"]}
    failures = []
    for name in sorted(n for n in dir(sc) if not n.startswith("_")):
        f = getattr(sc, name)
        if not callable(f) or inspect.isclass(f):
            continue
        required, optional = _arguments(f)
        base = [fine.get(p, "{devices=[2,4]<=[8]}") for p in required]
        calls = [(base[:i] + [w] + base[i + 1 :], {}) for i in range(len(base)) for w in wrongs]
        calls += [(base, {p: w}) for p in optional for w in wrongs if w is not None]
        for args, kwargs in calls:
            try:
                f(*args, **kwargs)
            except (TypeError, ValueError, OSError, sc.ShardingError):
                continue
            except Exception as e:  # noqa: BLE001 - the failure being looked for
                failures.append((name, args, kwargs, type(e).__name__, str(e)[:80]))
    assert failures == []


def test_jax_objects_get_a_pointer_to_from_jax() -> None:
    from jax.sharding import PartitionSpec as P

    with pytest.raises(TypeError, match=r"not P \(for jax objects, use shardconv.from_jax\(...\) first\)"):
        sc.to_sdy(P("x"), MESH)  # type: ignore[arg-type]


def test_text_is_accepted_where_a_model_is_expected() -> None:
    hlo = "{devices=[2,4]<=[8]}"
    assert sc.to_sdy(hlo, "x=2,y=4") == sc.to_sdy(sc.parse_hlo(hlo), MESH)
    sdy = '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'
    assert sc.to_hlo(sdy, "x=2,y=4") == sc.to_hlo(sc.parse_sdy(sdy), MESH) == sc.parse_hlo(hlo)
    assert str(sc.to_hlo('#sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, []>]>', MESH)) == "{{devices=[2,4]<=[8] last_tile_dim_replicate}, {replicated}}"
    sc.verify(sdy, "x=2,y=4", rank=2)
    assert sc.from_partition_spec("P('x', 'y')", "x=2,y=4") == sc.parse_sdy(sdy)
    assert sc.from_partition_spec(("x", "y"), MESH) == sc.parse_sdy(sdy)
    assert sc.to_partition_spec(sdy, MESH) == sc.to_partition_spec(hlo, MESH) == sc.parse_partition_spec("P('x', 'y')")
    assert sc.xla_import([hlo]) == sc.xla_import([sc.parse_hlo(hlo)])
    assert sc.roundtrip(hlo, "x=2,y=4") == sc.roundtrip(sc.parse_hlo(hlo), MESH)
    v1, v3 = "{devices=[2,4]0,1,2,3,4,5,6,7}", "{mesh['x'=2,'y'=4], [{'x'}, {'y'}]}"
    assert sc.to_v1(hlo) == sc.to_v1(sc.parse_hlo(hlo)) == sc.parse_hlo(v1)
    assert sc.to_v2(v1) == sc.v3_to_v2(v3) == sc.parse_hlo(hlo)
    assert sc.to_v3(sdy, "x=2,y=4") == sc.to_v3(sc.parse_sdy(sdy), MESH) == sc.parse_hlo(v3)
    assert sc.roundtrip(sdy, "x=2,y=4") == sc.roundtrip(sc.parse_sdy(sdy), MESH)


def test_one_argument_order_and_the_old_one_warns() -> None:
    spec = sc.parse_partition_spec("P(None, 'y')")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = sc.from_partition_spec(spec, MESH)
    with pytest.warns(DeprecationWarning, match="pass the spec first"):
        old = sc.from_partition_spec(MESH, spec)  # type: ignore[arg-type]
    assert new == old == sc.parse_sdy('<@mesh, [{}, {"y"}]>')


@pytest.mark.parametrize("bad", [["0x8"], [(0, 8)], ["2y4"], ["x"]])
def test_check_text_refuses_the_allowed_meshes_the_command_line_refuses(bad: list[object]) -> None:
    """``check_text(allowed_meshes=...)`` reads shapes as ``--allowed-meshes`` does: one parser."""
    from shardconv.check.config import parse_shapes

    spelled = ["x".join(map(str, b)) if not isinstance(b, str) else b for b in bad]
    with pytest.raises(ValueError):
        parse_shapes(spelled)
    with pytest.raises(sc.ShardingValidationError, match="is not a shape like 2x4"):
        sc.check_text("HloModule m, num_partitions=8\n", allowed_meshes=bad)  # type: ignore[arg-type]


def test_check_text_takes_shapes_as_text_or_numbers() -> None:
    seed = (ROOT / "examples" / "seed-distorted-mesh.mlir").read_text()
    assert [f.rule for f in sc.check_text(seed, allowed_meshes=["2x4"])] == [
        f.rule for f in sc.check_text(seed, allowed_meshes=[(2, 4)])
    ]
