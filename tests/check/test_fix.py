"""``--fix``: the fixed file passes, only sharding spans change, a failed write changes nothing, and what
cannot be fixed says why."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest
from support.check_cli import DUMPS, MESH, SEED_MLIR, run
from support.mlir_forms import generic

from shardconv.check import check_text
from shardconv.check.apply import FixError, apply, plan_file
from shardconv.check.context import CheckOptions
from shardconv.formats import parse_mesh
from shardconv.scan.native import iter_sites, scan_bytes


def copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copyfile(DUMPS / name, dst)
    return dst


def changed_spans(a: bytes, b: bytes) -> list[tuple[bytes, bytes]]:
    """Line-level diff of two files with the same line count: (old line, new line) for each change."""
    la, lb = a.split(b"\n"), b.split(b"\n")
    assert len(la) == len(lb)
    return [(x, y) for x, y in zip(la, lb) if x != y]


def test_fix_seed_then_check_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    before = f.read_bytes()
    rc, out, err = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 0, out
    assert "fixed 2 value(s)" in err
    after = f.read_bytes()
    assert b'sdy.mesh @mesh = <["batch"=2, "model"=4]>' in after
    assert b'#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>' in after
    assert len(changed_spans(before, after)) == 2
    found = list(iter_sites(scan_bytes((DUMPS / "replicate_sharded_data.mlir").read_bytes()), "f"))
    spans = [(o.start, o.end) for o in found]
    ops = [op for op in SequenceMatcher(None, before, after, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert ops and all(any(a <= i1 and i2 <= b for a, b in spans) for _, i1, i2, _, _ in ops)
    assert run([str(f), *MESH, "--allowed-meshes", "2x4"], capsys)[0] == 0


@pytest.mark.oracle
def test_the_seed_in_generic_form_is_found_and_fixed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The seed printed in generic form declares its mesh as ``"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name =
    "mesh"}>``: check reads it as the declaration of ``@mesh`` (no unknown-mesh errors), flags it, and the fix
    writes the global mesh spelled as the declaration is, so MLIR parses the fixed file and check passes."""
    f = tmp_path / "seed-generic.mlir"
    f.write_text(generic((DUMPS / "replicate_sharded_data.mlir").read_text()))
    assert '"sdy.mesh"() <{mesh = #sdy.mesh<["_axis_0"=4, "_axis_1"=2]>, sym_name = "mesh"}>' in f.read_text()
    rc, out, _ = run([str(f), *MESH, "--format", "json"], capsys)
    assert rc == 1 and [x["rule"] for x in json.loads(out)["findings"]] == ["distorted-mesh"]
    rc, _, err = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 0 and "fixed 2 value(s)" in err
    fixed = f.read_text()
    assert '<{mesh = #sdy.mesh<["batch"=2, "model"=4]>, sym_name = "mesh"}>' in fixed
    assert '"sdy.mesh"() <{mesh = #sdy.mesh<["batch"=2, "model"=4]>' in generic(fixed)  # (MLIR parses it)
    assert run([str(f), *MESH, "--allowed-meshes", "2x4"], capsys)[0] == 0


@pytest.mark.parametrize("flags", [["--fix", "--dry-run"], ["--diff"]])
def test_dry_run_prints_a_diff_git_applies_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str]
) -> None:
    """The diff alone is on stdout (diagnostics on stderr), with context lines, so ``git apply`` takes it
    and the result is what --fix writes."""
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    before = f.read_bytes()
    monkeypatch.chdir(tmp_path)
    rc, out, err = run([f.name, *MESH, *flags], capsys)
    assert rc == 1 and f.read_bytes() == before
    assert out.startswith(f"--- a/{f.name}\n+++ b/{f.name}\n@@ -1,7 +1,7 @@\n") and "[distorted-mesh]" in err
    assert '+  sdy.mesh @mesh = <["batch"=2, "model"=4]>' in out and "error:" not in out
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply"], cwd=tmp_path, input=out.encode(), check=True)
    applied = f.read_bytes()
    f.write_bytes(before)
    assert run([f.name, *MESH, "--fix"], capsys)[0] == 0
    assert f.read_bytes() == applied


def test_nothing_written_when_nothing_to_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = copy(tmp_path, "jax_lowered.mlir")
    st = f.stat()
    rc, _, err = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 0 and "fixed" not in err
    assert f.stat().st_ino == st.st_ino and f.stat().st_mtime_ns == st.st_mtime_ns


def test_mhlo_sharding_canonicalised_and_mode_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "g.mlir"
    f.write_text(
        'module @m attributes {mhlo.num_partitions = 8 : i32} {\n'
        '  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4,1]<=[8] last_tile_dim_replicate}"}) '
        '-> (tensor<8x8xf32> {mhlo.sharding = "{ replicated }"}) {\n'
        "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
    )
    f.chmod(0o640)
    before = f.read_bytes()
    rc, out, _ = run([str(f), "--format", "json"], capsys)
    assert rc == 0 and [x["rule"] for x in json.loads(out)["findings"]] == ["non-canonical", "non-canonical"]
    rc, _, _ = run([str(f), "--fix"], capsys)
    after = f.read_bytes()
    assert rc == 0 and stat.S_IMODE(f.stat().st_mode) == 0o640
    assert after == before.replace(b"{devices=[2,4,1]<=[8] last_tile_dim_replicate}", b"{devices=[2,4]<=[8]}").replace(
        b"{ replicated }", b"{replicated}"
    )


def test_failed_write_leaves_original_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    before = f.read_bytes()
    opts = CheckOptions(mesh=parse_mesh("batch=2,model=4"))
    edits = plan_file(str(f), opts)
    assert edits

    def boom(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(FixError, match="No space left"):
        apply(str(f), edits)
    assert f.read_bytes() == before
    assert os.listdir(tmp_path) == [f.name]  # the temp file is gone too


def test_changed_file_is_not_clobbered(tmp_path: Path) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    edits = plan_file(str(f), CheckOptions(mesh=parse_mesh("batch=2,model=4")))
    f.write_bytes(f.read_bytes().replace(b"_axis_0", b"_axis_9"))
    changed = f.read_bytes()
    with pytest.raises(FixError, match="changed since it was scanned"):
        apply(str(f), edits)
    assert f.read_bytes() == changed


def test_process_killed_mid_write_leaves_original_intact(tmp_path: Path) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    before = f.read_bytes()
    script = (
        "import os, sys\n"
        "from shardconv.check import apply as fixer\n"
        "from shardconv.check.apply import plan_file\n"
        "from shardconv.check.context import CheckOptions\n"
        "from shardconv.formats import parse_mesh\n"
        "edits = plan_file(sys.argv[1], CheckOptions(mesh=parse_mesh('batch=2,model=4')))\n"
        "real = fixer._copy\n"
        "def dying_copy(src, dst, n):\n"
        "    real(src, dst, n)\n"
        "    if n is None:\n"
        "        dst.flush(); os.kill(os.getpid(), 9)\n"
        "fixer._copy = dying_copy\n"
        "fixer.apply(sys.argv[1], edits)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(f)], check=False, timeout=120)
    assert proc.returncode == -9
    assert f.read_bytes() == before


def test_a_refused_fix_is_not_counted_as_fixable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    f.chmod(0o444)
    before = f.read_bytes()
    rc, out, err = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 1 and f.read_bytes() == before and "is read-only; not rewritten" in err
    assert "fixable with --fix" not in out + err and "not fixed: --fix could not write the file" in out
    f.chmod(0o644)
    rc, out, err = run([str(f), *MESH], capsys)  # the same findings, writable: fixable again
    assert rc == 1 and "1 fixable with --fix" in out + err


def test_an_excerpt_of_binary_text_shows_escapes_with_the_caret_in_place(tmp_path: Path) -> None:
    from shardconv.core.errors import ShardingSyntaxError

    text = b"ab\xff\x01\tcd{bad}".decode("utf-8", "surrogateescape")
    e = ShardingSyntaxError("bad", text=text, pos=text.index("{"))
    excerpt, caret = str(e).splitlines()[1:]
    assert excerpt == r"  ab\xff\x01 cd{bad}" and excerpt.isprintable()
    assert caret.index("^") == excerpt.index("{")
    bin_file = tmp_path / "a.o"
    bin_file.write_bytes(b"\x7fELF\x02\x01\xd0\x00 binary")
    r = subprocess.run(
        [sys.executable, "-m", "shardconv", "outputs", str(bin_file)], capture_output=True, env={**os.environ}
    )
    assert r.returncode == 2 and b"\\x7fELF\\x02\\x01\\xd0\\x00 binary" in r.stderr
    assert all(32 <= b < 127 or b == 10 for b in r.stderr)


# --- integrity: the file replaced is the file read, owner kept, no write through an outside symlink ---


def test_a_file_renamed_over_the_target_during_a_fix_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process renames its own file over the target while the fix copies: the path no longer
    names the file that was read, so nothing is written (it was silently replaced before)."""
    from shardconv.check import apply as fixer

    f = copy(tmp_path, "replicate_sharded_data.mlir")
    edits = plan_file(str(f), CheckOptions(mesh=parse_mesh("batch=2,model=4")))
    theirs = tmp_path / "theirs.mlir"
    theirs.write_bytes(f.read_bytes())  # the same bytes: only the file's identity tells them apart
    real = fixer._copy

    def racing_copy(src: object, dst: object, n: int | None) -> None:
        real(src, dst, n)  # type: ignore[arg-type]
        if n is None:
            os.replace(theirs, f)

    monkeypatch.setattr(fixer, "_copy", racing_copy)
    replaced = os.stat(theirs).st_ino
    with pytest.raises(FixError, match="replaced"):
        apply(str(f), edits)
    assert f.stat().st_ino == replaced and f.read_bytes() == (DUMPS / "replicate_sharded_data.mlir").read_bytes()
    assert sorted(os.listdir(tmp_path)) == [f.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to nobody")
def test_fix_keeps_owner_and_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pwd

    nobody = pwd.getpwnam("nobody")
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    os.chown(f, nobody.pw_uid, nobody.pw_gid)
    f.chmod(0o664)
    rc, _, err = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 0 and "fixed 2 value(s)" in err
    st = f.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (nobody.pw_uid, nobody.pw_gid, 0o664)


def test_fix_does_not_write_through_a_symlink_out_of_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dumps/out.mlir -> ../elsewhere/x.mlir`` is checked but not fixed; ``dumps/in.mlir ->
    sub/y.mlir`` (inside the symlink's folder) is fixed through its target."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dumps" / "sub").mkdir(parents=True)
    outside = copy(tmp_path / "elsewhere", "replicate_sharded_data.mlir")
    inside = copy(tmp_path / "dumps" / "sub", "replicate_sharded_data.mlir")
    os.symlink(os.path.join("..", "elsewhere", outside.name), tmp_path / "dumps" / "out.mlir")
    os.symlink(os.path.join("sub", inside.name), tmp_path / "dumps" / "in.mlir")
    before = outside.read_bytes()
    links = [str(tmp_path / "dumps" / "out.mlir"), str(tmp_path / "dumps" / "in.mlir")]
    rc, out, err = run([*links, *MESH, "--fix"], capsys)
    assert rc == 1, out
    assert outside.read_bytes() == before
    assert f"is a symlink to {outside}, outside its folder; not rewritten" in err
    assert inside.read_bytes() != before and (tmp_path / "dumps" / "in.mlir").is_symlink()
    assert "in.mlir: fixed 2 value(s)" in err


def test_leftover_temp_files_are_not_checked_or_fixed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A killed --fix (SIGKILL: nothing can clean up) leaves ``.NAME.XXXX.shardconv-tmp``; the next run's
    folder walk skips it rather than reporting or rewriting it."""
    copy(tmp_path, "jax_lowered.mlir")
    stale = tmp_path / ".replicate_sharded_data.mlir.k2j4x9_q.shardconv-tmp"
    shutil.copyfile(DUMPS / "replicate_sharded_data.mlir", stale)
    before = stale.read_bytes()
    rc, out, _ = run([str(tmp_path), *MESH, "--fix", "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == [], out
    assert stale.read_bytes() == before


def test_sigterm_during_a_fix_removes_the_temp_file(tmp_path: Path) -> None:
    f = copy(tmp_path, "replicate_sharded_data.mlir")
    before = f.read_bytes()
    script = (
        "import os, signal, sys\n"
        "from shardconv.check import apply as fixer\n"
        "from shardconv.check.context import CheckOptions\n"
        "from shardconv.formats import parse_mesh\n"
        "edits = fixer.plan_file(sys.argv[1], CheckOptions(mesh=parse_mesh('batch=2,model=4')))\n"
        "real = fixer._copy\n"
        "def terminated_copy(src, dst, n):\n"
        "    real(src, dst, n)\n"
        "    if n is None:\n"
        "        dst.flush(); os.kill(os.getpid(), signal.SIGTERM)\n"
        "fixer._copy = terminated_copy\n"
        "fixer.apply(sys.argv[1], edits)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(f)], check=False, timeout=120)
    assert proc.returncode == 128 + 15
    assert f.read_bytes() == before and os.listdir(tmp_path) == [f.name]


# --- what cannot be fixed names its blocker; the diagnostics a fix comes with ---

UNFIXABLE = (
    "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
    '  sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=2], device_ids=[0, 1, 2, 3, 4, 5, 7, 6]>\n'
    '  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0", "_axis_1"}, {}]>})'
    " -> tensor<8x8xf32> {\n"
    "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
)


def test_unfixable_sharding_leaves_the_file_untouched_and_names_the_blocker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "m.mlir"
    p.write_text(UNFIXABLE)
    rc, out, err = run([str(p), "--mesh", "batch=2,model=4", "--fix"], capsys)
    assert rc == 1 and p.read_text() == UNFIXABLE  # neither the mesh nor the sharding moved
    assert "not fixed: @mesh" in err and '{"_axis_0", "_axis_1"}' in err and "distorted-mesh" in err
    assert "fixed" not in err.replace("not fixed", "")
    assert "not fixable:" in out and "fix: shardconv" not in out


def test_fix_without_mesh_says_mesh_is_needed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "seed.mlir"
    shutil.copy(SEED_MLIR, p)
    _, _, err = run([str(p), "--fix"], capsys)
    assert p.read_bytes() == SEED_MLIR.read_bytes()
    assert "not fixed: @mesh: --fix needs --mesh" in err


def test_fix_note_is_a_command_that_can_be_pasted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The note names the path (quoted) and the whole mesh, device_ids included; running it fixes the file."""
    p = tmp_path / "my dumps" / "seed.mlir"
    p.parent.mkdir()
    shutil.copy(SEED_MLIR, p)
    mesh = '<["batch"=2, "model"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>'
    rc, out, _ = run([str(p), "--mesh", mesh], capsys)
    (note,) = [line for line in out.splitlines() if "note: fix: " in line]
    cmd = shlex.split(note.split("note: fix: ", 1)[1])
    assert cmd[:2] == ["shardconv", "check"] and cmd[-1] == str(p) and mesh in cmd
    rc, _, err = run(cmd[2:], capsys)
    assert rc == 0 and "fixed" in err
    assert run([str(p), "--mesh", mesh, "--allowed-meshes", "2x4"], capsys)[0] == 0  # the fixed file passes


def seed_on_the_global_mesh() -> str:
    """The seed with its mesh renamed to the global one, the sharding on its model axis."""
    named = SEED_MLIR.read_text().replace('"_axis_0"=4, "_axis_1"=2', '"batch"=2, "model"=4')
    return named.replace('"_axis_0"', '"model"')


def test_device_order_only_difference_says_so() -> None:
    text = seed_on_the_global_mesh()
    (f,) = check_text(text, mesh='<["batch"=2, "model"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>')
    assert f.rule == "mesh-mismatch" and "only in device order" in f.message and "2x4 instead of 2x4" not in f.message


def test_mesh_of_another_shape_says_which() -> None:
    """Axes given in another order: the message names both shapes after a colon, as one clause."""
    text = seed_on_the_global_mesh()
    (f,) = check_text(text, mesh="model=4,batch=2")
    assert f.rule == "mesh-mismatch"
    assert f.message.endswith('differs from --mesh <["model"=4, "batch"=2]>: 2x4 instead of 4x2'), f.message


def test_caret_inside_a_c_escaped_frontend_attribute() -> None:
    line = (
        '  %p.1 = f32[8,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, '
        'frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"batch\\"}, {\\"c\\"}]>"}'
    )
    text = (
        'HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["batch"=2, "model"=4]>}},'
        " num_partitions=8\n\n"
        f"ENTRY %e (p.1: f32[8,8]) -> f32[8,8] {{\n{line}\n}}\n"
    )
    (f,) = [f for f in check_text(text) if f.rule == "verify"]
    assert (f.line, f.col) == (4, line.index('\\"c\\"') + 1)
    assert f.source.splitlines()[1].index("^") == f.source.splitlines()[0].index('\\"c')


def test_synthetic_mesh_in_another_device_order_says_so() -> None:
    """Same shape as the global mesh, other device order: a distortion, named as such (not "2x4 instead of 2x4")."""
    reordered = '"_axis_0"=2, "_axis_1"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]'
    text = SEED_MLIR.read_text().replace('"_axis_0"=4, "_axis_1"=2]', reordered)
    (f,) = [f for f in check_text(text, mesh="batch=2,model=4") if f.rule == "distorted-mesh"]
    assert "2x4 instead of 2x4" not in f.message
    assert "in device order: device_ids=[0, 2, 4, 6, 1, 3, 5, 7] instead of [0, 1, 2, 3, 4, 5, 6, 7]" in f.message
