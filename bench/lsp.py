"""``shardconv server`` on a large dump, through a real LSP session over stdio: the time from opening
the document to its first diagnostics, and hover latency (median of HOVERS) once it is checked and
while an edit's re-check runs. The baseline beside it: ``shardconv check`` on the same file, and a
hover on a 1 KB dump. The dump is jax's (tests/support/make_dumps.py, 64 layers) repeated to SIZE MB,
values renamed per copy. Usage: python bench/lsp.py [SIZE_MB] [HOVERS]."""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.large_dump import repeated  # noqa: E402

NEEDLE = "#sdy.sharding<@mesh"


class Session:
    """A client that records each version's diagnostics as they are published."""

    def __init__(self) -> None:
        self.client = LanguageClient("bench", "1")
        self.published: dict[tuple[str, int | None], asyncio.Future[float]] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.arrived(params.uri, params.version).set_result(time.perf_counter())

    def arrived(self, uri: str, version: int | None) -> asyncio.Future[float]:
        return self.published.setdefault((uri, version), asyncio.get_running_loop().create_future())

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "shardconv", "server")
        await self.client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
        self.client.initialized(types.InitializedParams())

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="mlir", version=1, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    async def hover(self, uri: str, at: types.Position) -> float:
        start = time.perf_counter()
        got = await self.client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
        assert got is not None, "no hover"
        return time.perf_counter() - start


def positions(text: str, count: int) -> list[types.Position]:
    """``count`` positions inside shardings spread over the document."""
    found = [m.start() for m in re.finditer(re.escape(NEEDLE), text)]
    out = []
    for k in range(count):
        at = found[len(found) * k // count]
        line = text.count("\n", 0, at)
        col = at - (text.rfind("\n", 0, at) + 1) + 3
        out.append(types.Position(line=line, character=col))  # the dump is ASCII: UTF-16 = bytes
    return out


async def measure(path: Path, text: str, hovers: int) -> dict[str, float]:
    s = Session()
    await s.start()
    try:
        start = time.perf_counter()
        uri = s.open(path, text)
        first = await asyncio.wait_for(s.arrived(uri, 1), 600) - start
        spots = positions(text, hovers)
        idle = [await s.hover(uri, p) for p in spots]
        edited = text.replace('{"model"}', '{"modle"}', 1)
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        await asyncio.sleep(0.35)  # past the debounce: the re-check runs
        recheck = s.arrived(uri, 2)
        busy: list[float] = []
        during = 0
        for p in spots:
            busy.append(await s.hover(uri, p))
            during += not recheck.done()
        await asyncio.wait_for(recheck, 600)
    finally:
        await s.stop()
    return {
        "first": first,
        "idle": statistics.median(idle),
        "busy": statistics.median(busy),
        "busy_max": max(busy),
        "during": float(during),
    }


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    hovers = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        make = [sys.executable, str(ROOT / "tests" / "support" / "make_dumps.py"), tmp, "64"]
        subprocess.run(make, check=True, env=env, capture_output=True, timeout=600)
        module = (Path(tmp) / "lowered.mlir").read_text()
        big, small = Path(tmp) / "large.mlir", Path(tmp) / "small.mlir"
        text = repeated(module, size << 20)
        big.write_text(text)
        small.write_text(module)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "shardconv", "check", "-j", "1", str(big)], capture_output=True)
        cli = time.perf_counter() - t0
        got = asyncio.run(measure(big, text, hovers))
        base = asyncio.run(measure(small, module, hovers))
    mb = len(text.encode()) / (1 << 20)
    lines = text.count("\n") + 1
    print(f"dump: {mb:.1f} MB ({lines} lines), jax-lowered modules of {len(module) >> 10} KB repeated")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'':44}{'large':>10}{'baseline':>12}")
    print(f"{'time to first diagnostics (s)':44}{got['first']:>10.2f}{cli:>12.2f}  (baseline: shardconv check, CLI)")
    print(f"{'hover, checked (median ms)':44}{got['idle'] * 1e3:>10.1f}{base['idle'] * 1e3:>12.1f}  (baseline: 1 dump)")
    busy = f"{got['busy'] * 1e3:.1f} / {got['busy_max'] * 1e3:.0f}"
    base_busy = f"{base['busy'] * 1e3:.1f}"
    print(f"{'hover during a re-check (median / max ms)':44}{busy:>10}{base_busy:>12}")
    print(f"hovers answered before the re-check's diagnostics: {int(got['during'])}/{hovers}")


if __name__ == "__main__":
    main()
