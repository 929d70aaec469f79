"""The abi3 wheel ``make wheel`` builds installs into a fresh venv (no source tree, no Rust needed there)
and its ``shardconv check`` flags the bundled seed dump, reading it with the compiled core."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_installs_and_checks_a_bundled_dump(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    maturin = Path(sys.executable).with_name("maturin")
    subprocess.run([str(maturin), "build", "--release", "--out", str(dist), "-q"], cwd=ROOT, check=True,
                   capture_output=True, timeout=900)
    (wheel,) = dist.glob("shardconv-*.whl")
    assert "-abi3-" in wheel.name
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # this pip installs into it: no seconds of ensurepip
    py = env_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--disable-pip-version-check",
                    str(wheel)], check=True, timeout=600)
    alone = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed wheel, not a checkout
    probe = "import shardconv._native, shardconv.backends.examples as e; print(e.examples_dir())"
    where = subprocess.run([str(py), "-c", probe], cwd=tmp_path, check=True, capture_output=True, text=True,
                           env=alone).stdout
    assert where.strip().startswith(str(env_dir)) and "site-packages" in where
    seed = Path(where.strip()) / "seed-distorted-mesh.mlir"
    r = subprocess.run([str(py), "-m", "shardconv", "check", str(seed), "--mesh", "batch=2,model=4"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, env=alone)
    assert r.returncode == 1 and "[distorted-mesh]" in r.stdout, r.stdout + r.stderr
