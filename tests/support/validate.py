"""One call per case, as sqlglot's ``validate_identity`` / ``validate_all``: a format or convert test
states what a text reads as and writes to, and these helpers run the library's one path for it (the
reader its notation is detected as, then ``convert.resolve`` to either side, as ``shardconv convert``
does). A new case is one line. ``validate_printed`` starts from a model value instead (generated ones)."""

from __future__ import annotations

from collections.abc import Callable

from shardconv.convert.resolve import as_hlo, as_sdy
from shardconv.core.model import HloSharding, ManualAxes, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.formats.detect import Input, parse_input, parse_mesh_option
from shardconv.formats.hlo.read import parse_hlo
from shardconv.formats.sdy.read import parse_manual_axes, parse_mesh, parse_sdy, parse_sdy_per_value

_READERS: dict[type, Callable[[str], object]] = {
    HloSharding: parse_hlo,
    TensorSharding: parse_sdy,
    TensorShardingPerValue: parse_sdy_per_value,
    Mesh: parse_mesh,
    ManualAxes: parse_manual_axes,
}


def _read(text: str, mesh: Mesh | None) -> Input:
    return parse_input(text, num_devices=mesh.num_devices if mesh is not None else None)


def validate_identity(text: str, write: str | None = None) -> object:
    """``text`` reads (in the notation it is detected as) and prints as itself, or as ``write`` (its
    canonical spelling: XLA's, which does not always read back, e.g. a quote in an axis name); returns
    the value read, for the checks a case adds (an oracle's proto bytes)."""
    value = parse_input(text).value
    printed = str(value)
    assert printed == (text if write is None else write), (text, printed)
    return value


def validate_printed(value: object, text: str | None = None) -> str:
    """``value`` prints as ``text`` (when given) and reads back as itself (a sharding also from its bare
    ``<@mesh, [...]>`` spelling); returns the text printed, for an oracle to compare."""
    printed = str(value)
    assert text is None or printed == text, (printed, text)
    read = _READERS[type(value)]
    assert read(printed) == value, printed
    if isinstance(value, TensorSharding):
        bare = value.to_text(attribute=False)
        assert bare == printed.removeprefix("#sdy.sharding") and read(bare) == value, bare
    return printed


def validate_all(
    text: str,
    *,
    mesh: Mesh | str | None = None,
    hlo: str | None = None,
    sdy: str | None = None,
    v1: str | None = None,
    v3: str | None = None,
    spec: str | None = None,
) -> None:
    """``text`` on ``mesh`` (a Mesh or ``--mesh`` text) converts to each spelling given: ``hlo`` (the HLO
    XLA exports), ``sdy`` (the Shardy sharding, attribute form), ``v1`` (explicit device list), ``v3``
    (HLO V3 by way of Shardy, as ``convert --to v3`` goes), ``spec`` (the partition spec)."""
    from shardconv.convert import to_partition_spec, to_v1, to_v3

    m = parse_mesh_option(mesh) if isinstance(mesh, str) else mesh
    inp = _read(text, m)
    if hlo is not None:
        assert str(as_hlo(inp, m)) == hlo, (text, hlo)
    if v1 is not None:
        assert str(to_v1(as_hlo(inp, m))) == v1, (text, v1)
    if sdy is not None or spec is not None or v3 is not None:
        on = as_sdy(inp, m)
        if sdy is not None:
            assert str(on.sharding) == sdy, (text, sdy)
        if spec is not None:
            assert str(to_partition_spec(on.sharding, on.mesh)) == spec, (text, spec)
        if v3 is not None:
            assert isinstance(on.sharding, TensorSharding), text
            assert str(to_v3(on.sharding, on.mesh, manual_axes=on.manual_axes)) == v3, (text, v3)


__all__ = ["validate_all", "validate_identity", "validate_printed"]
