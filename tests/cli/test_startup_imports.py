"""Start-up stays lean: what a command line loads is checked by module, in a fresh interpreter (timings
live in bench/cli.py). rich, the parsers, jax and the native core load only for the commands that use them,
and an import inside a function is one that keeps a module out of some command's start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_util import SEED, SEED_MESH, WHOLE_AXIS_HLO
from support.package_imports import all_imports

PROBE = """\
import os, sys
from shardconv.cli.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
with open(os.environ["PROBE_MODULES"], "w") as f:
    f.write("\\n".join(sorted(sys.modules)))
"""
NEVER = {"rich", "lark", "jax", "jaxlib", "pkg_resources", "importlib.metadata"}
HEAVY = {"shardconv._native", "shardconv.formats._lark_runtime"}
COMMAND_MODULES = {f"shardconv.cli.{name}" for name in ("convert", "show", "check", "trace", "explain", "outputs")}
CLEAN_HLO = "HloModule m\n\nENTRY main {\n  ROOT p = f32[8,8] parameter(0), sharding={devices=[2,4]<=[8]}\n}\n"


def loaded(tmp_path: Path, *args: str) -> set[str]:
    """The modules ``shardconv ARGS`` has loaded when it exits (stdout and stderr are pipes)."""
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PROBE_MODULES": str(out), "NO_COLOR": "1"}
    command = [sys.executable, "-c", PROBE, *args]
    subprocess.run(command, capture_output=True, env=env, cwd=tmp_path, check=False, timeout=60)
    return set(out.read_text().split())


def top(modules: set[str]) -> set[str]:
    """The top-level packages among ``modules``, plus the modules themselves."""
    return modules | {m.split(".")[0] for m in modules}


def test_importing_the_cli_loads_no_command_and_nothing_heavy() -> None:
    code = "import sys, shardconv.cli.main; print('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(done.stdout.split())
    assert not top(modules) & (NEVER | HEAVY | COMMAND_MODULES | {"shardconv.check", "shardconv.convert"})


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_loads_neither_click_nor_typing(tmp_path: Path, flag: str) -> None:
    modules = loaded(tmp_path, flag)
    assert "shardconv.cli.version" in modules
    assert not top(modules) & (NEVER | HEAVY | {"click", "typing", "shardconv.cli.main"})


def test_help_imports_no_command_module(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "--help")
    assert "click" in modules and not top(modules) & (NEVER | HEAVY | COMMAND_MODULES)


def test_convert_of_a_printed_spelling_loads_no_grammar_no_native_core_and_no_checker(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "convert", SEED, "--mesh", SEED_MESH)
    assert "shardconv.cli.convert" in modules
    assert not top(modules) & (NEVER | HEAVY | {"shardconv.check", "shardconv.scan", "tomllib"})


def test_convert_of_a_rarer_spelling_loads_the_grammar(tmp_path: Path) -> None:
    modules = loaded(tmp_path, "convert", '{devices=[2,4]<=[8] metadata={op_name="a"}}', "--mesh", SEED_MESH)
    assert "shardconv.formats._lark_runtime" in modules and "shardconv._native" not in modules


def test_check_on_a_pipe_loads_only_what_its_report_needs(tmp_path: Path) -> None:
    (tmp_path / "clean.hlo").write_text(CLEAN_HLO)
    modules = loaded(tmp_path, "check", "-j", "1", "clean.hlo")
    assert {"shardconv.cli.check", "shardconv._native"} <= modules
    # no rich on a pipe; no JSON without --format json/sarif, no temp files without --fix, no --mesh parser,
    # no grammar for a value spelled as XLA prints it
    assert not top(modules) & (
        NEVER | {"json", "tempfile", "shlex", "shardconv.formats.detect", "shardconv.formats._lark_runtime"}
    )


CLEAN_SDY = (
    'module @jit_f attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]>\n'
    '  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>})'
    " -> tensor<8x8xf32> {\n"
    '    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"model"}]> : tensor<8x8xf32>\n'
    "    return %0 : tensor<8x8xf32>\n  }\n}\n"
)


CLEAN_TUPLES = (
    "HloModule m, num_partitions=8\n\nENTRY main {\n  ROOT p = "
    "(f32[8], f32[8]) parameter(0), sharding={{devices=[8]<=[8]}, {replicated}}\n}\n"
)


CLEAN_COLLECTIVE = (  # a per-pass dump's all-gather, its replica groups a V3 mesh as XLA prints them
    "HloModule m, num_partitions=8\n\nENTRY main {\n  p = f32[8,8] parameter(0), sharding={devices=[2,4]<=[8]}\n"
    "  ROOT ag = f32[8,32] all-gather(p), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=4] {'axis_1'}, "
    "dimensions={1}, use_global_device_ids=true, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}\n}\n"
)


@pytest.mark.parametrize(
    ("name", "text"), [("clean.hlo", CLEAN_TUPLES), ("clean.mlir", CLEAN_SDY), ("collective.hlo", CLEAN_COLLECTIVE)]
)
def test_check_of_printed_tuples_and_sdy_loads_no_grammar(tmp_path: Path, name: str, text: str) -> None:
    """A dump's values as XLA and Shardy print them (tuples, meshes, shardings, a collective's V3 replica
    groups) are read without the grammar."""
    (tmp_path / name).write_text(text)
    modules = loaded(tmp_path, "check", "-j", "1", "--mesh", "batch=2,model=4", name)
    assert "shardconv._native" in modules and "shardconv.formats._lark_runtime" not in modules


def test_a_command_runs_with_young_collections_spaced_out(tmp_path: Path) -> None:
    probe = (
        "import gc, sys\nfrom shardconv.cli import entry\nimport shardconv.cli.main as m\n"
        "m.main = lambda argv=None: print(gc.get_threshold()[0], gc.isenabled())\nentry.main(['--help'])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    from shardconv.cli.entry import YOUNG_COLLECTION

    assert out.stdout.split() == [str(YOUNG_COLLECTION), "True"] and YOUNG_COLLECTION > 700  # (CPython's is 700)


def test_trace_and_explain_of_a_small_file_load_no_thread_pool(tmp_path: Path) -> None:
    """The pool that scans a long file's pieces (concurrent.futures, which loads logging) costs 25 ms."""
    (tmp_path / "clean.hlo").write_text(CLEAN_HLO)
    for command in ("trace", "explain"):
        modules = loaded(tmp_path, command, "clean.hlo")
        assert f"shardconv.cli.{command}" in modules and "shardconv.scan.ahead" in modules
        assert not top(modules) & {"concurrent", "logging"}


def test_trace_of_a_long_log_scans_on_a_pool_of_its_own_and_loads_rich_while_it_scans(tmp_path: Path) -> None:
    """A log of many pieces is scanned on the package's own threads (concurrent.futures costs 25 ms,
    logging with it), and the console (rich, 20 ms) is made once the first dump is read, the scan
    running meanwhile: neither is paid before the first piece is scanned."""
    from support.trace_util import SEED_LOG

    from shardconv.scan.pieces import PIECE_BYTES

    seed = SEED_LOG.read_text()
    log = tmp_path / "passes.log"
    log.write_text(seed * (PIECE_BYTES // len(seed) + 2))
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "shardconv", "trace", str(log)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=120)
    order = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert done.returncode in (0, 1) and "shardconv._native" in order and "rich.console" in order
    assert order.index("shardconv._native") < order.index("rich.console")
    assert not top(set(order)) & {"concurrent", "logging"}


# Imported inside functions wherever they are used: optional or heavy dependencies, and the compiled core.
LAZY = {"jax", "jaxlib", "numpy", "lark", "google", "rich", "click", "model_explorer", "tomli", "shardconv._native"}
GENERATED = ("shardconv.formats._lark_runtime", "shardconv.formats._tables_")  # written by `make grammars`
COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "--help": ["--help"],
    "convert": ["convert", SEED, "--mesh", SEED_MESH],
    "convert (rarer spelling)": ["convert", '{devices=[2,4]<=[8] metadata={op_name="a"}}', "--mesh", SEED_MESH],
    "show": ["show", SEED, "--mesh", SEED_MESH],
    "roundtrip": ["roundtrip", SEED, "--mesh", SEED_MESH],
    "compare": ["compare", SEED, WHOLE_AXIS_HLO, "--mesh", SEED_MESH],
    "rule": ["rule", "distorted-mesh"],
    "config": ["config", "clean.hlo"],
    "check": ["check", "-j", "1", "clean.hlo"],
    "check (sdy)": ["check", "-j", "1", "--mesh", SEED_MESH, "clean.mlir"],
    "diff": ["diff", "clean.hlo", "clean.hlo"],
    "snapshot": ["snapshot", "clean.hlo"],
    "model-explorer": ["model-explorer", "clean.mlir"],
    "trace": ["trace", "clean.hlo"],
    "explain": ["explain", "clean.hlo"],
    "outputs": ["outputs", "clean.hlo"],
}


def test_an_import_inside_a_function_keeps_a_module_out_of_some_command_s_start_up(tmp_path: Path) -> None:
    """A function-level import is for start-up only: of an optional or heavy dependency (LAZY, or one an
    ImportError handler guards), or of a module some command loads its importer without. Any other goes
    at the top of its module, where a reader sees what the module depends on."""
    (tmp_path / "clean.hlo").write_text(CLEAN_HLO)
    (tmp_path / "clean.mlir").write_text(CLEAN_SDY)
    runs = [loaded(tmp_path, *args) for args in COMMANDS.values()]
    needless = sorted(
        f"{i.importer} (line {i.line}) imports {i.imported}"
        for i in all_imports(every=True)
        if i.in_function and not i.optional and not i.importer.startswith(GENERATED)
        and not (i.imported.split(".")[0] in LAZY or i.imported in LAZY)
        and not any(i.importer in run and i.imported not in run for run in runs)
    )
    assert not needless, (
        "imports inside functions that no command's start-up is spared (every command that loads the importer "
        "loads them too): move them to the top of their modules\n  " + "\n  ".join(needless)
    )
