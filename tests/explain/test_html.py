"""The HTML explanation is one self-contained file: opened in headless Chromium with the network off, it
renders its graph (the DOM Chromium built holds every node and edge) and screenshots as a real image."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from support.cli_util import run
from support.explain_util import stage

from shardconv.explain.build import explain_path

CHROMIUM = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions", "--proxy-server=127.0.0.1:9",
         "--window-size=1400,700"]


def png_size_and_colours(data: bytes) -> tuple[int, int, int]:
    """Width, height and how many distinct RGB(A) pixels the first rows hold (a blank page has one)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    depth, ctype = data[24], data[25]
    idat = b"".join(data[i + 8 : i + 8 + struct.unpack(">I", data[i : i + 4])[0]]
                    for i in (m.start() - 4 for m in re.finditer(b"IDAT", data)))
    raw = zlib.decompress(idat)
    bpp = {2: 3, 6: 4}[ctype] * depth // 8
    stride = w * bpp + 1
    colours = {raw[r * stride + 1 + x * bpp : r * stride + 1 + (x + 1) * bpp]
               for r in range(0, min(h, 400), 7) for x in range(0, w, 5)}  # unfiltered bytes: a lower bound
    return w, h, len(colours)


def test_html_renders_in_headless_chromium(programs: Path, tmp_path: Path) -> None:
    if CHROMIUM is None:
        pytest.fail("no Chromium: run `make browser` (as root), which installs Debian's chromium package")
    path = str(stage(programs, "block"))
    r = run("explain", path, "--result", "0", "--format", "html")
    assert r.code == 0
    page = tmp_path / "why.html"
    page.write_text(r.out, encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", r.out)  # nothing to fetch: self-contained
    assert CHROMIUM is not None
    dom = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    (e,) = explain_path(path, result=0)
    for a in e.axes:
        assert a.origin.name is not None and a.origin.name in dom
    assert dom.count('class="node') == len({s.source for a in e.axes for s in a.path} | {e.value})
    shot = tmp_path / "why.png"
    subprocess.run([CHROMIUM, *FLAGS, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120,
                   check=True)
    w, h, colours = png_size_and_colours(shot.read_bytes())
    assert (w, h) == (1400, 700) and colours > 3
