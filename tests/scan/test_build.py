"""The native core's build: its version is the package's, it loads only when a dump is scanned, and it
ships the contract's shape."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from shardconv.core.version import VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_crate_version_is_the_package_version() -> None:
    cargo = (ROOT / "native" / "Cargo.toml").read_text(encoding="utf-8")
    m = re.search(r'^version = "([^"]+)"', cargo, re.MULTILINE)
    assert m is not None and m.group(1) == VERSION
    from shardconv import _native

    assert _native.VERSION == VERSION


def test_import_does_not_load_the_core() -> None:
    code = "import sys, shardconv, shardconv.scan.native\nprint('shardconv._native' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "False\n"


def test_constants() -> None:
    from shardconv import _native
    from shardconv.scan.sites import SiteKind

    assert tuple(k.value for k in SiteKind) == _native.SITE_KINDS
    assert _native.NONE == 0xFFFF_FFFF
    assert _native.SNIFF_BYTES == 1 << 16


def test_scan_has_the_contract_shape() -> None:
    from shardconv import _native

    scan = _native.scan_bytes(b"HloModule m, num_partitions=2\n  %x = f32[8]{0} parameter(0), sharding={replicated}\n")
    assert scan.kind == "hlo" and scan.reason == "" and scan.size > 0
    cols = scan.columns
    for name in ("value", "name", "shapes", "scope", "op", "module", "line", "col", "end_line", "end_col"):
        assert len(cols[name]) == 4 * 3
    assert len(cols["start"]) == 8 * 3
    assert len(scan.values) == 3 and isinstance(scan.groups, list) and len(scan.line_texts) == 3
    assert scan.modules == 1
    assert scan.ops[memoryview(cols["op"]).cast("I")[2]] == "parameter"
    assert memoryview(cols["param"]).cast("I")[2] == 0


def test_the_core_crate_holds_no_python() -> None:
    """The scanning core (native/core) builds without PyO3; only the binding crate (native/binding) speaks
    Python, so the core reads, and is tested, as plain Rust."""
    core = ROOT / "native" / "core"
    manifest = (core / "Cargo.toml").read_text(encoding="utf-8")
    assert "pyo3" not in manifest
    speaking = sorted(str(p.relative_to(core)) for p in (core / "src").rglob("*.rs") if "pyo3" in p.read_text("utf-8"))
    assert speaking == []
    binding = (ROOT / "native" / "binding" / "Cargo.toml").read_text(encoding="utf-8")
    assert re.search(r"^pyo3 = ", binding, re.MULTILINE) and re.search(r"^shardconv-scan", binding, re.MULTILINE)


def test_the_compiler_refuses_unsafe_code_in_both_crates() -> None:
    """No ``unsafe`` is written in the native crates, and the compiler holds it so: the core forbids it,
    the binding denies it (PyO3's macros allow the unsafe code they generate, which ``forbid`` would not)."""
    core = (ROOT / "native" / "core" / "src" / "lib.rs").read_text(encoding="utf-8")
    binding = (ROOT / "native" / "binding" / "src" / "lib.rs").read_text(encoding="utf-8")
    assert re.search(r"^#!\[forbid\(unsafe_code\)\]$", core, re.MULTILINE)
    assert re.search(r"^#!\[deny\(unsafe_code\)\]$", binding, re.MULTILINE)
    sources = (ROOT / "native").glob("*/src/**/*.rs")
    assert [p.name for p in sources if re.search(r"\bunsafe\s*(?:\{|fn\b|impl\b)", p.read_text("utf-8"))] == []
