"""A closed stdout (``shardconv ... | head -1``) ends every command quietly with 141 (128 + SIGPIPE),
never 1 (findings) and never a traceback. Real subprocess pipes: in-process runners cannot close one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.cli_util import BIN, SEED, SEED_MESH, SEED_SDY

ROOT = Path(__file__).resolve().parents[2]
DUMPS = str(ROOT / "tests" / "data" / "dumps")

COMMANDS = {
    "examples": ("examples",),
    "examples json": ("examples", "--format", "json"),
    "check": ("check", DUMPS),  # has findings: would exit 1 if the pipe stayed open
    "check json": ("check", DUMPS, "--format", "json"),
    "convert": ("convert", SEED, "--mesh", SEED_MESH),
    "convert batch": ("convert", "-"),
    "show": ("show", SEED),
    "roundtrip": ("roundtrip", SEED_SDY, "--mesh", SEED_MESH),
    "compare": ("compare", SEED, SEED_SDY, "--mesh", SEED_MESH),
    "trace": ("trace", str(ROOT / "examples" / "seed-before-import.mlir"), str(ROOT / "examples" / "seed-pass-log.txt")),
    "diff json": (
        "diff", str(ROOT / "examples" / "seed-before-import.mlir"), str(ROOT / "examples" / "seed-distorted-mesh.mlir"),
        "--format", "json",
    ),
    "help": ("--help",),
}


@pytest.mark.parametrize("args", COMMANDS.values(), ids=COMMANDS.keys())
def test_closed_stdout_exits_141_quietly(args: tuple[str, ...], tmp_path: Path) -> None:
    items = tmp_path / "items.txt"
    items.write_text(f"{SEED}\n" * 100)
    with items.open() as stdin:
        p = subprocess.Popen([str(BIN), *args], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()  # the reader is gone before the first write
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "Error" not in err


def test_head_1_on_a_big_batch(tmp_path: Path) -> None:
    items = tmp_path / "big.txt"
    items.write_text("{devices=[2]<=[2]}\n" * 20_000)  # ~1 MB of answers: far past any pipe buffer
    with items.open() as stdin:
        conv = subprocess.Popen([str(BIN), "convert", "-"], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert conv.stdout is not None and conv.stderr is not None
        head = subprocess.run(["head", "-1"], stdin=conv.stdout, capture_output=True, text=True, timeout=120)
        conv.stdout.close()
        err = conv.stderr.read().decode()
        assert conv.wait(timeout=120) == 141, err
    assert head.stdout == '#sdy.sharding<mesh<["_axis_0"=2]>, [{"_axis_0"}]>\n' and err == ""


def test_convert_stdin_answers_every_input_line_on_the_same_output_line() -> None:
    """Blank and comment lines get an empty line, as a bad line does: output line N is input line N."""
    from support.cli_util import run

    lines = ["{devices=[2]<=[2]}", "", "{bad", "# a comment", "{replicated}", "// another", "{devices=[2]0,1}"]
    r = run("convert", "-", "--mesh", "a=2", "--rank", "1", input="\n".join(lines) + "\n")
    out = r.out.split("\n")[:-1]
    assert r.code == 2 and len(out) == len(lines)
    assert [i for i, o in enumerate(out) if o] == [0, 4, 6]
    assert out[0] == out[6] == '#sdy.sharding<@mesh, [{"a"}]>' and out[4] == "#sdy.sharding<@mesh, [{}]>"
    assert "error: line 3: " in r.err
