"""Project config for ``shardconv check``: found from each file's folder upwards, per-path overrides,
flags win, ``shardconv config`` names each setting's source, and a bad config names file, key and line.
The dumps are jax's own (``lower().as_text()`` on batch=2,model=4) and the seed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.check_cli import ROOT, SEED_MLIR, run
from support.cli_util import run_capped

from shardconv.check.config import ConfigError, ConfigFinder, load
from shardconv.cli.main import main

RIGHT = "batch=2,model=4"
WRONG = "batch=4,model=2"


def project(tmp_path: Path, jax_dumps: Path, config: str, name: str = "pyproject.toml", where: str = "") -> Path:
    """tmp/{config file}, tmp/dumps/ir.mlir and tmp/dumps/tpu/ir.mlir (jax's lowered module)."""
    (tmp_path / where / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where / name).write_text(config)
    for sub in ("dumps", "dumps/tpu"):
        (tmp_path / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(jax_dumps / "lowered.mlir", tmp_path / sub / "ir.mlir")
    return tmp_path


def rules_by_file(out: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for f in json.loads(out)["findings"]:
        found.setdefault(Path(f["path"]).parent.name, []).append(f["rule"])
    return found


def test_config_mesh_found_from_the_files_folder_upwards_and_the_flag_wins(
    tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, jax_dumps, f'[project]\nname = "x"\n\n[tool.shardconv]\nmesh = "{WRONG}"\n')
    monkeypatch.chdir("/")  # discovery starts at each file's folder, not the current one
    rc, out, _ = run([str(root / "dumps"), "--format", "json"], capsys)
    assert rc == 1 and rules_by_file(out) == {"dumps": ["mesh-mismatch"], "tpu": ["mesh-mismatch"]}
    rc, out, _ = run([str(root / "dumps"), "--mesh", RIGHT, "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []
    rc, out, _ = run([str(root / "dumps"), "--no-config", "--format", "json"], capsys)
    assert rc == 0


def test_overrides_apply_to_matching_paths_only(
    tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(
        tmp_path,
        jax_dumps,
        f'[tool.shardconv]\nmesh = "{RIGHT}"\n\n'
        f'[[tool.shardconv.overrides]]\npaths = ["dumps/tpu/**"]\nmesh = "{WRONG}"\n',
    )
    monkeypatch.chdir(root / "dumps")  # override globs are relative to the config's folder
    rc, out, _ = run([".", "--format", "json"], capsys)
    assert rc == 1 and rules_by_file(out) == {"tpu": ["mesh-mismatch"]}
    rc, out, _ = run([".", "--format", "json", "--warn-only", "mesh-mismatch"], capsys)
    assert rc == 0 and rules_by_file(out) == {"tpu": ["mesh-mismatch"]}


def test_nearest_config_wins_and_shardconv_toml_before_pyproject(
    tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, jax_dumps, f'[tool.shardconv]\nmesh = "{RIGHT}"\n')
    (root / "dumps" / "tpu" / "pyproject.toml").write_text('[project]\nname = "no shardconv table: skipped"\n')
    (root / "dumps" / "tpu" / "shardconv.toml").write_text(f'mesh = "{WRONG}"\n')
    (root / "dumps" / "pyproject.toml").write_text("[tool.black]\n")  # no [tool.shardconv]: look further up
    rc, out, _ = run([str(root / "dumps"), "--format", "json"], capsys)
    assert rc == 1 and rules_by_file(out) == {"tpu": ["mesh-mismatch"]}
    cfg = ConfigFinder().for_path(str(root / "dumps" / "tpu" / "ir.mlir"))
    assert cfg.path is not None and cfg.path.endswith("tpu/shardconv.toml")
    assert ConfigFinder().for_path(str(root / "dumps" / "ir.mlir")).path.endswith(f"{root.name}/pyproject.toml")  # type: ignore[union-attr]


def test_ignore_exclude_and_allowed_meshes_from_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dumps").mkdir()
    shutil.copy(SEED_MLIR, tmp_path / "dumps" / "seed.mlir")
    shutil.copy(SEED_MLIR, tmp_path / "dumps" / "skip-me.mlir")
    (tmp_path / "shardconv.toml").write_text(
        'allowed-meshes = ["2x4", "1x8"]\nexclude = ["dumps/skip-*"]\nignore = ["synthetic-mesh"]\n'
    )
    monkeypatch.chdir(tmp_path / "dumps")
    rc, out, _ = run([".", "--format", "json"], capsys)
    doc = json.loads(out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["seed.mlir"]
    assert rc == 1 and [f["rule"] for f in doc["findings"]] == ["mesh-not-allowed"]  # 4x2; synthetic-mesh ignored
    rc, out, _ = run([".", "--format", "json", "--ignore", "mesh-not-allowed"], capsys)  # the flag replaces the list
    assert rc == 0 and [f["rule"] for f in json.loads(out)["findings"]] == ["synthetic-mesh"]


def test_max_devices_from_config_unless_the_flag_or_environment_sets_it(
    tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shardconv.core.limits import current

    root = project(tmp_path, jax_dumps, "[tool.shardconv]\nmax-devices = 4\n")
    rc, out, _ = run([str(root / "dumps" / "ir.mlir"), "--format", "json"], capsys)
    assert rc == 1 and "exceeds the device limit of 4" in json.loads(out)["findings"][0]["message"]
    assert current().max_devices == 1 << 24  # the config's ceiling ended with the command
    with pytest.raises(SystemExit) as e:
        main(["--max-devices", "8", "check", str(root / "dumps" / "ir.mlir")])
    assert e.value.code == 0
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", "8")
    rc, _, _ = run([str(root / "dumps" / "ir.mlir")], capsys)
    assert rc == 0


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            '[tool.shardconv]\nmesh = "a=2"\nignore = ["synthetic-mesh"\n',
            (3, 27),
            ["Unclosed array"],
        ),  # the end of the document
        ("[tool.shardconv]\nmesh = a=2\n", (2, 8), ["Invalid value"]),  # tomllib's own position
        ('[tool.shardconv]\nallowed_meshes = ["2x4"]\n', (2, 18), ["unknown key 'allowed_meshes'", "allowed-meshes"]),
        ("[tool.shardconv]\n\nmesh = 8\n", (3, 8), ["[tool.shardconv] mesh", "must be a string"]),
        ('[tool.shardconv]\nmesh = "batch=2,model=four"\n', (2, 8), ["[tool.shardconv] mesh"]),
        ('[tool.shardconv]\nwarn-only = ["distorted-mesj"]\n', (2, 13), ["warn-only", "did you mean distorted-mesh?"]),
        (
            '[tool.shardconv]\nmesh = "a=8"\n\n'
            '[[tool.shardconv.overrides]]\npaths = ["x/**"]\nallowed-meshes = "2y4"\n',
            (6, 18),
            ["[tool.shardconv.overrides] #1 allowed-meshes", "'2y4' is not a shape"],
        ),
        ('[tool.shardconv]\n[[tool.shardconv.overrides]]\nmesh = "a=8"\n', (2, 1), ["#1", "paths"]),
        ('[tool.shardconv]\n[[tool.shardconv.overrides]]\npaths = ["a"]\ninclude = ["b"]\n', (4, 11), ["may set only"]),
    ],
)
def test_malformed_config_names_file_key_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: tuple[int, int], words: list[str]
) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as e:
        load(str(cfg))
    assert (e.value.line, e.value.column) == where
    shutil.copy(SEED_MLIR, tmp_path / "seed.mlir")
    rc, _, err = run([str(tmp_path / "seed.mlir")], capsys)
    assert rc == 2 and "Traceback" not in err
    assert err.startswith(f"error: {cfg}:{where[0]}:{where[1]}: ")
    for w in words:
        assert w in err
    assert "^" in err  # the caret under the offending line


def test_config_command_shows_each_setting_and_its_source(
    tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(
        tmp_path,
        jax_dumps,
        f'[tool.shardconv]\nmesh = "{RIGHT}"\nignore = ["non-canonical"]\n\n'
        '[[tool.shardconv.overrides]]\npaths = ["dumps/tpu/**"]\nallowed-meshes = ["2x4"]\n',
    )
    monkeypatch.chdir(root)
    with pytest.raises(SystemExit) as e:
        main(["config", "dumps/tpu/ir.mlir", "--warn-only", "verify"])
    out = capsys.readouterr().out
    assert e.value.code == 0
    lines = {line.split(" = ")[0].strip(): line for line in out.splitlines()[1:]}
    assert out.splitlines()[0] == "config: pyproject.toml"
    assert lines["mesh"].endswith("# pyproject.toml:2") and RIGHT in lines["mesh"]
    assert lines["ignore"].endswith("# pyproject.toml:3")
    assert lines["allowed-meshes"].endswith("# pyproject.toml:7 (override #1)")
    assert lines["warn-only"].endswith("# --warn-only") and lines["exclude"].endswith("# default")
    with pytest.raises(SystemExit):
        main(["config", "dumps/ir.mlir", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["settings"]["allowed-meshes"] == {"value": "(any)", "source": "default"}  # the override is for tpu/ only
    assert doc["config"] == "pyproject.toml"


def test_explicit_config_file(tmp_path: Path, jax_dumps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, jax_dumps, f'mesh = "{WRONG}"\n', name="ci.toml", where="elsewhere")
    (root / "dumps" / "shardconv.toml").write_text(f'mesh = "{RIGHT}"\n')
    rc, _, _ = run([str(root / "dumps" / "ir.mlir")], capsys)
    assert rc == 0
    rc, _, _ = run([str(root / "dumps" / "ir.mlir"), "--config", str(root / "elsewhere" / "ci.toml")], capsys)
    assert rc == 1
    (root / "elsewhere" / "pyproject.toml").write_text("[project]\n")
    rc, _, err = run([str(root / "dumps" / "ir.mlir"), "--config", str(root / "elsewhere" / "pyproject.toml")], capsys)
    assert rc == 2 and "no [tool.shardconv] table" in err


def test_readme_config_example_loads(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text[text.index("## Project config") :]
    block = section[section.index("```toml\n") + 8 : section.index("```", section.index("```toml\n") + 8)]
    (tmp_path / "dumps").mkdir()
    (tmp_path / "pyproject.toml").write_text(block)
    cfg = load(str(tmp_path / "pyproject.toml"))
    assert cfg is not None and set(cfg.settings) == {
        "mesh",
        "allowed-meshes",
        "ignore",
        "warn-only",
        "include",
        "exclude",
        "max-devices",
        "replicated-threshold",
    }
    tpu = cfg.for_file(str(tmp_path / "dumps" / "tpu" / "x.txt"))
    assert (
        tpu["mesh"].text == "data=4,model=2"
        and cfg.for_file(str(tmp_path / "dumps" / "x.txt"))["mesh"].text == "batch=2,model=4"
    )


# --- hostile configs: what a checkout's config names is read bounded, and only inside the checkout ---


def hostile_project(tmp_path: Path, jax_dumps: Path, mesh: str) -> Path:
    """A checkout whose pyproject.toml sets ``mesh = MESH``, with jax's lowered module beside it."""
    root = project(tmp_path, jax_dumps, f'[tool.shardconv]\nmesh = "{mesh}"\n')
    os.mkfifo(root / "pipe.mlir")
    return root


@pytest.mark.parametrize("mesh", ["@/dev/zero", "@pipe.mlir", "@/etc/passwd", "@../outside.mlir", "@dumps"])
def test_a_config_naming_a_device_fifo_folder_or_file_outside_is_an_error_naming_it(
    tmp_path: Path, jax_dumps: Path, mesh: str
) -> None:
    """Discovered beside a checked file, such a config once read /dev/zero until memory ran out or
    blocked on the FIFO forever: now an error (exit 2) naming the config, its key and line."""
    shutil.copy(jax_dumps / "lowered.mlir", tmp_path / "outside.mlir")
    root = hostile_project(tmp_path / "repo", jax_dumps, mesh)
    r = run_capped("check", "dumps/ir.mlir", cwd=root, timeout=30)
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert r.err.startswith("error: pyproject.toml:2:8: [tool.shardconv] mesh: "), r.err
    assert f"'{mesh}'" in r.err


@pytest.mark.parametrize(("mesh", "why"), [
    ("@/dev/zero", "not a regular file (a character device)"),
    ("@pipe.mlir", "not a regular file (a FIFO)"),
    ("@dumps", "not a regular file (a folder)"),
])
def test_mesh_option_refuses_what_is_not_a_regular_file(tmp_path: Path, jax_dumps: Path, mesh: str, why: str) -> None:
    root = hostile_project(tmp_path, jax_dumps, "batch=2,model=4")
    for command in (["check", "dumps/ir.mlir"], ["convert", "{replicated}"], ["config", "dumps"]):
        r = run_capped(*command, "--mesh", mesh, cwd=root, timeout=30)
        assert r.code == 2 and f"--mesh {mesh}: cannot read file: {why}" in r.err, (command, r.err)


def test_mesh_file_is_read_only_as_far_as_its_mesh(tmp_path: Path, jax_dumps: Path) -> None:
    """A 4 GiB dump (sparse) whose mesh is at the top is read by a process capped at 1.5 GiB; one with
    no mesh in its first 16 MiB is an error that says so, read no further."""
    root = hostile_project(tmp_path, jax_dumps, "batch=2,model=4")
    for name, head in (("big.mlir", (root / "dumps" / "ir.mlir").read_bytes()), ("empty.mlir", b"module {\n")):
        with open(root / name, "wb") as f:
            f.write(head)
            f.truncate(4 << 30)
    r = run_capped("check", "dumps/ir.mlir", "--no-config", "--mesh", "@big.mlir", cwd=root)
    assert r.code == 0, r.err
    r = run_capped("config", "dumps", "--mesh", "@big.mlir", "--format", "json", cwd=root)
    assert r.code == 0 and json.loads(r.out)["settings"]["mesh"]["value"] == "@big.mlir", r.err
    r = run_capped("check", "dumps/ir.mlir", "--no-config", "--mesh", "@empty.mlir", cwd=root)
    assert r.code == 2 and "no complete sdy.mesh declaration in its first 16 MiB" in r.err, r.err


@pytest.mark.parametrize(("text", "words"), [
    (b"[tool.shardconv]\nignore = " + b"[" * 5000 + b"]" * 5000 + b"\n", ["nested too deeply"]),
    (b'[tool.shardconv]\nwarn-only = []\nmesh = "\xff"\n', ["3:9: not UTF-8 text (byte 0xff)"]),
    (b"[tool.shardconv]\n#" + b"x" * (5 << 20) + b"\n", ["larger than 4 MiB"]),
])
def test_unreadable_config_is_an_input_error_naming_the_file(
    tmp_path: Path, jax_dumps: Path, text: bytes, words: list[str]
) -> None:
    """These were internal errors (exit 70), or named no file."""
    root = project(tmp_path, jax_dumps, "")
    (root / "pyproject.toml").write_bytes(text)
    for command in (["check", "dumps/ir.mlir"], ["config", "dumps"], ["check", "dumps", "--config", "pyproject.toml"]):
        r = run_capped(*command, cwd=root)
        assert r.code == 2 and r.err.startswith("error: pyproject.toml:"), (command, r.err)
        assert all(w in r.err for w in words), r.err


def test_a_fifo_named_like_a_config_is_an_error_not_a_hang(tmp_path: Path, jax_dumps: Path) -> None:
    root = project(tmp_path, jax_dumps, "")
    (root / "pyproject.toml").unlink()
    os.mkfifo(root / "dumps" / "shardconv.toml")
    r = run_capped("check", "dumps/ir.mlir", cwd=root, timeout=30)
    assert r.code == 2 and "shardconv.toml: cannot read config file: not a regular file (a FIFO)" in r.err, r.err
