"""Shardings the compile's propagation still chooses are never written as decided: real jax programs (8 CPU
devices, in a child process) with unconstrained results, a partially constrained tuple, a parameter left to
``shard_alike``, and a GSPMD lowering. Before propagation (the lowering, the HLO before optimizations) every
``-f`` refuses them (exit 2, naming the leaves and the stage to read; JSON marks them undecided); the stage
it names holds, in every format, exactly what the executable hands back through PJRT. A pass log of many
modules (jaxlib's Shardy propagation printed after every pass, XLA's modules one after another) is read at
its last module, a piece at a time, in bounded memory."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jax._src.lib import xla_client as xc
from support.cli_util import run
from support.jax_child import run_jax
from support.xla_outputs import compile_module, xla_outputs

from shardconv.cli.outputs import FORMATS
from shardconv.outputs.pjrt import unpack
from shardconv.outputs.writers import split_length_prefixed

pytestmark = pytest.mark.oracle

HERE = Path(__file__).resolve().parent
BEFORE = ("lowered", "before_optimizations")  # the stages before propagation
CASES = [  # (program, parameters): every side with a leaf left to propagation
    ("unconstrained", False),
    ("partial", False),
    ("params", False),
    ("params", True),
    ("gspmd", False),
    ("replicated", False),
    ("replicated", True),
]


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}
    dump = tmp_path_factory.mktemp("undecided")
    child = run_jax([str(HERE.parent / "support" / "undecided_child.py"), str(dump)], env, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout)  # type: ignore[no-any-return]


def _proto(hlo: str) -> bytes:
    return bytes(xc.HloSharding.from_string(hlo).to_proto().SerializeToString())


def _header_blobs(text: str) -> list[bytes]:
    """The messages of a ``-f pjrt-header`` file, read from its C string literals (one per ``// N:`` item)."""
    array = text[text.index("[] = {") : text.index("};")]
    blobs: list[bytes] = []
    for line in array.splitlines()[1:]:
        line = line.strip()
        if line.startswith("//"):
            blobs.append(b"")
        elif line.startswith('"'):
            blobs[-1] += bytes(int(h, 16) for h in re.findall(r"\\x([0-9a-f]{2})", line))
    return blobs


def _decoded(fmt: str, data: bytes, params: bool, n: int) -> list[bytes]:
    """The serialized OpSharding of each leaf a ``-f fmt`` file holds, read back with XLA's own parsers."""
    text = data.decode("utf-8", "replace")
    if fmt == "hlo":
        return [_proto(ln) for ln in text.splitlines()]
    if fmt == "tuple":
        whole = xc.HloSharding.from_string(text.strip())
        parts = whole.tuple_elements() if n > 1 else [whole]
        return [bytes(p.to_proto().SerializeToString()) for p in parts]
    if fmt == "proto-hex":
        return [bytes.fromhex(ln) for ln in text.splitlines()]
    if fmt == "textproto":
        return [_proto(ln.split(": ", 1)[1]) for ln in text.splitlines() if re.match(r"# \w+ \d+: ", ln)]
    if fmt == "json":
        doc = json.loads(data)
        items = doc["parameters" if params else "outputs"]
        assert doc["undecided"] == [] and doc["error"] is None and all(o["decided"] for o in items)
        return [bytes.fromhex(o["proto_hex"]) for o in items]
    if fmt == "proto":
        return split_length_prefixed(data) or []
    if fmt == "pjrt":
        return unpack(data)
    if fmt == "pjrt-header":
        return _header_blobs(text)
    assert fmt == "mlir"
    if not params:
        return [_proto(s) for s in xla_outputs(text, n)]
    _, fields = compile_module(text)
    return [_proto(s) for s in (repr(xc.HloSharding.from_proto(_op(b))) for b in fields[14])]


def _op(blob: bytes) -> xc.OpSharding:
    op = xc.OpSharding()
    op.ParseFromString(blob)
    return op


def _args(path: str, fmt: str, params: bool, out: Path) -> list[str]:
    return ["outputs", path, "-f", fmt, "-o", str(out), *(["--parameters"] if params else [])]


@pytest.mark.parametrize(("name", "params"), CASES)
def test_before_propagation_every_format_refuses_and_the_named_stage_holds_the_executables_shardings(
    programs: dict[str, dict[str, object]], name: str, params: bool, tmp_path: Path
) -> None:
    program = programs[name]
    stages = program["stages"]
    assert isinstance(stages, dict)
    exe = [bytes.fromhex(h) for h in program["parameters" if params else "outputs"]]  # type: ignore[attr-defined]
    undecided = program["undecided_parameters" if params else "undecided_outputs"]
    assert isinstance(undecided, list) and undecided
    what = "parameter" if params else "output"
    which = f"{what}{'s' if len(undecided) > 1 else ''} {', '.join(map(str, undecided))} not decided yet"
    shardy = "output_module" in stages
    named = ("04.output_module.mlir", "after_shardy-xla") if shardy else ("after_sharding-propagation",)
    assert all(any(n in str(p) for p in stages.values()) for n in named)  # the stage named is the one dumped
    for stage in BEFORE:
        for fmt in FORMATS:
            if fmt == "mlir" and stage != "lowered":
                continue  # -f mlir rewrites an MLIR module
            out = tmp_path / f"{stage}.{fmt}"
            got = run(*_args(stages[stage], fmt, params, out))
            assert got.code == 2 and which in got.err and all(n in got.err for n in named), (stage, fmt, got.err)
            if fmt != "json":
                assert not out.exists() and got.out == "", (stage, fmt)
                continue
            doc = json.loads(out.read_text())
            items = doc["parameters" if params else "outputs"]
            assert doc["undecided"] == undecided and doc["tuple"] is None and which in doc["error"]["message"]
            for o, blob in zip(items, exe, strict=True):
                if o["index"] in undecided:
                    assert (o["decided"], o["hlo"], o["proto_hex"]) == (False, None, None)
                else:  # what the module decided is still the executable's
                    assert o["decided"] and bytes.fromhex(o["proto_hex"]) == blob, (stage, o)
        report = tmp_path / "report.txt"
        report.write_text("".join(b.hex() + "\n" for b in exe))
        got = run("outputs", stages[stage], "--expect", str(report), *(["--parameters"] if params else []))
        assert got.code == 2 and which in got.err, (stage, got.err)
    decided = ("propagated", "output_module") if shardy else ("propagated",)
    for stage in (*decided, "compiled") if params else decided:  # (a partitioned module prints no outputs)
        for fmt in FORMATS:
            if fmt == "mlir" and not stages[stage].endswith(".mlir"):
                continue
            out = tmp_path / f"{stage}.{fmt}"
            got = run(*_args(stages[stage], fmt, params, out))
            assert got.code == 0 and got.err == "", (stage, fmt, got.err)
            assert _decoded(fmt, out.read_bytes(), params, len(exe)) == exe, (stage, fmt)


def test_a_result_that_is_a_sharding_constraint_is_decided_before_propagation(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """An ENTRY whose ROOT is the program's ``Sharding`` custom call returns what the program decided: every
    format gives what the executable returns, from the HLO before optimizations on."""
    program = programs["constrained"]
    stages = program["stages"]
    assert isinstance(stages, dict)
    exe = [bytes.fromhex(h) for h in program["outputs"]]  # type: ignore[attr-defined]
    for stage in ("before_optimizations", "propagated"):
        for fmt in FORMATS:
            if fmt == "mlir":
                continue
            out = tmp_path / f"{stage}.{fmt}"
            got = run(*_args(stages[stage], fmt, False, out))
            assert got.code == 0 and got.err == "", (stage, fmt, got.err)
            assert _decoded(fmt, out.read_bytes(), False, len(exe)) == exe, (stage, fmt)


def test_mlir_holds_both_sides_so_an_undecided_side_refuses_it(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """-f mlir writes the parameters' and the outputs' shardings into the module: asked for the (decided)
    parameters of a lowering whose outputs are undecided, it refuses, naming the outputs."""
    stages = programs["partial"]["stages"]
    assert isinstance(stages, dict)
    out = tmp_path / "opt.mlir"
    got = run(*_args(stages["lowered"], "mlir", True, out))
    assert got.code == 2 and "outputs 1, 3 not decided yet" in got.err and not out.exists()
    assert run(*_args(stages["lowered"], "pjrt", True, tmp_path / "p.pjrt")).code == 0  # the parameters are


def _hlo_log(stages: dict[str, str], tmp_path: Path) -> str:
    """XLA's modules one after another: the HLO before optimizations, then after Shardy's export."""
    log = tmp_path / "xla.log"
    log.write_text("".join(Path(stages[s]).read_text() for s in ("before_optimizations", "propagated")))
    return str(log)


@pytest.mark.parametrize("params", [False, True])
@pytest.mark.parametrize("log", ["module_scope_log", "hlo_log"])
def test_a_pass_log_is_read_at_its_last_module_and_says_so(
    programs: dict[str, dict[str, object]], log: str, params: bool, tmp_path: Path
) -> None:
    """A pass log of many modules (jaxlib's Shardy propagation printed after every pass; XLA's HLO before
    and after Shardy) is read at its last module, the one after every pass: in every format it gives what
    the executable hands back, and it says which module it read and how many it did not."""
    program = programs["partial"]
    stages = program["stages"]
    assert isinstance(stages, dict)
    path = _hlo_log(stages, tmp_path) if log == "hlo_log" else stages[log]
    count = Path(path).read_text().count("// -----// IR Dump") if log != "hlo_log" else 2
    assert count > 2 or log == "hlo_log"
    exe = [bytes.fromhex(h) for h in program["parameters" if params else "outputs"]]  # type: ignore[attr-defined]
    for fmt in FORMATS:
        if fmt == "mlir" and log == "hlo_log":
            continue
        out = tmp_path / f"{log}.{fmt}"
        got = run(*_args(path, fmt, params, out))
        assert got.code == 0, (fmt, got.err)
        assert got.err.startswith(f"note: read module {count} of {count}, the last in the file (line ")
        assert got.err.endswith(f"the {count - 1} before it not read\n"), got.err
        assert _decoded(fmt, out.read_bytes(), params, len(exe)) == exe, fmt
        if fmt == "mlir":  # the module alone, from its pass log line
            assert out.read_text().startswith("// -----// IR Dump After ")
        if fmt == "json":
            module = json.loads(out.read_text())["module"]
            assert (module["number"], module["count"], module["skipped"]) == (count, count, count - 1)
            lines = Path(path).read_text().splitlines()
            first = lines[module["line"] - 1]
            assert first == module["header"] if log != "hlo_log" else first.startswith("HloModule ")


def test_a_function_scope_pass_log_ending_in_a_bare_function_is_refused_with_the_fix(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """A pass log printed without module scope ends in a function printed alone, without the module's
    meshes: outputs reads that last dump, and refuses it (exit 2) saying how to print the log instead."""
    stages = programs["partial"]["stages"]
    assert isinstance(stages, dict)
    got = run("outputs", stages["func_scope_log"])
    assert got.code == 2 and "note: read module " in got.err
    assert "printed without its module" in got.err and "print_module_scope=True" in got.err


def test_a_pass_log_read_in_pieces_gives_what_the_executable_returns(
    programs: dict[str, dict[str, object]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A long pass log is scanned a piece at a time (here pieces of 8 KiB, about a dump each) and only its
    last module is read: the module found across pieces is the last, at the file's line, and it gives the
    executable's own bytes."""
    import shardconv.scan.pieces as pieces

    monkeypatch.setattr(pieces, "PIECE_BYTES", 8 << 10)
    program = programs["partial"]
    stages = program["stages"]
    assert isinstance(stages, dict)
    path = stages["module_scope_log"]
    text = Path(path).read_text()
    count = text.count("// -----// IR Dump")
    line = text[: text.rindex("// -----// IR Dump")].count("\n") + 1
    out = tmp_path / "o.pjrt"
    got = run(*_args(path, "pjrt", False, out))
    assert got.code == 0
    assert got.err.startswith(f"note: read module {count} of {count}, the last in the file (line {line}, ")
    assert unpack(out.read_bytes()) == [bytes.fromhex(h) for h in program["outputs"]]  # type: ignore[attr-defined]


PEAK = """import sys
from shardconv.cli.main import main
try:
    main(sys.argv[2:])
finally:  # this process's own peak (ru_maxrss keeps the peak of the process it was forked from)
    open(sys.argv[1], "w").write(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
"""


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_long_pass_log_is_read_in_bounded_memory(
    programs: dict[str, dict[str, object]], via: str, tmp_path: Path
) -> None:
    """A 160 MB pass log (the propagation log's dumps again and again, then its propagated last one) is
    read in under 100 MB of memory, never whole, and gives the executable's bytes: named, or piped to
    ``outputs -``."""
    program = programs["partial"]
    stages = program["stages"]
    assert isinstance(stages, dict)
    body = Path(stages["module_scope_log"]).read_bytes()
    cut = body.rindex(b"// -----// IR Dump")
    log = tmp_path / "long.log"
    with log.open("wb") as f:
        for _ in range((160 << 20) // cut):
            f.write(body[:cut])
        f.write(body[cut:])
    out, peak = tmp_path / "o.pjrt", tmp_path / "peak"
    args = [str(peak), "outputs", str(log) if via == "file" else "-", "-f", "pjrt", "-o", str(out)]
    with log.open("rb") as stdin:
        child = subprocess.run([sys.executable, "-c", PEAK, *args], stdin=stdin if via == "stdin" else None,
                               capture_output=True, text=True, timeout=600, check=False)
    assert child.returncode == 0, child.stderr
    assert unpack(out.read_bytes()) == [bytes.fromhex(h) for h in program["outputs"]]  # type: ignore[attr-defined]
    peak_mb = int(peak.read_text()) / 1024
    assert peak_mb < 100, peak_mb


@pytest.mark.parametrize("params", [False, True])
def test_on_one_device_every_format_says_pjrt_returns_none(
    programs: dict[str, dict[str, object]], params: bool, tmp_path: Path
) -> None:
    """On one device no partitioner runs and the executable returns none (not an empty list, not
    {replicated}) for both sides, whatever the module says: every stage, in every format, writes no
    sharding (-f pjrt: N = 0; json: no leaves, "returns_none": true; -f mlir: no spmd attribute) and a
    note says why."""
    program = programs["one_device"]
    assert program["parameters" if params else "outputs"] is None  # the executable's own answer
    stages = program["stages"]
    assert isinstance(stages, dict)
    what = "parameter" if params else "output"
    for stage, path in stages.items():
        for fmt in FORMATS:
            if fmt == "mlir" and not path.endswith(".mlir"):
                continue
            out = tmp_path / f"{stage}.{fmt}"
            got = run(*_args(path, fmt, params, out))
            said = "returns none" in got.err and f"its {what} shardings" in got.err
            assert got.code == 0 and said, (stage, fmt, got.err)
            data = out.read_bytes() if out.exists() else b""
            if fmt == "json":
                doc = json.loads(data)
                assert doc["returns_none"] and doc["parameters" if params else "outputs"] == [] and doc["tuple"] is None
            elif fmt == "mlir":
                assert b"mhlo.spmd_output_sharding" not in data and b"mhlo.spmd_parameters_shardings" not in data
                _, fields = compile_module(data.decode())
                assert 12 not in fields and 14 not in fields, (stage, fields)  # XLA's converter: none either
            elif fmt in ("hlo", "tuple", "proto-hex", "textproto"):
                assert not out.exists() and got.out == "", (stage, fmt)
            else:
                assert _decoded(fmt, data, params, 0) == [], (stage, fmt, data)
    import shardconv
    from shardconv.outputs import parameter_shardings

    read = parameter_shardings if params else shardconv.output_shardings
    assert read(Path(stages["lowered"]).read_text()) == []  # the library says none too


@pytest.mark.parametrize(("name", "params"), [c for c in CASES if c[0] != "gspmd"])
def test_the_library_refuses_what_propagation_still_chooses(
    programs: dict[str, dict[str, object]], name: str, params: bool
) -> None:
    """``shardconv.output_shardings`` / ``shardconv.outputs.parameter_shardings`` of a lowering raise
    (naming the leaves), and of Shardy's output module give what the executable returns."""
    import shardconv
    from shardconv.core.errors import ShardingValidationError
    from shardconv.outputs import parameter_shardings

    program = programs[name]
    stages = program["stages"]
    assert isinstance(stages, dict)
    read = parameter_shardings if params else shardconv.output_shardings
    with pytest.raises(ShardingValidationError, match="not decided yet"):
        read(Path(stages["lowered"]).read_text())
    exe = [bytes.fromhex(h) for h in program["parameters" if params else "outputs"]]  # type: ignore[attr-defined]
    assert [_proto(str(h)) for h in read(Path(stages["output_module"]).read_text())] == exe


def test_open_dims_on_results_midway_through_propagation_are_not_decided(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """Midway through jaxlib's Shardy propagation pipeline (before it closes the shardings) results carry
    open dims (``{"model", ?}``), which propagation may still extend: every format refuses them, and JSON
    marks exactly those leaves undecided."""
    stages = programs["partial"]["stages"]
    assert isinstance(stages, dict)
    dumps = Path(stages["module_scope_log"]).read_text().split("// -----// IR Dump")
    signature = [next(ln for ln in d.splitlines() if "func.func public @main" in ln) for d in dumps[1:]]
    midway = [d for d, sig in zip(dumps[1:], signature, strict=True) if "?" in sig.split("->")[1]]
    assert midway, "no dump with open dims on a result"
    module = tmp_path / "midway.mlir"
    module.write_text("// -----// IR Dump" + midway[-1])
    for fmt in FORMATS:
        out = tmp_path / f"midway.{fmt}"
        got = run(*_args(str(module), fmt, False, out))
        assert got.code == 2 and "not decided yet" in got.err and "open dims (?)" in got.err, (fmt, got.err)
        if fmt == "json":
            items = json.loads(out.read_text())["outputs"]
            assert any(not o["decided"] for o in items)
            assert all(o["decided"] == ("?" not in o["sdy"]) for o in items), items


def test_an_expected_report_that_is_a_fifo_is_refused_without_waiting(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    """``--expect`` names a FIFO (nobody writing to it): refused at once (exit 2, saying what it is), as
    every named file is, instead of waiting forever for a writer; a regular file of the executable's
    bytes still matches."""
    program = programs["partial"]
    stages = program["stages"]
    assert isinstance(stages, dict)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    cmd = [sys.executable, "-m", "shardconv", "outputs", stages["output_module"], "--expect", str(fifo)]
    got = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert got.returncode == 2 and "not a regular file (a FIFO)" in got.stderr, got.stderr
    assert "Traceback" not in got.stderr
    report = tmp_path / "report.hex"
    report.write_text("".join(h + "\n" for h in program["outputs"]))  # type: ignore[attr-defined]
    assert run("outputs", stages["output_module"], "--expect", str(report)).code == 0
