"""``outputs -f pjrt`` / ``-f pjrt-header`` / ``--v3`` / ``--expect`` against what XLA itself returns:
real jax programs on 8 CPU devices (their lowering, HLO text, the dump folder's before_optimizations,
the compiled HLO) read back as the bytes the compiled executable hands out through PJRT
(``get_output_shardings`` / ``get_parameter_shardings``) and jax's own ``output_shardings`` /
``input_shardings``; the C header and the docs' C++ loader compiled and run; ``--expect``'s equality
held to jaxlib's ``HloSharding ==``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.lib import xla_client as xc
from support.hlo_strategies import single
from support.jax_child import run_jax
from support.xla_outputs import fields_of

from shardconv.cli.main import cli
from shardconv.convert.spellings import to_v1, v3_to_v2
from shardconv.formats.hlo.read import parse_hlo
from shardconv.outputs.equality import difference, xla_equal
from shardconv.outputs.pjrt import MAGIC, PjrtFileError, is_packed, pack, unpack

pytestmark = pytest.mark.oracle

HERE = Path(__file__).resolve().parent
DOC = HERE.parent.parent / "docs" / "pjrt.md"
PLUGINS = HERE.parent.parent / "docs" / "plugins.md"  # the README's PJRT section, in full
SHARDY = ("mlp", "mixed")  # lowered with Shardy: sdy.sharding on every argument and result
PROGRAMS = (*SHARDY, "gspmd")  # the mlp lowered without Shardy: mhlo.sharding strings
TEXTS = ("lowered", "lowered_hlo", "before_optimizations")
KEYS = {False: ("outputs", "jax_outputs"), True: ("parameters", "jax_inputs")}


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"TF_CPP_MIN_LOG_LEVEL": "3"}
    dump = tmp_path_factory.mktemp("dump")
    run = run_jax([str(HERE.parent / "support" / "pjrt_child.py"), str(dump)], env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["outputs", *args], standalone_mode=False)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return (r.return_value or 0), r.stdout, r.stderr


def _blobs(program: dict[str, object], key: str) -> list[bytes]:
    value = program[key]
    assert isinstance(value, list)
    return [bytes.fromhex(h) for h in value]


def _module(tmp_path: Path, program: dict[str, object], text: str) -> str:
    p = tmp_path / f"{text}.txt"
    p.write_text(str(program[text]))
    return str(p)


def _xla(blob: bytes) -> xc.HloSharding:
    op = xc.OpSharding()
    op.ParseFromString(blob)
    return xc.HloSharding.from_proto(op)


def _flag(params: bool) -> list[str]:
    return ["--parameters"] if params else []


# ---- the bytes XLA's executable returns -------------------------------------------------------


@pytest.mark.parametrize("params", [False, True])
@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_pjrt_file_holds_the_executables_bytes(
    programs: dict[str, dict[str, object]], name: str, text: str, params: bool, tmp_path: Path
) -> None:
    program = programs[name]
    exe, jax_own = KEYS[params]
    out = tmp_path / "s.pjrt"
    assert run(_module(tmp_path, program, text), *_flag(params), "-f", "pjrt", "-o", str(out))[0] == 0
    got = unpack(out.read_bytes())
    assert got == _blobs(program, exe) == _blobs(program, jax_own)


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_hlo_text_gives_the_parameter_bytes(programs: dict[str, dict[str, object]], name: str, tmp_path: Path) -> None:
    out = tmp_path / "p.pjrt"
    assert run(_module(tmp_path, programs[name], "compiled_text"), "--parameters", "-f", "pjrt", "-o", str(out))[0] == 0
    assert unpack(out.read_bytes()) == _blobs(programs[name], "parameters")


@pytest.mark.parametrize("params", [False, True])
@pytest.mark.parametrize("name", SHARDY)
def test_v3_protos_are_xlas_own_and_mean_what_the_executable_returns(
    programs: dict[str, dict[str, object]], name: str, params: bool, tmp_path: Path
) -> None:
    program = programs[name]
    out = tmp_path / "v3.pjrt"
    rc, _, err = run(_module(tmp_path, program, "lowered"), *_flag(params), "--v3", "-f", "pjrt", "-o", str(out))
    assert rc == 0 and "--v3" not in err  # every value of a jax lowering is sharded on the mesh
    for blob, exe in zip(unpack(out.read_bytes()), _blobs(program, KEYS[params][0]), strict=True):
        assert set(fields_of(blob, (14,))) == {14} and blob[0] == 0x72  # only field 14, named_sharding
        ours = _xla(blob)
        assert repr(ours).startswith("{mesh[")
        assert xc.HloSharding.from_string(repr(ours)).to_proto().SerializeToString() == blob  # XLA's serializer
        assert ours == _xla(exe)  # XLA holds it equal to the V2 sharding the executable returns


@pytest.mark.parametrize("params", [False, True])
def test_v3_of_mhlo_strings_stays_v2_and_says_so(programs: dict[str, dict[str, object]], params: bool, tmp_path: Path) -> None:
    program = programs["gspmd"]
    out = tmp_path / "v3.pjrt"
    rc, _, err = run(_module(tmp_path, program, "lowered"), *_flag(params), "--v3", "-f", "pjrt", "-o", str(out))
    n = 3 if params else 4
    which = ", ".join(map(str, range(n)))
    assert rc == 0 and unpack(out.read_bytes()) == _blobs(program, KEYS[params][0])
    assert err == f"note: --v3: {'parameter' if params else 'output'}s {which} have no mesh in the module (an HLO string, or unannotated): written V2\n"


@pytest.mark.parametrize("params", [False, True])
@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_expect_takes_the_bytes_the_executable_returned(
    programs: dict[str, dict[str, object]], name: str, text: str, params: bool, tmp_path: Path
) -> None:
    program = programs[name]
    exe = _blobs(program, KEYS[params][0])
    report = tmp_path / "returned.pjrt"
    report.write_bytes(pack(exe))
    what = "parameters" if params else "outputs"
    module = _module(tmp_path, program, text)
    assert run(module, *_flag(params), "--expect", str(report))[:2] == (0, f"all {len(exe)} {what} match\n")
    if text == "lowered" and name in SHARDY:  # the module side in V3 against XLA's V2 bytes, and the other way round
        assert run(module, *_flag(params), "--v3", "--expect", str(report))[0] == 0
        v3 = tmp_path / "v3.pjrt"
        run(module, *_flag(params), "--v3", "-f", "pjrt", "-o", str(v3))
        assert run(module, *_flag(params), "--expect", str(v3))[0] == 0


def test_expect_shows_what_a_wrong_report_gets_wrong(programs: dict[str, dict[str, object]], tmp_path: Path) -> None:
    """A plugin that returns the transposed tiling for output 0 and forgets the last output."""
    program = programs["mlp"]
    exe = _blobs(program, "outputs")
    wrong = xc.HloSharding.from_string("{devices=[4,2]<=[8]}").to_proto().SerializeToString()
    report = tmp_path / "returned.pjrt"
    report.write_bytes(pack([wrong, *exe[1:-1]]))
    rc, out, _ = run(_module(tmp_path, program, "lowered"), "--expect", str(report))
    assert rc == 1
    assert out == (
        "output 0: tile dims: [2, 4] in the module, [4, 2] in the report\n"
        "  module:   {devices=[2,4]<=[8]}\n"
        "  reported: {devices=[4,2]<=[8]}\n"
        "output 3: missing from the report\n"
        "  module:   {replicated}\n"
        "  reported: -\n"
        "2 of 4 outputs differ\n"
    )


# ---- the C header and the documented C++ loader, compiled -----------------------------------


def _compiler() -> str:
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    assert cxx is not None, "a C++ compiler is needed to check the header and the loader in docs/pjrt.md"
    return cxx


PRINT_HEADER = """
#include <cstdio>
#include "outputs.h"
#include "parameters.h"
static void dump(const char* const* s, const size_t* n, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < n[i]; ++k) std::printf("%02x", static_cast<unsigned char>(s[i][k]));
    std::printf("\\n");
  }
  std::printf("--\\n");
}
int main() {
  dump(shardconv_output_shardings, shardconv_output_sharding_sizes, SHARDCONV_NUM_OUTPUTS);
  dump(shardconv_parameter_shardings, shardconv_parameter_sharding_sizes, SHARDCONV_NUM_PARAMETERS);
}
"""


@pytest.mark.parametrize("v3", [False, True])
def test_header_compiles_and_holds_what_the_executable_returns(
    programs: dict[str, dict[str, object]], v3: bool, tmp_path: Path
) -> None:
    program = programs["mlp"]
    module = _module(tmp_path, program, "lowered")
    form = ["--v3"] if v3 else []
    run(module, "-f", "pjrt-header", *form, "-o", str(tmp_path / "outputs.h"))
    run(module, "--parameters", "-f", "pjrt-header", *form, "-o", str(tmp_path / "parameters.h"))
    (tmp_path / "main.cc").write_text(PRINT_HEADER)
    exe = tmp_path / "main"
    cc = [_compiler(), "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(tmp_path)]
    subprocess.run([*cc, str(tmp_path / "main.cc"), "-o", str(exe)], check=True, capture_output=True)
    got = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("--\n")
    for printed, params in zip(got, (False, True)):
        wanted = run(module, *_flag(params), *form, "-f", "proto-hex")[1]
        assert printed == wanted
        if not v3:
            assert [bytes.fromhex(h) for h in printed.splitlines()] == _blobs(program, KEYS[params][0])
    c = subprocess.run(  # and as C: the header is C99
        ["cc", "-std=c99", "-Wall", "-Werror", "-pedantic", "-fsyntax-only", "-x", "c", str(tmp_path / "outputs.h")],
        capture_output=True, text=True, check=False,
    )
    assert c.returncode == 0, c.stderr


# The extension's args struct, reduced to the fields it fills, with the types of
# xla/pjrt/c/pjrt_c_api_shardings_extension.h: the header's arrays must go into them as they are.
PJRT_STUB = """
#include <cstddef>
struct PJRT_Error;
struct PJRT_Shardings_PJRT_Executable_OutputShardings_Args {
  size_t num_outputs;
  const char* const* shardings;
  const size_t* sharding_sizes;
};
"""


def _readme_block(lang: str, marker: str) -> str:
    section = PLUGINS.read_text(encoding="utf-8")
    found = [b for b in re.findall(rf"```{lang}\n(.*?)```", section, re.DOTALL) if marker in b]
    assert len(found) == 1, f"docs/plugins.md must hold one {lang} block with {marker!r}"
    return str(found[0])


def test_readme_extension_snippet_compiles_against_the_extensions_types(
    programs: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    run(_module(tmp_path, programs["mlp"], "lowered"), "-f", "pjrt-header", "-o", str(tmp_path / "output_shardings.h"))
    (tmp_path / "ext.cc").write_text(PJRT_STUB + _readme_block("cpp", "PJRT_Shardings_PJRT_Executable_OutputShardings_Args"))
    r = subprocess.run([_compiler(), "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-I", str(tmp_path),
                        str(tmp_path / "ext.cc")], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_readme_commands_run(programs: dict[str, dict[str, object]], tmp_path: Path) -> None:
    """Every ``shardconv outputs`` line of docs/plugins.md, on a real lowering: the writing ones
    first (their files are what the ``--expect`` ones read), each exiting 0."""
    module = _module(tmp_path, programs["mlp"], "lowered")
    section = PLUGINS.read_text(encoding="utf-8")
    lines = [ln.split("#")[0].split() for ln in section.splitlines() if ln.startswith("shardconv outputs ")]
    lines.sort(key=lambda ln: "--expect" in ln)
    assert len(lines) >= 8
    written = {}
    for words in lines:
        args = [module, *words[3:]]
        for flag in ("-o", "--expect"):
            if flag in args:
                k = args.index(flag) + 1
                target = tmp_path / Path(args[k]).name
                args[k] = str(target)
                if flag == "-o":
                    written[target.name] = args
        if "--expect" in args:  # what a plugin returned: the extension's bytes, as the docs' writer writes them
            k = args.index("--expect") + 1
            Path(args[k]).write_bytes(pack(_blobs(programs["mlp"], "parameters" if "--parameters" in args else "outputs")))
        rc, _, err = run(*args)
        assert rc == 0, (words, err)
    assert {"outputs.pjrt", "parameters.pjrt", "output_shardings.h"} <= set(written)


NO_ARGS = """module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main() -> tensor<f32> {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    return %0 : tensor<f32>
  }
}
"""


def test_header_of_no_shardings_compiles(tmp_path: Path) -> None:
    m = tmp_path / "m.mlir"
    m.write_text(NO_ARGS)
    rc, header, _ = run(str(m), "--parameters", "-f", "pjrt-header")
    assert rc == 0 and "#define SHARDCONV_NUM_PARAMETERS 0" in header
    (tmp_path / "p.h").write_text(header)
    for lang in (["-x", "c", "-std=c99"], ["-x", "c++", "-std=c++17"]):
        r = subprocess.run([_compiler(), *lang, "-Wall", "-Werror", "-pedantic", "-fsyntax-only", str(tmp_path / "p.h")],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr


def _doc_block(name: str) -> str:
    """The C++ code docs/pjrt.md shows (its one ``cpp`` block that starts ``// name:``)."""
    found = re.findall(rf"```cpp\n(// {name}:.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(found) == 1, f"docs/pjrt.md must hold exactly one cpp block starting with '// {name}:'"
    return str(found[0])


LOADER_MAIN = """
#include <cstdio>
int main(int argc, char** argv) {
  std::FILE* f = std::fopen(argv[1], "rb");
  std::string data;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  std::fclose(f);
  PjrtShardings s;
  if (!ParsePjrtShardings(data, &s)) { std::printf("invalid\\n"); return 1; }
  for (size_t i = 0; i < s.num_shardings; ++i) {
    for (size_t k = 0; k < s.sharding_sizes[i]; ++k) std::printf("%02x", static_cast<unsigned char>(s.shardings[i][k]));
    std::printf("\\n");
  }
  return argc == 2 ? 0 : 2;
}
"""


def test_the_docs_loader_reads_a_pjrt_file(programs: dict[str, dict[str, object]], tmp_path: Path) -> None:
    (tmp_path / "load.cc").write_text(_doc_block("loader") + LOADER_MAIN)
    exe = tmp_path / "load"
    subprocess.run([_compiler(), "-std=c++17", "-Wall", "-Wextra", "-Werror", str(tmp_path / "load.cc"), "-o", str(exe)],
                   check=True, capture_output=True)
    module = _module(tmp_path, programs["mlp"], "lowered")
    for flags in ([], ["--parameters"], ["--v3"]):
        f = tmp_path / "s.pjrt"
        run(module, *flags, "-f", "pjrt", "-o", str(f))
        got = subprocess.run([str(exe), str(f)], capture_output=True, text=True, check=False)
        assert (got.returncode, got.stdout) == (0, run(module, *flags, "-f", "proto-hex")[1])
    f.write_bytes(f.read_bytes()[:-1])  # one byte short: the loader refuses it, as shardconv does
    assert subprocess.run([str(exe), str(f)], capture_output=True, text=True, check=False).stdout == "invalid\n"


WRITER_MAIN = """
#include "outputs.h"
int main(int argc, char** argv) {
  // a plugin's test would pass what PJRT_Executable_OutputShardings returned; here, the golden header
  return argc == 2 && WritePjrtShardings(argv[1], SHARDCONV_NUM_OUTPUTS, shardconv_output_shardings,
                                         shardconv_output_sharding_sizes) ? 0 : 1;
}
"""


@pytest.mark.parametrize("v3", [False, True])
def test_the_docs_writer_round_trips_through_expect(programs: dict[str, dict[str, object]], v3: bool, tmp_path: Path) -> None:
    program = programs["mlp"]
    module = _module(tmp_path, program, "lowered")
    form = ["--v3"] if v3 else []
    run(module, "-f", "pjrt-header", *form, "-o", str(tmp_path / "outputs.h"))
    (tmp_path / "write.cc").write_text(_doc_block("writer") + WRITER_MAIN)
    exe = tmp_path / "write"
    subprocess.run([_compiler(), "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path), str(tmp_path / "write.cc"),
                    "-o", str(exe)], check=True, capture_output=True)
    returned = tmp_path / "returned.pjrt"
    subprocess.run([str(exe), str(returned)], check=True)
    data = returned.read_bytes()
    assert is_packed(data) and (v3 or data == pack(_blobs(program, "outputs")))
    for module_form in ([], ["--v3"]):
        assert run(module, *module_form, "--expect", str(returned))[:2] == (0, "all 4 outputs match\n")


# ---- the layout ---------------------------------------------------------------------------------


def test_layout_bytes() -> None:
    assert pack([bytes.fromhex("08031a0202044a0108520100"), b""]) == (
        b"PJRTSHD1" + (2).to_bytes(8, "little") + (12).to_bytes(8, "little") + (0).to_bytes(8, "little")
        + bytes.fromhex("08031a0202044a0108520100")
    )
    assert pack([]) == MAGIC + bytes(8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=6))
def test_layout_round_trip(blobs: list[bytes]) -> None:
    assert unpack(pack(blobs)) == blobs


@pytest.mark.parametrize(
    ("data", "pos", "message"),
    [
        (b"PJRTSHD0" + bytes(8), 0, "does not start with the magic 'PJRTSHD1'"),
        (MAGIC + bytes(3), 8, "the count takes 8 bytes, 3 follow the magic"),
        (MAGIC + (2).to_bytes(8, "little") + bytes(8), 8, "2 sizes need 32 bytes, the file has 24"),
        (MAGIC + (1).to_bytes(8, "little") + (4).to_bytes(8, "little") + b"\x08", 25, "the sizes add up to 28 bytes, the file ends early (25)"),
        (pack([b"\x08\x00"]) + b"\x00", 26, "the sizes add up to 26 bytes, the file has bytes after the last message (27)"),
    ],
)
def test_layout_errors_say_where(data: bytes, pos: int, message: str, tmp_path: Path) -> None:
    with pytest.raises(PjrtFileError) as e:
        unpack(data, "r.pjrt")
    assert e.value.pos == pos and e.value.message == f"r.pjrt: byte {pos}: {message} (the pjrt layout: docs/pjrt.md)"
    if data.startswith(MAGIC):  # --expect refuses it as bad input: exit 2, no traceback
        report = tmp_path / "r.pjrt"
        report.write_bytes(data)
        m = tmp_path / "m.mlir"
        m.write_text(NO_ARGS)
        r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(m), "--expect", str(report)],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 2 and f"byte {pos}: {message}" in r.stderr and "Traceback" not in r.stderr


def test_a_broken_message_in_a_sound_file_is_named(tmp_path: Path) -> None:
    report = tmp_path / "r.pjrt"
    report.write_bytes(pack([b"", b"\xff\xff"]))
    m = tmp_path / "m.mlir"
    m.write_text(NO_ARGS)
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(m), "--expect", str(report)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and f"error: {report}: sharding 1: not a serialized OpSharding" in r.stderr


# ---- the CLI's flags ----------------------------------------------------------------------------

MODULE = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func public @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}, %arg1: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b":(1)2}]>}, tensor<8xf32>) {
    return %arg0, %arg1 : tensor<8x8xf32>, tensor<8xf32>
  }
}
"""


def test_v3_names_each_value_on_its_mesh_and_says_which_stay_v2(tmp_path: Path) -> None:
    m = tmp_path / "m.mlir"
    m.write_text(MODULE)
    assert run(str(m), "--v3") == (
        0,
        "{mesh['a'=2,'b'=4], [{'a'}, {'b':(1)2}]}\n{replicated}\n",
        "note: --v3: output 1 has no mesh in the module (an HLO string, or unannotated): written V2\n",
    )
    assert run(str(m), "--parameters", "--v3")[1:] == (
        "{mesh['a'=2,'b'=4], [{'b'}, {}]}\n{devices=[8]<=[8]}\n",
        "note: --v3: parameter 1 has no mesh in the module (an HLO string, or unannotated): written V2\n",
    )
    assert run(str(m), "--parameters") == run(str(m), "--params")
    assert run(str(m))[1] == "{devices=[2,2,2]<=[8] last_tile_dim_replicate}\n{replicated}\n"
    doc = json.loads(run(str(m), "--v3", "-f", "json")[1])
    assert doc["outputs"][0]["hlo"].startswith("{mesh[") and doc["outputs"][0]["proto_hex"].startswith("72")
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(m), "--v3", "-f", "mlir"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "--v3 writes protos and strings" in r.stderr


MESHES = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=4], device_ids=[3, 1, 0, 2, 7, 5, 4, 6]>
  sdy.mesh @other = <["x"=8]>
  func.func public @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b":(2)2, "a"}, {}], replicated={"b":(1)2}>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@other, [{"x":(1)4}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}], unreduced={"a"}>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["p"=2, "q"=4]>, [{"q", "p"}]>}) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<8xf32>
    return %arg0, %0, %arg0, %0 : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>
  }
}
"""


def test_v3_protos_on_device_ids_sub_axes_and_inlined_meshes_are_xlas(tmp_path: Path) -> None:
    """What the jax programs do not cover: mesh device_ids, sub-axes, explicit replicated and unreduced
    axes, a second mesh, an inlined mesh; each V3 message is XLA's serialization of its V3 sharding and
    XLA holds it equal to the V2 message of the same output."""
    m = tmp_path / "m.mlir"
    m.write_text(MESHES)
    v3 = [bytes.fromhex(h) for h in run(str(m), "--v3", "-f", "proto-hex")[1].splitlines()]
    v2 = [bytes.fromhex(h) for h in run(str(m), "-f", "proto-hex")[1].splitlines()]
    assert [repr(_xla(b)) for b in v3] == [
        "{mesh['a'=2,'b'=4], device_ids=(3,1,0,2,7,5,4,6), [{'b':(2)2, 'a'}, {}], replicated={'b':(1)2}}",
        "{mesh['x'=8], [{'x':(1)4}]}",
        "{mesh['a'=2,'b'=4], device_ids=(3,1,0,2,7,5,4,6), [{}, {'b'}], unreduced={'a'}}",
        "{mesh['p'=2,'q'=4], [{'q', 'p'}]}",
    ]
    for a, b in zip(v3, v2, strict=True):
        assert xc.HloSharding.from_string(repr(_xla(a))).to_proto().SerializeToString() == a
        assert _xla(a) == _xla(b) and xla_equal(parse_hlo(repr(_xla(a))), parse_hlo(repr(_xla(b))))


def test_v3_of_a_constraint_read_with_from_constraints_is_closed(tmp_path: Path) -> None:
    """An executable's shardings are final: the open dim of the constraint feeding a result is closed."""
    m = tmp_path / "m.mlir"
    m.write_text(MODULE.replace("return %arg0, %arg1", '%0 = sdy.sharding_constraint %arg1 <@mesh, [{"b", ?}]> : tensor<8xf32>\n    return %arg0, %0'))
    rc, out, _ = run(str(m), "--v3", "--from-constraints")
    assert rc == 0 and out.splitlines()[1] == "{mesh['a'=2,'b'=4], [{'b'}]}"
    assert run(str(m), "--v3")[1].splitlines()[1] == "{replicated}"  # as XLA's converter: no attribute, replicated


def test_v3_string_in_a_module_is_written_v2_by_default(tmp_path: Path) -> None:
    m = tmp_path / "m.mlir"
    m.write_text(MODULE.replace('{devices=[8]<=[8]}', "{mesh['a'=2,'b'=4], [{'b', 'a'}]}"))
    assert run(str(m), "--parameters")[1].splitlines()[1] == "{devices=[8]<=[2,4]T(1,0)}"
    assert run(str(m), "--parameters", "--v3")[1].splitlines()[1] == "{mesh['a'=2,'b'=4], [{'b', 'a'}]}"


def test_v3_refuses_what_v3_cannot_say(tmp_path: Path) -> None:
    m = tmp_path / "m.mlir"
    m.write_text(MODULE.replace('[{"b"}, {}]>', '[{"b"}, {}], unreduced=max{"a"}>'))
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(m), "--parameters", "--v3"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith('error: 3:65: unreduced=max{"a"} would be dropped: jaxlib 0.10.2 predates reduction kinds')
    assert "^" in r.stderr and "try: " in r.stderr


# ---- equality as XLA has it ---------------------------------------------------------------------

# (module, report, the first difference ``--expect`` prints; None: XLA holds them equal), each held to
# jaxlib's HloSharding == by test_equality_is_xlas
PAIRS = [
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", None),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}", None),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['x'=2,'y'=4], [{'x'}, {}]}", None),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['a'=2,'b'=4], [{'a', ?}, {}]}", "dim 0: {axis 0} in the module, {axis 0, ?} in the report (an open dim is not a closed one)"),
    ("{mesh['a'=2,'b'=4], [{'a', ?}, {}]}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", None),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['a'=8], [{'a':(1)2}, {}]}", "mesh axis sizes (XLA compares two V3 meshes axis by axis, not by placement): [2, 4] in the module, [8] in the report"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)), [{'a'}, {}]}", "mesh device order: [0, 1, 2, 3, 4, 5, 6, 7] in the module, [0, 2, 4, 6, 1, 3, 5, 7] in the report"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {}]}", "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}", "unreduced axes: {} in the module, {axis 1} in the report"),
    ("{mesh['a'=2,'b'=4], [{'b'}, {}]}", "{mesh['a'=2,'b'=4], [{'b':(1)2}, {}]}", "dim 0: {axis 1} in the module, {axis 1:(1)2} in the report"),
    ("{mesh['a'=2,'b'=4], [{}, {}]}", "{mesh['a'=2,'b'=2,'c'=2], [{}]}", None),
    ("{mesh['a'=8], [{}, {}]}", "{replicated}", None),
    ("{mesh['a'=2,'b'=2], [{'b'}], manual={'a'}}", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}", None),
    ("{maximal_mesh[device_id=5]}", "{maximal device=5}", None),
    ("{maximal_mesh[device_id=0]}", "{mesh[], [], replicated={}}", "maximal on device 0 in the module but a V3 sharding on a mesh in the report"),
    ("{devices=[2,1]0,1}", "{devices=[2,1]<=[2]}", None),
    ('{devices=[2,1]<=[2] metadata={op_name="x"}}', "{devices=[2,1]<=[2]}", None),
    ("{devices=[2,2]0,1,2,3 last_tile_dim_replicate}", "{devices=[2,2]1,0,3,2 last_tile_dim_replicate}", None),
    ("{devices=[2,2]<=[4] last_tile_dims={manual}}", "{devices=[2,2]<=[4] last_tile_dims={replicated}}", "last_tile_dims: ['manual'] in the module, ['replicated'] in the report"),
    ("{maximal device=0}", "{replicated}", "maximal in the module but replicated in the report"),
    ("{manual}", "{replicated}", "manual in the module but replicated in the report"),
    ("{unknown}", "{replicated}", "unknown in the module but replicated in the report"),
    ("{devices=[2]<=[2] shard_as 1}", "{devices=[2]<=[2]}", "shard group: shard_as 1 in the module, none in the report"),
    ("{devices=[2]<=[2] shard_as 1}", "{devices=[2]<=[2] shard_like 1}", "shard group: shard_as 1 in the module, shard_like 1 in the report"),
    ("{devices=[2,2]<=[4]}", "{devices=[4,1]<=[4]}", "tile dims: [2, 2] in the module, [4, 1] in the report"),
    ("{devices=[2,2]<=[4]}", "{devices=[2,2]<=[2,2]T(1,0)}", "device 1 holds tile [0, 1] per the module but tile [1, 0] per the report"),
    ("{{replicated}, {devices=[2]0,1}}", "{{replicated}, {devices=[2]<=[2]}}", None),
]


@pytest.mark.parametrize(("a", "b", "why"), PAIRS)
def test_equality_is_xlas(a: str, b: str, why: str | None) -> None:
    xla = xc.HloSharding.from_string(a) == xc.HloSharding.from_string(b)
    ha, hb = parse_hlo(a), parse_hlo(b)
    assert xla_equal(ha, hb) is xla and xla_equal(hb, ha) is xla
    assert (why is None) is xla
    assert difference(ha, hb, 4) == why


def _respelled(s: str, how: str) -> str:
    h = parse_hlo(s)
    if how == "v1":
        return str(to_v1(h))
    if how == "v2":
        return str(v3_to_v2(h))
    if how == "renamed":  # every V3 axis renamed alike (the mesh's order unchanged)
        return re.sub(r"'([^']*)'", lambda m: "'r_" + m.group(1).replace(" ", "_") + "'", s)
    return s


@settings(max_examples=300, deadline=None)
@given(single, st.sampled_from(["same", "v1", "v2", "renamed", "other"]), single)
def test_equality_agrees_with_xla_on_generated_pairs(a: str, how: str, other: str) -> None:
    b = other if how == "other" else _respelled(a, how)
    xla = xc.HloSharding.from_string(a) == xc.HloSharding.from_string(b)
    assert xla_equal(parse_hlo(a), parse_hlo(b)) is xla, (a, b)
