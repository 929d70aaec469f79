"""A real LSP session with ``shardconv server`` (pytest-lsp drives it over stdio), and real jax dumps."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from support.jax_child import write_with_jax

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def deep_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``jax_dumps``' program with 64 layers: a lowered module of some 25 KB, the unit a large dump repeats."""
    return write_with_jax(HERE.parent / "support" / "make_dumps.py", tmp_path_factory.mktemp("deep_dumps"), "64")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "shardconv", "server"]))
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    await lsp_client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()
