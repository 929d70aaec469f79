"""``check``'s findings and fixes as LSP diagnostics and code actions: positions through the one
``LineIndex`` (UTF-16 columns), rule codes linking to the rule's documentation, fixes marked safe or
unsafe as ruff marks them."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from shardconv.check.diagnostics import CheckFinding
from shardconv.check.emit import rule_uri
from shardconv.server.outline import Declared, Outline
from shardconv.server.positions import LineIndex

SOURCE = "shardconv"
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}


def lsp_range(lines: LineIndex, line: int, col: int, end_line: int | None, end_col: int | None) -> types.Range:
    """The range of a scan position (1-based lines, 1-based byte columns, end exclusive)."""
    start = types.Position(*lines.at(line, col))
    if end_line is None or end_col is None or (end_line, end_col) <= (line, col):
        return types.Range(start, start)
    return types.Range(start, types.Position(*lines.at(end_line, end_col)))


def diagnostic(f: CheckFinding, index: int, lines: LineIndex) -> types.Diagnostic:
    """One finding; ``data`` holds its index in the analysis, which its code action reads back."""
    message = "\n".join((f.message, *f.notes))
    return types.Diagnostic(
        range=lsp_range(lines, f.line, f.col, f.end_line, f.end_col),
        message=message,
        severity=SEVERITY.get(f.severity, types.DiagnosticSeverity.Information),
        code=f.rule,
        code_description=types.CodeDescription(href=rule_uri(f.rule)),
        source=SOURCE,
        data={"finding": index},
    )


def code_action(
    f: CheckFinding, diag: types.Diagnostic, uri: str, version: int | None, lines: LineIndex
) -> types.CodeAction | None:
    """The fix of ``f`` as a workspace edit (every byte-span edit of it, or none), safe ones preferred."""
    if f.fix is None or not f.fix.edits or f.expected:
        return None
    edits = [
        types.TextEdit(
            range=types.Range(types.Position(*lines.position(e.start)), types.Position(*lines.position(e.end))),
            new_text=e.new.decode("utf-8", "surrogateescape"),
        )
        for e in sorted(f.fix.edits, key=lambda e: e.start)
    ]
    title = f"Fix {f.rule}: {f.fix.description}" + ("" if f.fix.safe else " (unsafe)")
    change = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=list(edits),
    )
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=f.fix.safe,
        edit=types.WorkspaceEdit(document_changes=[change]),
    )


def symbols(outline: Outline, lines: LineIndex) -> list[types.DocumentSymbol]:
    """The document's outline: meshes, then functions holding their sharded values."""

    def symbol(
        d: Declared, kind: types.SymbolKind, children: Sequence[types.DocumentSymbol] = ()
    ) -> types.DocumentSymbol:
        s = d.span
        rng = lsp_range(lines, s.line, s.col, s.end_line, s.end_col)
        name = d.name if d.kind != "mesh" else "@" + d.name
        return types.DocumentSymbol(
            name=name,
            kind=kind,
            range=rng,
            selection_range=rng,
            detail=d.detail or None,
            children=list(children) or None,
        )

    by_function: dict[tuple[int, int] | None, list[types.DocumentSymbol]] = {}
    for v in outline.values:
        by_function.setdefault(v.scope, []).append(symbol(v, types.SymbolKind.Variable))
    out = [symbol(m, types.SymbolKind.Namespace) for m in outline.meshes]
    for fn in outline.functions:
        out.append(symbol(fn, types.SymbolKind.Function, by_function.pop(fn.scope, ())))
    out.extend(s for group in by_function.values() for s in group)
    return out


__all__ = ["SEVERITY", "SOURCE", "code_action", "diagnostic", "lsp_range", "symbols"]
