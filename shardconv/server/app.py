"""``shardconv server``: the language server over stdio (pygls). Every request that reads a document
runs on a worker thread, and a document is re-checked ``DEBOUNCE`` seconds after its last edit, so a
50 MB dump never blocks the editor; a result for an older version than the editor's is dropped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from shardconv.core.model import Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.version import VERSION
from shardconv.scan.api import scan_text
from shardconv.server.analysis import Analysis, analyse, options_for, outlined
from shardconv.server.hints import hlo_hints
from shardconv.server.hover import Target, hover_markdown, target_at
from shardconv.server.lsp_types import code_action, diagnostic, lsp_range, symbols
from shardconv.server.origins import explained, has_records, origin_markdown
from shardconv.server.positions import LineIndex, units

DEBOUNCE = 0.3  # seconds after the last edit before a document is checked again
OUTLINE_WAIT = 1.0  # seconds a hover on a just opened document waits for its meshes (then answers without)
MAX_HINT_LINES = 2000  # lines of one inlay-hint request read (an editor asks for the lines in view)
SYMBOLS_WAIT = 30.0  # seconds an outline request on a just opened document waits for it
_T = TypeVar("_T")


class Documents:
    """What the server knows of each open document: its latest analysis, the pending re-check."""

    def __init__(self) -> None:
        self.analysis: dict[str, Analysis] = {}
        self.outlined: dict[str, Analysis] = {}  # the latest analysis with its outline (maybe of an older version)
        self.lines: dict[str, tuple[int | None, LineIndex]] = {}  # an unchecked version's lines, for hovers
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.generation: dict[str, int] = {}
        self.open: set[str] = set()
        self.warned: set[str] = set()  # config errors shown once
        self.first_outline: dict[str, asyncio.Event] = {}  # set once a document has an outline
        self.copies: dict[str, tuple[int | None, str]] = {}  # a version's text in a file, for explain


class ShardconvServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("shardconv", VERSION)
        self.documents = Documents()
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shardconv-check")
        self.readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="shardconv-read")
        self.scratch = tempfile.TemporaryDirectory(prefix="shardconv-server-")  # removed at exit
        self.copying = threading.Lock()

    async def off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on a reader thread: the loop keeps answering meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.readers, fn, *args)


def path_of(uri: str) -> str | None:
    """The file a ``file:`` URI names (None for an unsaved buffer), for the config lookup."""
    return to_fs_path(uri) if uri.startswith("file:") else None


def schedule(server: ShardconvServer, uri: str, delay: float) -> None:
    """Check ``uri`` ``delay`` seconds from now, replacing a check not started yet."""
    docs = server.documents
    pending = docs.timers.pop(uri, None)
    if pending is not None:
        pending.cancel()
    docs.open.add(uri)
    docs.first_outline.setdefault(uri, asyncio.Event())
    loop = asyncio.get_running_loop()
    docs.timers[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(recheck(server, uri)))


async def recheck(server: ShardconvServer, uri: str) -> None:
    """Analyse the document as it is now on the checker thread, then publish its diagnostics unless an
    edit came in meanwhile. A failure is logged to the editor; the server goes on."""
    try:
        await _recheck(server, uri)
    except Exception as e:  # noqa: BLE001 - a bug must not stop the server: the editor's log shows it
        message = f"shardconv: checking {uri} failed: {type(e).__name__}: {e}"
        server.window_log_message(types.LogMessageParams(types.MessageType.Error, message))


async def _recheck(server: ShardconvServer, uri: str) -> None:
    docs = server.documents
    docs.timers.pop(uri, None)
    generation = docs.generation.get(uri, 0) + 1
    docs.generation[uri] = generation
    if uri not in docs.open:  # closed meanwhile
        return
    doc = server.workspace.get_text_document(uri)
    loop = asyncio.get_running_loop()  # the text is encoded on the checker thread too
    result = await loop.run_in_executor(
        server.checker, analyse, doc.source, path_of(uri), doc.version, encoding_of(server)
    )
    if docs.generation.get(uri) != generation or uri not in docs.open:
        return
    docs.analysis[uri] = result
    docs.lines.pop(uri, None)
    if result.config_error is not None and result.config_error not in docs.warned:
        docs.warned.add(result.config_error)
        server.window_show_message(
            types.ShowMessageParams(types.MessageType.Warning, f"shardconv: {result.config_error}; using the defaults")
        )
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri,
            version=result.version,
            diagnostics=[diagnostic(f, i, result.lines) for i, f in enumerate(result.findings)],
        )
    )
    full = await loop.run_in_executor(server.checker, outlined, result, path_of(uri))
    if docs.generation.get(uri) == generation and uri in docs.open:
        docs.analysis[uri] = docs.outlined[uri] = full
        docs.first_outline[uri].set()


async def first_outline(server: ShardconvServer, uri: str, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for a just opened document's first outline (its meshes)."""
    ready = server.documents.first_outline.get(uri)
    if ready is not None and not ready.is_set():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(ready.wait(), timeout)


def current(server: ShardconvServer, uri: str) -> Analysis | None:
    """The latest analysis of ``uri`` if it is of the editor's version."""
    a = server.documents.analysis.get(uri)
    return a if a is not None and a.version == server.workspace.get_text_document(uri).version else None


def line_at(server: ShardconvServer, uri: str, line: int) -> bytes:
    """Line ``line`` (0-based) of the editor's text, through the analysis' index when it is current."""
    a = current(server, uri)
    if a is not None:
        return a.lines.line_bytes(line)
    doc = server.workspace.get_text_document(uri)
    cached = server.documents.lines.get(uri)
    if cached is None or cached[0] != doc.version:
        cached = (doc.version, LineIndex(doc.source.encode("utf-8", "surrogateescape"), encoding_of(server)))
        server.documents.lines[uri] = cached
    return cached[1].line_bytes(line)


def encoding_of(server: ShardconvServer) -> str:
    """The position encoding the session agreed on (UTF-16 unless the editor offered another)."""
    return str(server.workspace.position_encoding or "utf-16")


def byte_col(server: ShardconvServer, line_text: bytes, character: int) -> int:
    """The byte column of LSP column ``character`` in ``line_text``."""
    return LineIndex(line_text, encoding_of(server)).offset(0, character)


def mesh_lookup(server: ShardconvServer, uri: str) -> Callable[[str, int], Mesh | None]:
    """``(name, line) -> Mesh``: the declaration of ``@name`` in the module of 1-based ``line``, parsed
    from its own line (the latest outline says where it is)."""
    a = server.documents.outlined.get(uri)

    def mesh_of(name: str, line: int) -> Mesh | None:
        decl = a.outline.mesh(name, line) if a is not None and a.outline is not None else None
        if decl is None:
            return None
        for s in scan_text(line_at(server, uri, decl.span.line - 1)):
            if isinstance(s.value, Mesh) and (s.name or "").lstrip("@") == name:
                return s.value
        return None

    return mesh_of


def hover(server: ShardconvServer, params: types.HoverParams) -> types.Hover | None:
    uri, pos = params.text_document.uri, params.position
    text = line_at(server, uri, pos.line)
    target = target_at(text, pos.line + 1, byte_col(server, text, pos.character))
    if target is None:
        return None
    a = server.documents.analysis.get(uri)
    global_mesh = a.options.mesh if a is not None else options_for(path_of(uri))[0].mesh
    reading = uri not in server.documents.outlined
    md = hover_markdown(target, pos.line + 1, global_mesh, mesh_lookup(server, uri), reading=reading)
    if md is None:
        return None
    site = target.site
    if site is not None and isinstance(site.value, (TensorSharding, TensorShardingPerValue)) and has_records(text):
        origin = origin_markdown(explained(dump_copy(server, uri), pos.line + 1, site.name))
        md = md if origin is None else f"{md}\n\n{origin}"
    return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=md),
        range=_range(text, pos.line, target, encoding_of(server)),
    )


def dump_copy(server: ShardconvServer, uri: str) -> str:
    """A file holding the editor's text of ``uri`` (``explain`` reads a dump at a path, lines again by
    their bytes), written once per version; the last version's file is removed."""
    doc = server.workspace.get_text_document(uri)
    docs = server.documents
    with server.copying:
        held = docs.copies.get(uri)
        if held is not None and held[0] == doc.version:
            return held[1]
        drop_copy(server, uri)
        name = os.path.basename(path_of(uri) or "document.mlir")
        fd, path = tempfile.mkstemp(prefix=f"v{doc.version}-", suffix=f"-{name}", dir=server.scratch.name)
        with os.fdopen(fd, "wb") as out:
            out.write(doc.source.encode("utf-8", "surrogateescape"))
        docs.copies[uri] = (doc.version, path)
        return path


def drop_copy(server: ShardconvServer, uri: str) -> None:
    held = server.documents.copies.pop(uri, None)
    if held is not None:
        with contextlib.suppress(OSError):
            os.unlink(held[1])


def _range(text: bytes, line: int, target: Target, encoding: str) -> types.Range:
    return types.Range(
        types.Position(line, units(text[: target.start], encoding)),
        types.Position(line, units(text[: target.end], encoding)),
    )


def definition(server: ShardconvServer, params: types.DefinitionParams) -> types.Location | None:
    uri, pos = params.text_document.uri, params.position
    text = line_at(server, uri, pos.line)
    target = target_at(text, pos.line + 1, byte_col(server, text, pos.character))
    a = server.documents.outlined.get(uri)
    if target is None or target.mesh_ref is None or a is None or a.outline is None:
        return None
    decl = a.outline.mesh(target.mesh_ref, pos.line + 1)
    if decl is None:
        return None
    s = decl.span
    return types.Location(uri=uri, range=lsp_range(a.lines, s.line, s.col, s.end_line, s.end_col))


def inlay_hints(server: ShardconvServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    """HLO strings' axes on the configured global mesh, for the lines in view (at most MAX_HINT_LINES)."""
    uri, first = params.text_document.uri, params.range.start.line
    a = server.documents.analysis.get(uri)
    mesh = a.options.mesh if a is not None else options_for(path_of(uri))[0].mesh
    if mesh is None:
        return []
    last = min(params.range.end.line, first + MAX_HINT_LINES)
    rows = [line_at(server, uri, n) for n in range(first, last + 1)]
    encoding = encoding_of(server)
    return [
        types.InlayHint(
            position=types.Position(h.line, units(rows[h.line - first][: h.byte_col], encoding)),
            label=h.label,
            kind=types.InlayHintKind.Type,
            tooltip=h.tooltip,
        )
        for h in hlo_hints(b"\n".join(rows), first, mesh)
        if h.line - first < len(rows)
    ]


def actions(server: ShardconvServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    a = current(server, uri)
    if a is None:
        return []
    want = params.range
    out: list[types.CodeAction] = []
    for i, f in enumerate(a.findings):
        d = diagnostic(f, i, a.lines)
        if _overlaps(d.range, want):
            action = code_action(f, d, uri, a.version, a.lines)
            if action is not None:
                out.append(action)
    return out


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build() -> ShardconvServer:
    """The server with its features registered."""
    server = ShardconvServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: ShardconvServer, params: types.DidOpenTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: ShardconvServer, params: types.DidChangeTextDocumentParams) -> None:
        schedule(ls, params.text_document.uri, DEBOUNCE)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: ShardconvServer, params: types.DidSaveTextDocumentParams) -> None:
        if current(ls, params.text_document.uri) is None:
            schedule(ls, params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: ShardconvServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        docs = ls.documents
        pending = docs.timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        docs.open.discard(uri)
        for table in (docs.analysis, docs.outlined, docs.lines, docs.first_outline):
            table.pop(uri, None)
        with ls.copying:
            drop_copy(ls, uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: ShardconvServer, params: types.HoverParams) -> types.Hover | None:
        await first_outline(ls, params.text_document.uri, OUTLINE_WAIT)
        return await ls.off_loop(hover, ls, params)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: ShardconvServer, params: types.DefinitionParams) -> types.Location | None:
        await first_outline(ls, params.text_document.uri, OUTLINE_WAIT)
        return await ls.off_loop(definition, ls, params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def on_code_action(ls: ShardconvServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.off_loop(actions, ls, params)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    async def on_inlay_hint(ls: ShardconvServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        return await ls.off_loop(inlay_hints, ls, params)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_symbols(ls: ShardconvServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        await first_outline(ls, params.text_document.uri, SYMBOLS_WAIT)
        a = ls.documents.outlined.get(params.text_document.uri)
        return [] if a is None or a.outline is None else await ls.off_loop(symbols, a.outline, a.lines)

    return server


def serve() -> None:
    """Answer an editor on stdin/stdout until it shuts the server down. The protocol gets its own copy
    of stdout; file descriptor 1 and ``sys.stdout`` go to stderr, so nothing else can write into it."""
    os.environ.setdefault("NO_COLOR", "1")
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    build().start_io(sys.stdin.buffer, protocol_out)


__all__ = ["DEBOUNCE", "ShardconvServer", "build", "serve"]
