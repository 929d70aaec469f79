"""What ``explain`` answers for, whatever the input: a dump piped on stdin as read from its file, a FIFO
refused (never a hang), a multi-result op's name as each of its results, a result by its position in the
function's signature; and ``trace``, which reads stdin the same way. On real jax compiles
(support/make_explain_programs.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli_util import run
from support.explain_util import stage

from shardconv.explain.build import ExplainError, explain_path

TIMEOUT = 60


def _json(*args: str, input: str | None = None) -> dict[str, object]:
    r = run("explain", *args, "--format", "json", input=input)
    assert r.code in (0, 1), r.err
    doc: dict[str, object] = json.loads(r.out)
    return doc


def test_stdin_is_explained_as_its_file_is(programs: Path, tmp_path: Path) -> None:
    """Every program's after-propagation stage, piped to ``-``: the same JSON as the file gives, the path
    aside (``-``). ``returned``'s results through ``mhlo.topk`` and a generic-form ``reduce_window`` (their
    results' names and regions are read off the op's lines) reach their origin from stdin too. (Only the
    stage file's neighbours are not beside stdin: ``alike``'s sharding group, whose ops the stage before
    propagation holds, is compared with a copy of its file alone.)"""
    files = sorted((programs / "xla" / "shardy").glob("*/02.after_propagation.mlir"))
    assert len(files) >= 18
    alone = tmp_path / "02.after_propagation.mlir"
    for path in files:
        text = path.read_text(encoding="utf-8")
        alone.write_text(text, encoding="utf-8")
        read = alone if "jit_alike" in str(path) else path
        for pick in ((), ("--value", "%2"), ("--result", "1")):
            if pick and "jit_returned" not in str(path):
                continue
            from_file, from_stdin = _json(str(read), *pick), _json("-", *pick, input=text)
            for e in from_file["explanations"]:  # type: ignore[attr-defined]
                assert e["path"] == str(read)
                e["path"] = "-"
            assert from_stdin == from_file, (path.parent.name, pick)
    returned = _json("-", input=stage(programs, "returned").read_text(encoding="utf-8"))
    ops = {s["op"] for e in returned["explanations"] for a in e["axes"] for s in a["path"]}  # type: ignore[attr-defined]
    assert {"mhlo.topk", "stablehlo.reduce_window"} <= ops
    assert all(a["gap"] is None for e in returned["explanations"] for a in e["axes"])  # type: ignore[attr-defined]


def _in_child(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter, killed after ``TIMEOUT`` seconds (a hang fails the test)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)


def test_a_fifo_is_refused_by_explain_and_the_library_and_skipped_in_a_folder(programs: Path, tmp_path: Path) -> None:
    """A FIFO named as the path blocks the read until a writer comes: ``explain`` exits 2 naming it, and
    ``scan_path`` and ``explain_path`` raise, as the other commands refuse it. In a dump folder, a FIFO
    named like a stage file is passed over and the real stages explained."""
    fifo = tmp_path / "02.after_propagation.mlir"
    os.mkfifo(fifo)
    said = "not a regular file (a FIFO); pipe it to '-' to read it"
    r = subprocess.run([sys.executable, "-m", "shardconv", "explain", str(fifo)], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert r.returncode == 2 and f"{fifo}: {said}" in r.stderr, r.stderr
    child = _in_child(
        "import shardconv as sc\n"
        "from shardconv.explain.build import ExplainError\n"
        f"try:\n    list(sc.scan_path({str(fifo)!r}))\nexcept OSError as e:\n    print('scan_path:', e.strerror)\n"
        f"try:\n    sc.explain_path({str(fifo)!r})\nexcept ExplainError as e:\n    print('explain_path:', e)\n"
    )
    assert child.stdout.splitlines() == [f"scan_path: {said}", f"explain_path: {fifo}: {said}"], child.stderr
    folder = tmp_path / "dump"
    mlp = stage(programs, "mlp")
    (folder / "shardy" / "module_0000.jit_mlp").mkdir(parents=True)
    (folder / "shardy" / "module_0000.jit_mlp" / mlp.name).write_bytes(mlp.read_bytes())
    (folder / "shardy" / "module_0001.jit_pipe").mkdir()
    os.mkfifo(folder / "shardy" / "module_0001.jit_pipe" / "02.after_propagation.mlir")
    r = subprocess.run([sys.executable, "-m", "shardconv", "explain", str(folder), "--format", "json"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert [Path(e["path"]).parent.name for e in json.loads(r.stdout)["explanations"]] == ["module_0000.jit_mlp"]


def test_a_multi_result_op_s_name_is_each_of_its_results(programs: Path) -> None:
    """``argmax``'s ``%10:2 = stablehlo.reduce`` in ``returned``: ``--value %10`` (and ``--line`` of it)
    explains ``%10#0`` and ``%10#1``, each as asked for by its own name, as ``trace --value %10`` follows
    both; ``%10#1`` alone is that result only."""
    path = stage(programs, "returned")
    text = path.read_text(encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if re.match(r"\s*%10:2 = ", t))
    each = [*explain_path(str(path), "%10#0"), *explain_path(str(path), "%10#1")]
    assert [e.value for e in each] == ["%10#0", "%10#1"] and all(e.axes for e in each)
    assert list(explain_path(str(path), "%10")) == each == list(explain_path(str(path), line=line))
    assert list(explain_path(str(path), "10")) == each
    assert [e["value"] for e in _json(str(path), "--value", "%10")["explanations"]] == ["%10#0", "%10#1"]  # type: ignore[attr-defined]
    with pytest.raises(ExplainError, match=r"no sharded value matches --value %10#2$"):
        explain_path(str(path), "%10#2")


def test_results_are_taken_by_their_position_past_a_token(programs: Path) -> None:
    """``effect``: an ordered callback makes ``main`` take and return a token first, and its sort's results
    ``%6#0..2`` are returned as results 2 to 4 after a scalar. ``--result K`` explains the K-th entry of the
    signature (the value the return line returns at K), and the default run each sharded one, in order."""
    path = stage(programs, "effect")
    text = path.read_text(encoding="utf-8")
    returned = re.search(r"^\s*return (.*?) :", text, re.MULTILINE)
    assert returned is not None
    values = [v.strip() for v in returned.group(1).split(",")]
    assert len(values) == 5 and values[2:] == ["%6#0", "%6#1", "%6#2"]  # (as jax 0.10.2 lowers it)
    for k in range(2, 5):
        (e,) = explain_path(str(path), result=k)
        (v,) = explain_path(str(path), values[k])
        assert (e.value, e.sharding) == (f"result[{k}]", v.sharding) and e.axes
        assert [(a.axis, a.origin.kind, a.origin.index, a.gap) for a in e.axes] == [("data", "argument", 1, None)]
    with pytest.raises(ExplainError, match=r"result\[1\] of @main carries no sharding"):
        explain_path(str(path), result=1)
    assert [e.value for e in explain_path(str(path))] == ["%0", "result[2]", "result[3]", "result[4]"]


def _files_aside(doc: Any) -> Any:
    """A ``trace`` JSON document with every file name (a dump's, an observation's) left out."""
    if isinstance(doc, dict):
        return {k: _files_aside(v) for k, v in doc.items() if k != "file"}
    if isinstance(doc, list):
        return [_files_aside(v) for v in doc]
    return doc


def test_trace_reads_stdin_as_its_file(programs: Path, tmp_path: Path) -> None:
    """``trace`` re-reads an op's line for the names of its results as ``explain`` does: ``returned``'s
    Shardy stage after propagation piped to ``-`` after the stage before it gives the same JSON as a copy
    of the file (whose name, as stdin, says no pass), the files' names aside, its ``mhlo.topk`` results
    named as the dump prints them."""
    folder = stage(programs, "returned").parent
    before, text = str(folder / "01.before_propagation.mlir"), (folder / "02.after_propagation.mlir").read_text()
    m = re.search(r"(%\w+), (%\w+) = mhlo\.topk", text)
    assert m is not None
    after = tmp_path / "module.mlir"
    after.write_text(text, encoding="utf-8")
    from_file = run("trace", before, str(after), "--format", "json")
    from_stdin = run("trace", before, "-", "--format", "json", input=text)
    assert (from_stdin.code, from_stdin.err) == (from_file.code, from_file.err) and from_file.code in (0, 1)
    doc = json.loads(from_stdin.out)
    assert set(m.groups()) <= {c["value"] for c in doc["changes"]}
    assert _files_aside(doc) == _files_aside(json.loads(from_file.out))
