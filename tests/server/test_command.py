"""``shardconv server`` without the lsp extra: a usage error naming the extra (exit 2), not a traceback."""

from __future__ import annotations

import subprocess
import sys

WITHOUT_PYGLS = "import sys; sys.modules['pygls'] = None\nfrom shardconv.cli.entry import main\nmain(['server'])"


def test_without_the_lsp_extra_the_server_says_what_to_install() -> None:
    got = subprocess.run([sys.executable, "-c", WITHOUT_PYGLS], capture_output=True, text=True, timeout=60)
    assert got.returncode == 2
    assert "pip install 'shardconv[lsp]'" in got.stderr and "pygls" in got.stderr
    assert "Traceback" not in got.stderr
