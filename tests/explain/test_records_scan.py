"""The scan floor's record kinds on real verbose dumps, on their own (the reference scanner has none):
every record the text holds is one site, with the value, op and line it sits on; and with them left out,
the native scan still agrees with the reference site for site."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.explain_util import stage

from support.differential import differences
from shardconv.scan.native import iter_sites, scan_path
from shardconv.scan.sites import RECORD_KINDS, SiteKind

PROGRAMS = ("mlp", "block", "smap", "args", "loop", "barrier", "cond", "train_loss")
RESULT = re.compile(rb"^\s*(%[\w#.$-]+)(?::\d+)?\s*=\s*\"?([\w.]+)")


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_record_is_a_site(programs: Path, name: str) -> None:
    path = stage(programs, name)
    data = path.read_bytes()
    sites = [s for s in iter_sites(scan_path(str(path)), str(path)) if s.kind in RECORD_KINDS]
    count = {k: sum(1 for s in sites if s.kind is k) for k in RECORD_KINDS}
    assert count[SiteKind.SDY_ORIGINS] == len(re.findall(rb"sdy\.(?:result_|block_arg_)?sharding_origins = ", data))
    assert count[SiteKind.SDY_ORIGIN_NAME] == data.count(b"sdy.sharding_origin_name = ")
    assert count[SiteKind.SDY_EDGES] == len(re.findall(rb"sdy\.(?:result_|block_arg_)?propagation_edges = ", data))
    lines = data.split(b"\n")
    for s in sites:
        assert s.function == "main"
        assert data[s.start : s.end] == s.raw
        text = lines[s.line - 1]
        m = RESULT.match(text)
        if m and s.kind is not SiteKind.OPERANDS:  # on an op: its result and op, as the line defines them
            assert (s.value, s.op) == (m.group(1).decode(), m.group(2).decode()), text[:120]
        if s.kind is SiteKind.OPERANDS:
            names = s.text.split(", ")
            assert all(n.encode() in text for n in names)
    ops_with_edges = [ln for ln in lines if b"sdy.propagation_edges = #" in ln and RESULT.match(ln)]
    assert count[SiteKind.OPERANDS] >= len(ops_with_edges) > 0 or name == "smap"


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_other_sites_still_agree_with_the_reference(programs: Path, name: str) -> None:
    assert differences(stage(programs, name).read_bytes()) == []
