"""The public ``Site`` iteration (``scan_text`` / ``scan_path``), made column by column in bulk, gives
exactly the records the plain construction gives: each scan site read as a ``ValueSite``, parsed, and
passed to ``Site(...)``, on generated soups (broken and non-UTF-8 values among them) and real dumps."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support.explore import examples

from scan.test_soups import DUMPS, LINES
from shardconv.scan import native
from shardconv.scan.api import Site, scan_path, scan_text
from shardconv.scan.sites import RECORD_KINDS, SiteKind
from shardconv.scan.values import site_value


def plain(data: bytes, path: str) -> list[Site]:
    """The sites as the straightforward construction makes them, one ``Site.__init__`` per site."""
    made = []
    for s in native.iter_sites(native.scan_bytes(data), path):
        if s.kind is SiteKind.MODULE_START or s.kind in RECORD_KINDS:
            continue
        value, error = site_value(s)
        made.append(Site(
            kind=s.kind, attribute=s.site, text=s.text, value=value, error=error, name=s.value, shapes=s.shapes,
            line=s.line, col=s.col, end_line=s.end_line, end_col=s.end_col, start=s.start, end=s.end,
            function=s.function if s.function is not None else s.computation, op=s.op,
        ))
    return made


def observed(sites: list[Site]) -> list[tuple[object, ...]]:
    """All a caller sees of each site: equality, hash, repr, its fields in order; its error (a new one for
    each broken site, whichever way it is made) by its kind, message and place."""
    seen = []
    for s in sites:
        e = s.error
        if e is not None:
            s = replace(s, error=None)
        seen.append((s, hash(s), repr(s), list(vars(s).items()), s.static_shape(),
                     None if e is None else (type(e), str(e), e.pos, e.line, e.column)))
    return seen


@settings(max_examples=examples(300))
@given(LINES, st.sampled_from([b"", b"\n  %x = f32[8] parameter(0), sharding={devices=[2\n", b"\nsharding=\xff{r}\n",
                               b'\n  %0 = "a"() {mhlo.sharding = "{devices=[2]0,1\\zz}"}\n', b"\nsharding=\0\n"]))
def test_bulk_iteration_gives_the_plain_records(data: bytes, tail: bytes) -> None:
    data += tail
    assert observed(list(scan_text(data))) == observed(plain(data, "<text>"))


def test_bulk_iteration_of_real_dumps(jax_dump_files: list[Path]) -> None:
    broken = 0
    for path in [*DUMPS, *jax_dump_files]:
        got = list(scan_path(str(path)))
        assert observed(got) == observed(plain(path.read_bytes(), str(path))), path
        broken += sum(s.error is not None for s in got)
    assert broken  # (the dumps hold values that do not parse: the error path is compared too)
