"""``shardconv compare``, ``examples`` and the demo's seed check, through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shardconv.cli.main import main

WRONG = ['#sdy.sharding<@mesh, [{}, {"model"}]>', "{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "--mesh", "batch=2,model=4"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


@pytest.mark.parametrize("backend", ["reference", "jax"])
def test_compare_wrong_pair_exits_1_and_names_devices(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["compare", *WRONG, "--backend", backend], capsys)
    assert rc == 1
    assert "data differ on device(s) 1, 2, 3, 4, 5, 6" in out


@pytest.mark.parametrize("backend", ["reference", "jax"])
def test_compare_equal_placements_exit_0(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["compare", '<@mesh, [{}, {"batch", "model":(1)2}]>', WRONG[1], "-m", "batch=2,model=4", "-b", backend, "--shape", "3x7"], capsys)
    assert rc == 0, out
    assert "same placement" in out


def test_compare_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["compare", *WRONG, "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 1 and doc["command"] == "compare" and doc["same"] is False
    assert doc["differing_devices"] == [1, 2, 3, 4, 5, 6]
    assert doc["b"]["values"][0]["devices"]["1"] == [[0, 2], [0, 2]]


def test_compare_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(["compare", "{devices=[2,1]<=[2]}", '<@mesh, [{"nope"}]>', "-m", "x=2"], capsys)
    assert rc == 2 and "error:" in err


def test_examples_seed_subset_on_both_backends(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["examples", "--backend", "all", "-k", "seed/", "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 0, out
    assert {r["backend"] for r in doc["results"]} == {"reference", "jax"}
    wrong = [r for r in doc["results"] if r["example"] == "seed/wrong-pair"]
    assert all(r["passed"] and r["differing_devices"] == [1, 2, 3, 4, 5, 6] for r in wrong)


def test_examples_table_text(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["examples", "-k", "seed/wrong"], capsys)
    assert rc == 0 and "pass (differs)" in out and "\x1b[" not in out  # no colour off a TTY


def test_demo_seed_check_flags_the_distorted_mesh(capsys: pytest.CaptureFixture[str]) -> None:
    from shardconv.ui.console import make_console
    from shardconv.cli.examples import run_seed_check

    assert run_seed_check(make_console()) == 1
    assert "distorted-mesh" in capsys.readouterr().out


def test_backends_do_not_import_jax_numpy_or_rich() -> None:
    code = "import sys, shardconv.backends, shardconv.backends.jax_backend; print(sorted(m for m in ('jax', 'numpy', 'rich') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


@pytest.mark.parametrize("backend", ["reference", "jax"])
def test_compare_without_mesh_uses_the_meshes_the_sides_carry(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    inline = '#sdy.sharding<mesh<["batch"=2, "model"=4]>, [{}, {"model"}]>'
    seed = WRONG[1]
    rc, out, _ = run(["compare", inline, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "-b", backend], capsys)
    assert rc == 0 and "same placement" in out
    rc, out, _ = run(["compare", inline, seed, "-b", backend], capsys)
    assert rc == 1 and "data differ on device(s) 1, 2, 3, 4, 5, 6" in out
    # each side keeps its own inline mesh: one device count is all they must share
    rc2, _, _ = run(["compare", inline, '#sdy.sharding<mesh<["x"=8]>, [{}, {"x"}]>', "-b", backend], capsys)
    assert rc2 == 1
    rc, _, err = run(["compare", inline, '#sdy.sharding<mesh<["x"=4]>, [{}, {"x"}]>'], capsys)
    assert rc == 2 and "span 8 and 4 devices" in err
    rc, _, err = run(["compare", seed, "{replicated}"], capsys)
    assert rc == 2 and "--mesh is needed" in err


def test_jax_worker_never_imports_from_the_working_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A checkout holding ./jax.py, ./numpy.py and ./shardconv/ is where `shardconv compare --backend jax`
    may run: the worker is started isolated, so none of them runs, and XLA still gives the answer the
    reference backend computes."""
    from pathlib import Path

    from support.cli_util import BIN

    marker = tmp_path / "ran"
    evil = tmp_path / "checkout"
    (evil / "shardconv").mkdir(parents=True)
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for name in ("jax.py", "numpy.py", "jaxlib.py", "shardconv/__init__.py", "shardconv/backends.py"):
        (evil / name).write_text(payload)

    def compare(backend: str, cwd: Path) -> dict:  # type: ignore[type-arg]
        r = subprocess.run([str(BIN), "compare", *WRONG, "--backend", backend, "--format", "json"], cwd=cwd,
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert r.returncode == 1, r.stderr
        return dict(json.loads(r.stdout))

    answer = compare("jax", evil)
    assert not marker.exists(), marker.read_text()
    assert answer["differing_devices"] == compare("reference", tmp_path)["differing_devices"] != []
