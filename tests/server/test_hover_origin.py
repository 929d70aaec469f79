"""A hover in a shardy-verbose dump (tests/support/make_explain_programs.py) says where each axis of the
value came from, in ``shardconv explain``'s own words, through a real LSP session; the editor's text is
what is explained, edits and all."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_lsp_session import change, diagnostics_of, open_doc, position_of

from support.cli_util import run
from support.explain_util import stage


def explain_origins(path: Path, value: str) -> list[str]:
    """The origin ``shardconv explain --value`` gives each axis of ``value`` (its text's ``origin`` rows)."""
    r = run("explain", str(path), "--value", value)
    assert r.code == 0, r.err
    return re.findall(r"^\s+origin\s+(.*)$", r.out, flags=re.MULTILINE)


async def hover_text(client: LanguageClient, uri: str, at: types.Position) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


def origin_section(md: str) -> list[str]:
    assert "**origin**" in md, md
    return [line[2:] for line in md.split("**origin**", 1)[1].splitlines() if line.startswith("- ")]


@pytest.mark.asyncio
async def test_hover_gives_each_axis_origin_as_explain_does(
    client: LanguageClient, programs: Path, tmp_path: Path
) -> None:
    # mlp: the only sharding the program gives is one constraint (P("data", "model") on the first matmul):
    # every axis of every value comes from it
    path = tmp_path / "02.after_propagation.mlir"
    shutil.copy(stage(programs, "mlp"), path)
    text = path.read_text()
    uri = await open_doc(client, path)
    await diagnostics_of(client, uri, 1)
    signature = next(line for line in text.splitlines() if "func.func @main(" in line)
    assert signature.count("sdy.sharding = ") >= 2  # explain --line would pick %arg0 on it
    cases = {"%arg0": ["dim 0 'data'"], "%arg1": ["dim 1 'model'"], "%0": ["dim 0 'data'", "dim 1 'model'"],
             "result[0]": ["dim 0 'data'"]}
    needles = {"%arg0": "%arg0: tensor", "%arg1": "%arg1: tensor", "%0": "%0 = ", "result[0]": ") -> ("}
    for value, axes in cases.items():
        needle = needles[value]
        shown = origin_section(await hover_text(client, uri, sharding_after(text, needle)))
        assert [s.split(":", 1)[0] for s in shown] == axes, shown
        origins = explain_origins(path, value)
        assert len(origins) == len(axes)
        for said, origin in zip(shown, origins, strict=True):
            assert f": from {origin}" in said  # explain's own words
            assert "constraint constraint_0" in origin  # what the program says


@pytest.mark.asyncio
async def test_hover_origin_reads_the_editors_text(client: LanguageClient, programs: Path, tmp_path: Path) -> None:
    path = tmp_path / "02.after_propagation.mlir"
    shutil.copy(stage(programs, "mlp"), path)
    text = path.read_text()
    uri = await open_doc(client, path)
    await diagnostics_of(client, uri, 1)
    at = sharding_after(text, "%0 = ")
    before = origin_section(await hover_text(client, uri, at))
    edited = "// a line the file on disk does not have\n" + text
    change(client, uri, 2, edited)
    after = origin_section(await hover_text(client, uri, types.Position(line=at.line + 1, character=at.character)))
    lines = [int(n) for s in before for n in re.findall(r"line (\d+)", s)]
    assert lines and after == [re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + 1}", s) for s in before]


def sharding_after(text: str, needle: str) -> types.Position:
    """A position inside the first ``sdy.sharding`` value after ``needle`` (the dump is ASCII: a column
    is a UTF-16 unit)."""
    at = text.index("sdy.sharding = ", text.index(needle)) + len("sdy.sharding = ") + 3
    return types.Position(line=text.count("\n", 0, at), character=at - (text.rfind("\n", 0, at) + 1))


@pytest.mark.asyncio
async def test_no_origin_without_propagation_records(client: LanguageClient, jax_dumps: Path) -> None:
    path = jax_dumps / "lowered.mlir"
    text = path.read_text()
    uri = await open_doc(client, path)
    await diagnostics_of(client, uri, 1)
    md = await hover_text(client, uri, position_of(text, '#sdy.sharding<@mesh, [{"batch"}, {}]>', into=5))
    assert "**sdy sharding**" in md and "**origin**" not in md
