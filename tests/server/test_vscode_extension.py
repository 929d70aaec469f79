"""The VS Code extension (editors/vscode) starts the language server this package has: the command it
runs is ``shardconv server``, for the files the server checks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

EXTENSION = Path(__file__).parents[2] / "editors" / "vscode"


def test_the_extension_runs_shardconv_server() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert manifest["main"] == "./extension.js"
    assert "vscode-languageclient" in manifest["dependencies"]
    assert manifest["contributes"]["configuration"]["properties"]["shardconv.path"]["default"] == "shardconv"
    script = (EXTENSION / "extension.js").read_text()
    assert re.search(r'args:\s*\["server"\]', script), "the extension does not run `shardconv server`"
    extensions = {e for lang in manifest["contributes"]["languages"] for e in lang["extensions"]}
    assert {".mlir", ".hlo"} <= extensions
    # the command it runs is one the CLI has
    got = subprocess.run([sys.executable, "-m", "shardconv", "server", "--help"], capture_output=True, text=True)
    assert got.returncode == 0 and "language server" in got.stdout
