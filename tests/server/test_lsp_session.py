"""``shardconv server`` end to end, through a real LSP session over stdio: diagnostics as a document is
opened and edited, hovers, a fix applied as the editor applies it, outlines, go to definition, and a
large dump answered without blocking a hover. Dumps are jax's own, written by tests/support/make_dumps.py."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from shardconv.check.emit import rule_uri
from support.large_dump import repeated

SEED = Path(__file__).parents[2] / "shardconv" / "examples" / "seed-distorted-mesh.mlir"
GLOBAL_MESH = "batch=2,model=4"  # the mesh the seed's user ran on (its header says so)


def position_of(text: str, needle: str, nth: int = 0, into: int = 1) -> types.Position:
    """The LSP position (UTF-16 column) ``into`` characters inside the ``nth`` occurrence of ``needle``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1) + into
    return types.Position(line=line, character=len(text.splitlines()[line][:col].encode("utf-16-le")) // 2)


async def open_doc(client: LanguageClient, path: Path, text: str | None = None, language: str = "mlir") -> str:
    uri = path.resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=path.read_text() if text is None else text
            )
        )
    )
    return uri


async def diagnostics_of(client: LanguageClient, uri: str, version: int, timeout: float = 60) -> list[types.Diagnostic]:
    """The diagnostics the server publishes for ``version`` of ``uri`` (within ``timeout`` seconds)."""

    async def published() -> list[types.Diagnostic]:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    return await asyncio.wait_for(published(), timeout)


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """``edits`` applied as an editor applies them (UTF-16 positions, from the end backwards)."""
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        line = lines[p.line]
        units = 0
        for i, ch in enumerate(line):
            if units >= p.character:
                return sum(len(x) + 1 for x in lines[: p.line]) + i
            units += 2 if ord(ch) > 0xFFFF else 1
        return sum(len(x) + 1 for x in lines[: p.line]) + len(line)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def compiled_param_sharding(compiled: str, number: int) -> str:
    """The sharding XLA gave entry parameter ``number`` in its compiled module (the oracle's answer)."""
    m = re.search(rf"parameter\({number}\), sharding=(\{{[^}}]*\}})", compiled)
    assert m is not None
    return m.group(1)


@pytest.mark.asyncio
async def test_a_clean_dump_has_no_diagnostics_and_an_edit_gets_them(client: LanguageClient, jax_dumps: Path) -> None:
    path = jax_dumps / "lowered.mlir"
    text = path.read_text()
    uri = await open_doc(client, path)
    assert await diagnostics_of(client, uri, 1) == []
    edited = text.replace('{"batch"}', '{"bogus"}', 1)
    change(client, uri, 2, edited)
    found = await diagnostics_of(client, uri, 2)
    assert [d.code for d in found] == ["verify"]
    d = found[0]
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "shardconv"
    assert d.code_description is not None and d.code_description.href == rule_uri("verify")
    assert "bogus" in d.message
    line = edited.splitlines()[d.range.start.line]
    assert line[d.range.start.character :].startswith('"bogus"')  # Shardy's caret: the unknown axis
    change(client, uri, 3, text)
    assert await diagnostics_of(client, uri, 3) == []


@pytest.mark.asyncio
async def test_hover_on_a_sharding_shows_the_grid_and_xlas_own_spelling(
    client: LanguageClient, jax_dumps: Path
) -> None:
    path = jax_dumps / "lowered.mlir"
    text = path.read_text()
    uri = await open_doc(client, path)
    await diagnostics_of(client, uri, 1)
    at = position_of(text, '#sdy.sharding<@mesh, [{"batch"}, {}]>', into=5)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    md = hover.contents.value
    assert hover.contents.kind == types.MarkupKind.Markdown and "\x1b" not in md
    # XLA partitioned the argument with exactly this V2 sharding (its compiled module says so)
    v2 = compiled_param_sharding((jax_dumps / "compiled.txt").read_text(), 0)
    assert f"| HLO V2 | `{v2}` |" in md
    assert "| spec | `P('batch', None)` |" in md  # the PartitionSpec make_dumps.py gave jax
    assert "| HLO V3 |" in md and "| sdy | `#sdy.sharding<@mesh, [{\"batch\"}, {}]>` |" in md
    grid = md.split("```text\n", 1)[1].split("```", 1)[0]  # the boxed grid show draws, in a code block
    assert grid.startswith("┌") and "0-3" in grid and "[0:8, 0:32]" in grid
    start = hover.range.start if hover.range is not None else None
    assert start is not None and start.line == at.line and start.character == at.character - 5


@pytest.mark.asyncio
async def test_hover_on_an_hlo_string_gives_its_axes_on_the_configured_mesh(
    client: LanguageClient, jax_dumps: Path, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.shardconv]\nmesh = "{GLOBAL_MESH}"\n')
    path = tmp_path / "compiled.txt"
    shutil.copy(jax_dumps / "compiled.txt", path)
    text = path.read_text()
    uri = await open_doc(client, path, language="plaintext")
    await diagnostics_of(client, uri, 1)
    v2 = compiled_param_sharding(text, 0)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position_of(text, "sharding=" + v2, into=12))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    md = hover.contents.value
    assert f"**axes on the global mesh** `{GLOBAL_MESH}`" in md
    assert '| sdy | `#sdy.sharding<' in md and '[{"batch"}, {}]' in md
    assert "| spec | `P('batch', None)` |" in md


@pytest.mark.asyncio
async def test_hover_and_definition_of_a_mesh_reference(client: LanguageClient, jax_dumps: Path) -> None:
    path = jax_dumps / "lowered.mlir"
    text = path.read_text()
    uri = await open_doc(client, path)
    await diagnostics_of(client, uri, 1)
    ref = position_of(text, "<@mesh,", into=3)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), ref))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**mesh @mesh**: 8 devices; axes `batch`=2, `model`=4" in hover.contents.value
    where = await client.text_document_definition_async(types.DefinitionParams(types.TextDocumentIdentifier(uri), ref))
    assert isinstance(where, types.Location) and where.uri == uri
    assert text.splitlines()[where.range.start.line].lstrip().startswith("sdy.mesh @mesh = ")
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    assert symbols is not None
    names = [(s.name, s.kind) for s in symbols if isinstance(s, types.DocumentSymbol)]
    assert ("@mesh", types.SymbolKind.Namespace) in names and ("main", types.SymbolKind.Function) in names
    main = next(s for s in symbols if isinstance(s, types.DocumentSymbol) and s.name == "main")
    assert {c.name for c in main.children or ()} >= {"%arg0", "%arg1"}


@pytest.mark.asyncio
async def test_a_fix_applied_as_the_editor_applies_it_is_what_check_fix_writes(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.shardconv]\nmesh = "{GLOBAL_MESH}"\n')
    path = tmp_path / "seed.mlir"
    # characters of two and four UTF-8 bytes (one and two UTF-16 units) before the edited shardings
    text = SEED.read_text().replace("{sdy.sharding = ", '{jax.note = "✓ 𝄞", sdy.sharding = ', 1)
    assert "𝄞" in text
    path.write_text(text)
    uri = await open_doc(client, path)
    found = await diagnostics_of(client, uri, 1)
    distorted = [d for d in found if d.code == "distorted-mesh"]
    assert distorted
    got = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), distorted[0].range, types.CodeActionContext(diagnostics=distorted)
        )
    )
    assert got is not None
    fixes = [a for a in got if isinstance(a, types.CodeAction) and a.title.startswith("Fix distorted-mesh")]
    assert len(fixes) == 1
    fix = fixes[0]
    assert fix.title.endswith("(unsafe)") and not fix.is_preferred  # it trusts the configured mesh
    assert fix.edit is not None and fix.edit.document_changes is not None
    (doc_edit,) = fix.edit.document_changes
    assert isinstance(doc_edit, types.TextDocumentEdit)
    fixed = apply_edits(text, list(doc_edit.edits))  # type: ignore[arg-type]
    # the command line's --fix writes the same bytes
    subprocess.run([sys.executable, "-m", "shardconv", "check", "--fix", str(path)], cwd=tmp_path, check=False)
    assert fixed == path.read_text() != text
    change(client, uri, 2, fixed)
    assert [d.code for d in await diagnostics_of(client, uri, 2) if d.code == "distorted-mesh"] == []


@pytest.mark.asyncio
async def test_a_safe_fix_is_preferred(client: LanguageClient, tmp_path: Path, jax_dumps: Path) -> None:
    path = tmp_path / "module.mlir"
    original = (jax_dumps / "hlo_to_stablehlo.mlir").read_text()
    # XLA's own spelling of a sharding, respelled with the subgroup form XLA prints otherwise
    m = re.search(r'mhlo.sharding = "(\{[^"]* last_tile_dim_replicate\})"', original)
    if m is None:
        pytest.fail("the HLO->StableHLO dump holds no partially replicated mhlo.sharding")
    xla = m.group(1)
    respelled = xla.replace(" last_tile_dim_replicate}", " last_tile_dims={replicated}}")
    text = original.replace(f'mhlo.sharding = "{xla}"', f'mhlo.sharding = "{respelled}"')
    path.write_text(text)
    uri = await open_doc(client, path)
    found = [d for d in await diagnostics_of(client, uri, 1) if d.code == "non-canonical"]
    found = [d for d in found if d.message.startswith("mhlo.sharding ")]
    assert len(found) == 1
    got = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), found[0].range, types.CodeActionContext(diagnostics=found)
        )
    )
    assert got is not None
    (fix,) = [a for a in got if isinstance(a, types.CodeAction)]
    assert fix.is_preferred and "unsafe" not in fix.title
    assert fix.edit is not None and fix.edit.document_changes is not None
    (doc_edit,) = fix.edit.document_changes
    assert isinstance(doc_edit, types.TextDocumentEdit)
    assert apply_edits(text, list(doc_edit.edits)) == original  # type: ignore[arg-type]


LARGE = 20 << 20  # bytes
HOVER_BOUND = 2.0  # seconds: a hover answered while a large dump is checked
CHECK_BOUND = 90.0  # seconds: its diagnostics (two cores shared with the rest of the suite)


@pytest.mark.asyncio
async def test_a_large_dump_is_checked_without_blocking_a_hover(
    client: LanguageClient, deep_dumps: Path, tmp_path: Path
) -> None:
    path = tmp_path / "large.mlir"
    text = repeated((deep_dumps / "lowered.mlir").read_text(), LARGE)
    path.write_text(text)
    uri = await open_doc(client, path, text)
    assert await diagnostics_of(client, uri, 1, timeout=CHECK_BOUND) == []
    middle = text.index("#sdy.sharding<@mesh", len(text) // 2)
    at = position_of(text, "#sdy.sharding<@mesh", into=3, nth=text.count("#sdy.sharding<@mesh", 0, middle))
    edited = text.replace('{"model"}', '{"modle"}', 1)
    change(client, uri, 2, edited)  # a re-check of the whole dump starts in 0.3 s
    published = asyncio.ensure_future(diagnostics_of(client, uri, 2, timeout=CHECK_BOUND))
    await asyncio.sleep(0.35)  # the re-check has just begun: its debounce is 0.3 s
    start = time.monotonic()
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    took = time.monotonic() - start
    assert not published.done(), "the re-check ended before the hover was asked: the dump is too small to tell"
    assert took < HOVER_BOUND, f"hover took {took:.2f} s during a check"
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "| HLO V2 | `{devices=" in hover.contents.value
    found = await published
    assert [d.code for d in found] == ["verify"]
    assert found[0].range.start.line == edited[: edited.index('"modle"')].count("\n")


@pytest.mark.asyncio
async def test_inlay_hints_give_hlo_strings_their_axes_on_the_configured_mesh(
    client: LanguageClient, jax_dumps: Path, tmp_path: Path
) -> None:
    path = tmp_path / "compiled.txt"
    shutil.copy(jax_dumps / "compiled.txt", path)
    text = path.read_text()
    uri = await open_doc(client, path, language="plaintext")
    await diagnostics_of(client, uri, 1)
    whole = types.Range(types.Position(0, 0), types.Position(text.count("\n") + 1, 0))
    params = types.InlayHintParams(types.TextDocumentIdentifier(uri), whole)
    assert not await client.text_document_inlay_hint_async(params)  # no global mesh configured
    (tmp_path / "pyproject.toml").write_text(f'[tool.shardconv]\nmesh = "{GLOBAL_MESH}"\n')
    change(client, uri, 2, text)  # re-read under the config now in force
    await diagnostics_of(client, uri, 2)
    hints = await client.text_document_inlay_hint_async(params)
    assert hints
    v2 = compiled_param_sharding(text, 0)
    after = position_of(text, "sharding=" + v2, into=len("sharding=" + v2))
    labels = {(h.position.line, h.position.character): h.label for h in hints}
    assert labels[(after.line, after.character)] == " P('batch', None)"  # the spec make_dumps.py gave jax


@pytest.mark.asyncio
async def test_a_bad_config_is_shown_once_and_the_file_checked_with_the_defaults(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.shardconv]\nmesh = "batch=2,model="\n')
    path = tmp_path / "seed.mlir"
    shutil.copy(SEED, path)
    uri = await open_doc(client, path)
    found = await diagnostics_of(client, uri, 1)
    assert [d.code for d in found] == ["synthetic-mesh"]  # what `shardconv check --no-config` says
    change(client, uri, 2, path.read_text())
    await diagnostics_of(client, uri, 2)
    shown = [m for m in client.messages if "pyproject.toml" in m.message]
    assert len(shown) == 1 and shown[0].type == types.MessageType.Warning
    assert "mesh" in shown[0].message and shown[0].message.endswith("; using the defaults")


@pytest.mark.asyncio
async def test_a_tpu_dump_s_stage_follows_its_folder_as_it_changes(
    client: LanguageClient, stages: Path, tmp_path: Path
) -> None:
    """A TPU per-pass dump's stage comes from its module's other dumps beside it. The server lives on while
    the folder changes: once Shardy's export is dumped beside it, the file is past the import, and the
    import's finding goes (the folder's listing is read again when the folder changes)."""
    per_device = next((stages / "xla").glob("module_*.jit__lambda.cpu_after_optimizations.txt")).read_text()
    head, _, rest = per_device.partition("\n")
    text = head.replace("is_scheduled=true, ", "") + "\n" + rest  # an input's text: only the name says more
    (tmp_path / "pyproject.toml").write_text('[tool.shardconv]\nallowed-meshes = ["2x4"]\n')
    path = tmp_path / "module_0016.jit__lambda.cl_933746096.0021.simplification.after_pipeline-start.before_dce.txt"
    path.write_text(text)
    os.utime(tmp_path, (time.time() - 60, time.time() - 60))  # a folder that settled a while ago
    uri = await open_doc(client, path, language="plaintext")
    assert [d.code for d in await diagnostics_of(client, uri, 1)] == ["mesh-not-allowed"]
    (tmp_path / "module_0016.jit__lambda.cl_933746096.0020.xla-partitioner.after_shardy-xla.before_dce.txt").touch()
    change(client, uri, 2, text)
    assert await diagnostics_of(client, uri, 2) == []
