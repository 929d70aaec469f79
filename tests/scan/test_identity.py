"""A site's identity (the ``identity`` column of a scan with names): the same for a site saying the same
thing in any scan, wherever it sits and whatever ids the scan gave it; another for anything it reads."""

from __future__ import annotations

from shardconv.scan import native
from shardconv.scan.columns import site_column

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=4]>\n'
SITE = (
    '  %x = stablehlo.add %p, %q {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x8xf32>\n'
)


def _identities(text: str) -> dict[str, int]:
    """Each site's identity by the text of its line."""
    scan = native.scan_bytes(text.encode(), names=True)
    lines = text.splitlines()
    ids, at = site_column(scan, "identity"), site_column(scan, "line")
    return {lines[at[i] - 1].strip(): ids[i] for i in range(len(ids))}


def test_a_site_has_one_identity_in_any_scan_and_another_for_anything_it_reads() -> None:
    variants = [
        SITE,
        SITE.replace("%x", "%y"),  # its name
        SITE.replace('{"a"}', '{"b"}'),  # its value
        SITE.replace("8x8", "8x16"),  # its type
        SITE.replace("stablehlo.add", "stablehlo.multiply"),  # its op
    ]
    alone = _identities(MESH + SITE)[SITE.strip()]
    among = _identities(MESH + "".join(reversed(variants)) + "  %z = stablehlo.tanh %x : tensor<8x8xf32>\n")
    assert among[SITE.strip()] == alone  # other sites first: other ids, the same identity
    assert len({among[v.strip()] for v in variants}) == len(variants)
    in_func = _identities(MESH + "func.func @f(%p: tensor<8x8xf32>) {\n" + SITE + "}\n")
    assert in_func[SITE.strip()] != alone  # its function is part of what it says


def test_a_scan_without_names_has_no_identity_column() -> None:
    assert "identity" not in native.scan_bytes((MESH + SITE).encode()).columns
