"""One call per case, as sqlglot's ``validate_identity`` / ``validate_all``: a format or convert test
states what a text reads as and writes to, and these helpers run the library's one path for it (the
reader its notation is detected as, then ``convert.resolve`` to either side, as ``shardconv convert``
does). A new case is one line."""

from __future__ import annotations

from shardconv.convert.resolve import as_hlo, as_sdy
from shardconv.core.model import Mesh
from shardconv.formats.detect import Input, parse_input, parse_mesh_option


def _read(text: str, mesh: Mesh | None) -> Input:
    return parse_input(text, num_devices=mesh.num_devices if mesh is not None else None)


def validate_identity(text: str, write: str | None = None) -> None:
    """``text`` reads (in the notation it is detected as) and prints as itself, or as ``write`` (its
    canonical spelling: XLA's, which does not always read back, e.g. a quote in an axis name)."""
    printed = str(parse_input(text).value)
    assert printed == (text if write is None else write), (text, printed)


def validate_all(
    text: str,
    *,
    mesh: Mesh | str | None = None,
    hlo: str | None = None,
    sdy: str | None = None,
    v1: str | None = None,
    spec: str | None = None,
) -> None:
    """``text`` on ``mesh`` (a Mesh or ``--mesh`` text) converts to each spelling given: ``hlo`` (the HLO
    XLA exports), ``sdy`` (the Shardy sharding, attribute form), ``v1`` (explicit device list), ``spec``
    (the partition spec)."""
    from shardconv.convert import to_partition_spec, to_v1

    m = parse_mesh_option(mesh) if isinstance(mesh, str) else mesh
    inp = _read(text, m)
    if hlo is not None:
        assert str(as_hlo(inp, m)) == hlo, (text, hlo)
    if v1 is not None:
        assert str(to_v1(as_hlo(inp, m))) == v1, (text, v1)
    if sdy is not None or spec is not None:
        on = as_sdy(inp, m)
        if sdy is not None:
            assert str(on.sharding) == sdy, (text, sdy)
        if spec is not None:
            assert str(to_partition_spec(on.sharding, on.mesh)) == spec, (text, spec)


__all__ = ["validate_all", "validate_identity"]
