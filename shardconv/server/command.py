"""``shardconv server``: the language server over stdio, for editors (docs/editors.md). The command
lives in the server layer (a peer of ``cli``, which reaches it through COMMANDS by name)."""

from __future__ import annotations

import click

EPILOG = """\b
An editor starts it; it reads LSP messages on stdin and answers on stdout.
Needs the lsp extra: pip install 'shardconv[lsp]'. Setup for VS Code, Neovim and Helix: docs/editors.md.
"""


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
def server() -> int:
    """Run the language server on stdin/stdout: check's findings as diagnostics, their fixes as code
    actions, hovers with the device grid and every spelling, outlines and go to definition."""
    try:
        from shardconv.server.app import serve
    except ImportError as e:
        raise click.UsageError(
            f"the language server needs the lsp extra ({e.name} is missing): pip install 'shardconv[lsp]'"
        ) from None
    serve()
    return 0
