"""``names=True``: each site's key (what trace follows a sharded value by) and read (its distinct value,
tensor type and op), as the reference rules give them from the site's own columns, on every real dump
and on soups of fragments; and the core's ``Follower.step``, trace's loop over a dump's sites, against
that loop written plainly."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings

from scan.test_names import DUMPS
from scan.test_soups import LINES, options
from shardconv.scan import native
from shardconv.scan.columns import NONE, kind_of, site_column
from shardconv.scan.sites import SiteKind
from support.explore import examples
from support.reference_scan.keys import Scope, value_key

if TYPE_CHECKING:
    from shardconv._native import Names

SHARDING = {SiteKind.HLO, SiteKind.SDY_SHARDING, SiteKind.SDY_SHARDING_BARE, SiteKind.SDY_PER_VALUE,
            SiteKind.SDY_PER_VALUE_LIST}


def _expected_key(scan: native.Scan, i: int, col: dict[str, list[int]]) -> str | None:
    if kind_of(scan.value_kinds[col["value"][i]]) not in SHARDING or col["name"][i] == NONE:
        return None
    scope: Scope = (None, None, False)
    if col["scope"][i] != NONE:
        n, k, e = scan.scopes[col["scope"][i]]
        scope = (n, None, e) if k == "func" else (None, n, e)
    param = None if col["param"][i] == NONE else col["param"][i]
    return value_key(scan.names[col["name"][i]], scope, param, col["flags"][i])


def _check(data: bytes) -> int:
    scan = native.scan_bytes(data, native.ScanOptions(names=True))
    col = {c: site_column(scan, c) for c in ("key", "read", "value", "name", "scope", "param", "flags", "shapes", "op")}
    for i in range(len(col["key"])):
        got = None if col["key"][i] == NONE else scan.keys[col["key"][i]]
        assert got == _expected_key(scan, i, col), i
        assert scan.reads[col["read"][i]] == (col["value"][i], col["shapes"][i], col["op"][i])
    keys = list(scan.keys)
    assert keys[: len(scan.names)] == list(scan.names)
    assert (keys.index("result") if "result" in scan.keys else NONE) == scan.result_key
    return sum(k != NONE for k in col["key"])


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_keys_per_site(path: Path) -> None:
    _check(path.read_bytes())


def test_the_dumps_have_keys_of_every_form() -> None:
    """The dumps above hold every rule's case: by position, by name, with a function, and ``result``."""
    keys = {k for p in DUMPS for k in native.scan_bytes(p.read_bytes(), native.ScanOptions(names=True)).keys}
    assert {"result", "arg[0]"} <= keys
    assert any(k.startswith("@") and ":%" in k for k in keys) and any(k.startswith("%") for k in keys)


@settings(max_examples=examples(100))
@given(LINES, options)
def test_keys_in_soups(data: bytes, opts: object) -> None:
    _check(data)


def test_a_scan_without_names_has_no_keys() -> None:
    scan = native.scan_bytes((DUMPS[0]).read_bytes())
    assert "key" not in scan.columns and list(scan.keys) == [] and scan.reads == []
    with pytest.raises(ValueError, match="without names"):
        native.core_follower().step(scan, (0, 1), [], 0, lambda i: (), _names(scan), None, True)


def _names(scan: native.Scan) -> Names:
    return scan.defined_in(list(range(len(scan.defined))))


def _plainly(scan: native.Scan, readings: list[object], lines: int, parts) -> dict[str, list[object]]:  # type: ignore[no-untyped-def]
    col = {c: site_column(scan, c) for c in ("key", "read", "line", "col")}
    out: dict[str, list[object]] = {}
    for i, k in enumerate(col["key"]):
        if k == NONE:
            continue
        place = (col["line"][i] + lines, col["col"][i])
        r = readings[col["read"][i]]
        pairs = parts(i) if r is None or k == scan.result_key else [(scan.keys[k], r)]
        for key, reading in pairs:
            out.setdefault(key, []).append((reading, *place))
    return out


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_a_step_reads_the_sightings_of_the_plain_loop(path: Path) -> None:
    """Half the reads say one thing (in ``readings``), the other half are asked of ``parts`` site by
    site (as a tuple or a per-value sharding's elements are). The dump followed twice, with readings
    equal in all but identity the second time: every value is reported changed, in the plain loop's
    order, with its sightings on each side."""
    scan = native.scan_bytes(path.read_bytes(), native.ScanOptions(names=True))
    key, names = site_column(scan, "key"), _names(scan)

    def parts(i: int) -> list[tuple[str, object]]:
        return [(f"{scan.keys[key[i]]}#{j}", ("part", i, j)) for j in range(i % 3)]

    for half in (True, False):  # (``result`` asks ``parts`` even so)
        def readings() -> list[object]:
            return [("read", r) if r % 2 or not half else None for r in range(len(scan.reads))]  # noqa: B023

        follower = native.core_follower()
        first, again = readings(), readings()
        n, _, maybe, gone = follower.step(scan, (0, len(key)), first, 7, parts, names, "first", True)
        want = _plainly(scan, first, 7, parts)
        assert (n, maybe, gone) == (len(want), [], [])
        n, _, maybe, gone = follower.step(scan, (0, len(key)), again, 0, parts, names, "again", True)
        assert [(ask, k, obs) for ask, k, obs, _ in maybe] == [
            (False, k, [(r, line - 7, col) for r, line, col in obs]) for k, obs in want.items()
        ]
        assert [held for *_, held in maybe] == [(k, obs, "first") for k, obs in want.items()]
        assert gone == []
        if want:
            n, positional, maybe, gone = follower.step(scan, (1, 1), again, 0, parts, names, "empty", True)
            assert (n, positional, maybe) == (0, True, [])
            assert {k for _, (k, _, _) in gone} <= set(want)


def test_a_scan_s_strings_read_like_a_sequence() -> None:
    """``names`` and ``keys`` are native: each string made once as it is read, the keys the names first."""
    log = next(p for p in DUMPS if p.name == "seed-pass-log.txt").read_bytes()
    scan = native.scan_bytes(log, native.ScanOptions(names=True))
    names, keys = scan.names, scan.keys
    assert len(names) > 0 and len(keys) >= len(names)
    assert names[0] is names[0] and names[-1] == list(names)[-1] and keys[len(names) - 1] == names[-1]
    assert names[0] in names and "no such %name" not in names
    for bad in (len(names), -len(names) - 1):
        with pytest.raises(IndexError):
            names[bad]
