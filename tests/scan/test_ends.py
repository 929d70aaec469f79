"""What a dump's end leaves open (``Scan.open_end``): nothing, in every file every test generator writes
(XLA's per-pass folders, Shardy's stage modules, MLIR pass logs of module and function scope, the
harness's programs on CPU and TPU, torch-xla-style tensors files), as written and with CRLF line ends,
trailing comments and blank lines; the module, function or computation it cuts, in any cut of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.jax_child import write_with_jax

from shardconv.scan.ends import cut_off
from shardconv.scan.native import ScanOptions, scan_bytes

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@pytest.fixture(scope="session")
def generated(
    jax_dump_files: list[Path], stages: Path, programs: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    """Every file the generators write: the scan's dumps, the check's, trace's logs, the stage and
    explain programs, and two harness programs (one compiled for TPU)."""
    from support.harness_profile import compile_all
    from support.program_gen import generate

    harness = tmp_path_factory.mktemp("harness_programs")
    compile_all([generate(121), generate(5, platform="tpu")], harness)
    folders = [
        write_with_jax(SUPPORT / "make_dumps.py", tmp_path_factory.mktemp("check_dumps")),
        write_with_jax(SUPPORT / "make_logs.py", tmp_path_factory.mktemp("trace_logs")),
        stages,
        programs,
        harness,
    ]
    files = [*jax_dump_files, *(p for f in folders for p in f.rglob("*") if p.is_file())]
    return sorted(p for p in files if p.suffix not in (".json", ".py", ".pb") and ".pb" not in p.suffixes)


def _variants(data: bytes) -> dict[str, bytes]:
    """A dump as written, with CRLF line ends, and with a trailing comment and blank lines."""
    return {
        "as written": data,
        "crlf": data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"),
        "trailing": data.rstrip(b"\n") + b"\n\n// written by a test\n\n  \n",
    }


def test_no_generated_dump_ends_inside_anything(generated: list[Path]) -> None:
    kinds = {".mlir", ".txt", ".log"}
    assert len(generated) > 100 and kinds <= {p.suffix for p in generated}
    assert any("tpu" in str(p) for p in generated)
    opened = [
        (str(p), how, cut_off(scan_bytes(v, ScanOptions(every_site=False))))
        for p in generated
        for how, v in _variants(p.read_bytes()).items()
        if cut_off(scan_bytes(v, ScanOptions(every_site=False))) is not None
    ]
    assert opened == []


def test_a_cut_names_what_it_cuts_and_where_it_opened(generated: list[Path]) -> None:
    """Cut just before a dump's last top-level ``}``: the last scope opened is named, at its line."""
    cuts = 0
    for p in generated:
        data = p.read_bytes()
        close = data.rstrip().rfind(b"\n}")
        if close < 0 or p.suffix not in (".mlir", ".txt", ".log") or scan_bytes(data).kind == "skip":
            continue
        cuts += 1
        cut = data[: close + 1]
        found = cut_off(scan_bytes(cut))
        assert found is not None, p
        line, message = found
        assert line == cut.count(b"\n") and message.endswith(": is it cut off?"), (p, found)
    assert cuts > 100
