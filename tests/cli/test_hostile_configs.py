"""Whatever a checkout's config file or a command line holds, ``check`` and ``config`` answer with a
result or an input error (exit 0/1/2), never an internal error (exit 70) or a traceback."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli_util import SEED_MESH, Result, run

from shardconv.check.config import KEYS

SEED_FILE = Path(__file__).resolve().parents[2] / "examples" / "seed-distorted-mesh.mlir"

SCALARS = st.sampled_from([
    '"batch=2,model=4"', '"@ir.mlir"', '"@"', '"@/"', '"@."', '"@../ir.mlir"', '"@pipe"', '""', '"a=0"', '"2x4,"',
    '"x=99999999999"', '"<[\\"a\\"=2]>"', '"#sdy.mesh<[]>"', '"\\u0000"', '"synthetic-mesh"', "0", "-1", "1.5",
    "99999999999999999999", "true", "1979-05-27", "{}", "{paths = []}",
])


def nested(depth: int, leaf: str) -> str:
    return "[" * depth + leaf + "]" * depth


VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    st.tuples(st.integers(1, 3000), SCALARS).map(lambda t: nested(*t)),  # tomllib recurses per level
)
KEY = st.sampled_from([*KEYS, "paths", "Mesh", "mesh.x", '"mesh"'])
TABLE = st.lists(st.tuples(KEY, VALUES), min_size=1, max_size=3).map(
    lambda kv: "".join(f"{k} = {v}\n" for k, v in kv)
)
CONFIG = st.one_of(
    st.tuples(TABLE, st.lists(TABLE, max_size=2)).map(
        lambda t: "[tool.shardconv]\n" + t[0] + "".join("[[tool.shardconv.overrides]]\n" + o for o in t[1])
    ),
    st.binary(max_size=200).map(lambda b: "[tool.shardconv]\n" + b.decode("latin-1")),  # any bytes, as latin-1
)
ARGS = st.lists(st.sampled_from([
    "--mesh", "@ir.mlir", "@pipe", "@", SEED_MESH, "a=0", "--allowed-meshes", "0x2", ",", "2x4", "--ignore", "bogus",
    "--warn-only", "--config", "pyproject.toml", "ir.mlir", "--no-config", "--format", "json", "--diff", "-v",
]), max_size=4)


def _ok(r: Result) -> None:
    assert r.code in (0, 1, 2), (r.code, r.err[-1000:])
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err[-1000:]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(config=CONFIG, args=ARGS, name=st.sampled_from(["pyproject.toml", "shardconv.toml"]))
def test_any_config_and_arguments_give_a_result_or_an_input_error(config: str, args: list[str], name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / name).write_bytes(config.encode("latin-1"))  # every generated text is latin-1: its bytes as given
        shutil.copy(SEED_FILE, root / "ir.mlir")
        os.mkfifo(root / "pipe")
        cwd = os.getcwd()
        os.chdir(root)
        try:
            _ok(run("check", "ir.mlir", *args))
            _ok(run("config", "ir.mlir", *[a for a in args if a not in ("--diff", "-v")]))
        finally:
            os.chdir(cwd)
