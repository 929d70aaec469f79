"""The oracles of the differential harness (tests/harness/): each takes one compiled generated program
(its Program and the folder make_programs.py wrote) and returns what shardconv got wrong, one line per
difference, each saying which file, which command and the first difference."""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fuzz.mutate import OPERATORS
from support.cli_util import run
from support.explain_util import assert_connected, axis_place, constraints, returned_shardings, returned_values
from support.program_gen import Program
from support.xla_outputs import leaves_of, xla_string

from shardconv.text.brackets import skip_group

import shardconv as sc

Oracle = Callable[[Program, Path], list[str]]
FORMATS = ("hlo", "json", "mlir", "pjrt", "pjrt-header", "proto-hex")


def result_of(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    return doc


MAIN = ".jit_f"  # the program's own module in a dump folder (a second function's is ``jit_g``'s)


def _one(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern))


def decided_stages(folder: Path) -> list[Path]:
    """The program's modules whose shardings propagation has decided: the HLO after Shardy's import/export
    pass, Shardy's output module and XLA's StableHLO of the compiled module."""
    stages = _one(folder, f"xla/*{MAIN}.*after_shardy-xla*.txt")
    stages += _one(folder, f"xla/shardy/*{MAIN}/04.output_module.mlir")
    return stages + _one(folder, "hlo_to_stablehlo.mlir")


def undecided_stages(folder: Path) -> list[Path]:
    """Modules before propagation: jax's lowering and XLA's module before optimizations."""
    return [folder / "lowered.mlir", *_one(folder, f"xla/*{MAIN}.*before_optimizations.txt")]


def ir_files(folder: Path) -> list[Path]:
    """Every HLO / MLIR module the program's compile wrote (not XLA's reports, objects or LLVM IR)."""
    files = [folder / "lowered.mlir", folder / "compiled.txt", *_one(folder, "hlo_to_stablehlo.mlir")]
    files += _one(folder, "xla/**/*.mlir")
    dumps = _one(folder, "xla/*.txt")
    files += [f for f in dumps if f.read_text(encoding="utf-8", errors="replace").startswith("HloModule")]
    return files


# --- outputs ----------------------------------------------------------------------------------------------


def formats_for(stage: Path) -> tuple[str, ...]:
    """Every format of ``outputs``; ``-f mlir`` rewrites MLIR modules only (an HLO text module is refused)."""
    return FORMATS if stage.suffix == ".mlir" else tuple(f for f in FORMATS if f != "mlir")


def _leaf_protos(stdout: str, stdout_bytes: bytes, fmt: str, params: bool) -> list[str]:
    """The serialized OpShardings (hex) one ``outputs -f FMT`` run wrote, in order."""
    if fmt == "proto-hex":  # one line per leaf, empty for {replicated}
        return stdout.removesuffix("\n").split("\n") if stdout else []
    if fmt == "hlo":
        return [_hex_of_hlo(line) for line in stdout.splitlines() if line.strip()]
    if fmt == "json":
        doc = json.loads(stdout)
        return [o["proto_hex"] for o in doc["parameters" if params else "outputs"]]
    if fmt == "mlir":
        attr = "mhlo.spmd_parameters_shardings" if params else "mhlo.spmd_output_sharding"
        m = re.search(re.escape(attr) + r' = (\[(?:"(?:[^"\\]|\\.)*"(?:, )?)*\]|"(?:[^"\\]|\\.)*")', stdout)
        if m is None:
            return []
        text = m.group(1)
        if text.startswith("["):
            return [_hex_of_hlo(s) for s in re.findall(r'"((?:[^"\\]|\\.)*)"', text)]
        return [_hex_of_hlo(leaf) for leaf in leaves_of(text[1:-1])]
    if fmt == "pjrt":
        n = int.from_bytes(stdout_bytes[8:16], "little")
        sizes = [int.from_bytes(stdout_bytes[16 + 8 * i : 24 + 8 * i], "little") for i in range(n)]
        at, out = 16 + 8 * n, []
        for size in sizes:
            out.append(stdout_bytes[at : at + size].hex())
            at += size
        return out
    array = stdout[stdout.index("[] = {") + len("[] = {") : stdout.index("};")]
    elements = re.findall(r'((?:"(?:\\x[0-9a-f]{2})*"\s*)+),', array)  # adjacent C strings make one message
    return [bytes.fromhex(re.sub(r'[\s"]|\\x', "", e)).hex() for e in elements]


def _hex_of_hlo(text: str) -> str:
    """The serialized OpSharding of an HLO sharding string, by XLA; the text itself when it is none."""
    from jax._src.lib import xla_client as xc

    try:
        return str(xc.HloSharding.from_string(text.strip()).to_proto().SerializeToString().hex())
    except Exception:  # noqa: BLE001 - "undecided" or any other word shardconv wrote in its place
        return text.strip()


def _run_outputs(path: Path, fmt: str, params: bool, tmp: Path) -> tuple[int, str, bytes, str]:
    args = ["outputs", str(path), "-f", fmt, *(["--parameters"] if params else [])]
    if fmt == "pjrt":
        target = tmp / "out.pjrt"
        target.unlink(missing_ok=True)
        r = run(*args, "-o", str(target))
        return r.code, r.out, target.read_bytes() if target.exists() else b"", r.err
    r = run(*args)
    return r.code, r.out, b"", r.err


def _first_line(text: str) -> str:
    return next((ln for ln in text.splitlines() if ln.strip()), "")[:200]


def _undecided(p: Program, params: bool) -> set[int]:
    """Leaves nobody decided before propagation: no sharding given, Auto axes, more than one device."""
    if p.explicit or p.n_devices < 2:
        return set()
    specs = [p.x_spec, p.w_spec] if params else p.out_specs
    return {i for i, s in enumerate(specs) if s is None}


_CONSTRAINT_ROOT = re.compile(r"^\s*ROOT \S+ = [^(]*custom-call\(.*custom_call_target=\"Sharding\".*\bsharding=\{")


def _root_constrained(stage: Path) -> bool:
    """Whether the entry of an HLO module returns a sharding constraint itself: its ROOT is the ``Sharding``
    custom call, whose sharding is the result's (the program decided it; propagation cannot change it)."""
    if stage.suffix == ".mlir":
        return False
    entry = stage.read_text(encoding="utf-8").partition("\nENTRY ")[2]
    return any(_CONSTRAINT_ROOT.match(line) for line in entry.split("\n}")[0].splitlines())


def _one_device(folder: Path) -> bool:
    """jax lowered the program for one device (a mesh of many, but no sharding anywhere): nothing is left
    to propagation, and PJRT reports no sharding."""
    return "mhlo.num_partitions = 1 :" in (folder / "lowered.mlir").read_text(encoding="utf-8")


def _pjrt_strings(hexes: list[str]) -> list[str]:
    return [xla_string(bytes.fromhex(h)) for h in hexes]


def outputs_oracle(p: Program, folder: Path) -> list[str]:
    """``outputs`` (and ``--parameters``) in every format equal PJRT's shardings on decided stages; on
    undecided ones the leaves nobody decided are refused (exit 2) or said undecided, never replicated."""
    res = result_of(folder)
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    found: list[str] = []
    for params in (False, True):
        want = res["parameters" if params else "outputs"] or []  # None: PJRT returns none, and no format writes one
        flag = " --parameters" if params else ""
        for stage in decided_stages(folder):
            for fmt in formats_for(stage):
                code, out, data, err = _run_outputs(stage, fmt, params, tmp)
                where = f"outputs {stage.relative_to(folder)} -f {fmt}{flag}"
                if code != 0:
                    found.append(f"{where}: exit {code}: {_first_line(err)}")
                    continue
                got = _leaf_protos(out, data, fmt, params)
                if got != want:
                    found.append(f"{where}: {_diff(got, want)}")
        one_device = _one_device(folder)
        for stage in undecided_stages(folder):
            undecided = set() if one_device else _undecided(p, params)
            if not params and _root_constrained(stage):
                undecided.discard(0)
            for fmt in formats_for(stage):
                code, out, data, err = _run_outputs(stage, fmt, params, tmp)
                where = f"outputs {stage.relative_to(folder)} -f {fmt}{flag}"
                # -f mlir writes the other side too
                both = fmt == "mlir" and not one_device and bool(_undecided(p, not params))
                if code == 2 and (undecided or both):
                    continue
                if code != 0:
                    found.append(f"{where}: exit {code}: {_first_line(err)}")
                    continue
                if undecided and "undecided" not in out:
                    got_u = _leaf_protos(out, data, fmt, params)
                    shown = [_shown(got_u[i]) for i in sorted(undecided) if i < len(got_u)]
                    said = f"written as {shown}" if shown else "nothing written for them"
                    found.append(f"{where}: leaves {sorted(undecided)} are left to propagation; exit 0, {said}")
                    continue
                got = _leaf_protos(out, data, fmt, params)
                decided = [i for i in range(len(want)) if i not in undecided]
                bad = [i for i in decided if i >= len(got) or got[i] != want[i]]
                if bad:
                    shown = [got[i] if i < len(got) else "-" for i in bad]
                    found.append(f"{where}: {_diff(shown, [want[i] for i in bad])}")
    return found


def _shown(h: str) -> str:
    try:
        return xla_string(bytes.fromhex(h))
    except ValueError:
        return h


def _diff(got: list[str], want: list[str]) -> str:
    if len(got) != len(want):
        return f"{len(got)} leaves {[_shown(g) for g in got]}, PJRT has {len(want)} {[_shown(w) for w in want]}"
    i = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
    return f"leaf {i}: {_shown(got[i])} (hex {got[i]}), PJRT: {_shown(want[i])} (hex {want[i]})"


# --- check ------------------------------------------------------------------------------------------------


def check_oracle(p: Program, folder: Path) -> list[str]:
    """``check --mesh MESH`` is clean (exit 0) on every module the compile wrote, and on the folder."""
    found = []
    for path in [*ir_files(folder), folder / "xla", folder / "verbose"]:
        r = run("check", str(path), "--mesh", p.mesh_flag, "-q")
        if r.code != 0:
            said = _first_line(r.out + r.err)
            found.append(f"check {path.relative_to(folder)} --mesh {p.mesh_flag}: exit {r.code}: {said}")
    return found


# --- trace ---------------------------------------------------------------------------------------------

_HLO_TYPE = re.compile(r"^([a-z]+[0-9]*)\[([0-9,]*)\]")
_MLIR_TYPE = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z]+[0-9]*)>")
_HLO_ELEMENT = {"s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64", "pred": "i1"}


def value_type(folder: Path, side: dict[str, Any], value: str) -> tuple[str, int] | None:
    """(element type, rank) of ``value`` where the dump defines it (the side's file and line): an HLO
    instruction's shape or an MLIR op's result type; None for arguments, results and anything else.
    Partitioning changes shapes but never the rank or the element type."""
    if side.get("file") is None or side.get("line") is None or ":" in value:
        return None
    path = Path(side["file"]) if Path(side["file"]).is_absolute() else folder / side["file"]
    lines = _lines(path)
    line = lines[side["line"] - 1] if 0 < side["line"] <= len(lines) else ""
    arg = re.fullmatch(r"arg\[(\d+)\]", value)
    if arg:  # an MLIR signature's %argN: TYPE, or an HLO parameter(N) instruction
        m = re.search(rf"%arg{arg.group(1)}: ", line) or re.search(rf"= (?=\S+ parameter\({arg.group(1)}\))", line)
    elif value.startswith("%"):
        m = re.search(rf"(?:^|\s){re.escape(value)} = ", line)
    else:
        return None
    if m is None:
        return None
    rest = line[m.end():]
    hlo = _HLO_TYPE.match(rest)
    if hlo:
        dims = hlo.group(2)
        return _HLO_ELEMENT.get(hlo.group(1), hlo.group(1)), len(dims.split(",")) if dims else 0
    types = _MLIR_TYPE.findall(rest)
    if not types or rest.lstrip().startswith("sdy.manual_computation"):
        return None
    dims, element = types[0] if arg else types[-1]
    return element, dims.count("x")


_LINES: dict[Path, list[str]] = {}


def _lines(path: Path) -> list[str]:
    if path not in _LINES:
        _LINES[path] = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
    return _LINES[path]


def _pairing(folder: Path, command: str, doc: dict[str, Any]) -> list[str]:
    """Changes that pair two values of different element types or ranks."""
    found = []
    for c in doc["changes"]:
        before, after = c.get("before"), c.get("after")
        if not before or not after:
            continue
        tb, ta = value_type(folder, before, c["value"]), value_type(folder, after, c["value"])
        if tb is not None and ta is not None and tb != ta:
            found.append(f"{command}: {c['value']} at {c.get('pass', '')} pairs a {tb} value "
                         f"({before['file']}:{before['line']}) with a {ta} one ({after['file']}:{after['line']})")
    return found


def _moves(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Placement changes between two decided placements (not a sharding gained or lost)."""
    return [c for c in doc["changes"] if c["kind"] == "placement" and (c.get("before") or {}).get("text")
            and (c.get("after") or {}).get("text")]


def trace_oracle(p: Program, folder: Path) -> list[str]:
    """``trace`` on the per-pass folder and ``diff`` between stages pair only values of one element type
    and rank; with no move between two decided placements trace exits 0, and a program that asks for
    no placement change has no such move."""
    found = []
    r = run("trace", str(folder / "xla"), "--format", "json")
    if r.code not in (0, 1):
        return [f"trace xla/: exit {r.code}: {_first_line(r.err)}"]
    doc = json.loads(r.out)
    found += _pairing(folder, "trace xla/", doc)
    moves = _moves(doc)
    if not moves and r.code != 0:
        found.append(f"trace xla/: exit {r.code} with no move between decided placements: {doc['summary']}")
    if not p.reshards:
        for c in moves[:3]:
            before, after = c["before"]["text"], c["after"]["text"]
            found.append(f"trace xla/: a move of {c['value']} at {c['pass']}: {before} -> {after}")
    pairs = [(folder / "lowered.mlir", f) for f in _one(folder, f"xla/shardy/*{MAIN}/04.output_module.mlir")]
    pairs += list(zip(_one(folder, f"xla/*{MAIN}.*before_optimizations.txt"),
                      _one(folder, f"xla/*{MAIN}.*after_shardy-xla*.txt")))
    for a, b in pairs:
        command = f"diff {a.relative_to(folder)} {b.relative_to(folder)}"
        d = run("diff", str(a), str(b), "--format", "json")
        if d.code not in (0, 1):
            found.append(f"{command}: exit {d.code}: {_first_line(d.err)}")
            continue
        found += _pairing(folder, command, json.loads(d.out))
    return found


# --- explain ----------------------------------------------------------------------------------------------


def _split_top(text: str) -> list[str]:
    """``text`` split at its top-level commas (outside brackets and strings)."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, ch in enumerate(text):
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


_ORIGINS = re.compile(r"sdy\.sharding_origins = \{([^}]*)\}")
_PAIR = re.compile(r'"?([\w.]+(?::\(\d+\)\d+)?)"? = "([^"]*)"')  # an axis or a sub-axis ("a:(1)2")
_SHARDING = re.compile(r"#sdy\.sharding<@\w+, \[[^\]]*\][^>]*>")


def recorded_origins(stage: Path) -> Iterator[tuple[str, int, dict[str, str], str]]:
    """(``arg``/``result``, index, {axis: origin label}, sharding) of each entry argument and result whose
    ``sdy.sharding_origins`` the dump records, and of each result without them that returns the value
    another result with them returns: Shardy's record of a result is that of the value it returns,
    printed on one of the results returning it (``expected_origins``), its ``output: k`` as ``self``."""
    entries = list(_signature_origins(stage))
    yield from entries
    returned = returned_values(stage)
    recorded = {k: (origins, sharding) for kind, k, origins, sharding in entries if kind == "result"}
    for k, sharding in _result_shardings(stage).items():
        other = next((j for j in recorded if j != k and j < len(returned) and k < len(returned)
                      and returned[j] == returned[k]), None)
        if k in recorded or other is None:
            continue
        of_value = {a: f"output: {other}" if label == "self" else label for a, label in recorded[other][0].items()}
        yield "result", k, {a: "self" if label == f"output: {k}" else label for a, label in of_value.items()}, sharding


def _signature_origins(stage: Path) -> Iterator[tuple[str, int, dict[str, str], str]]:
    """(``arg``/``result``, index, {axis: origin label}, sharding) of each entry argument and result whose
    ``sdy.sharding_origins`` the signature prints."""
    for kind, k, item in _signature_items(stage):
        m = _ORIGINS.search(item)
        sharding = _SHARDING.search(item)
        if m and sharding:
            yield kind, k, dict(_PAIR.findall(m.group(1))), sharding.group(0)


def _result_shardings(stage: Path) -> dict[int, str]:
    """Each entry result's sharding, by index (those the signature shards)."""
    found = ((k, _SHARDING.search(item)) for kind, k, item in _signature_items(stage) if kind == "result")
    return {k: m.group(0) for k, m in found if m}


def _signature_items(stage: Path) -> Iterator[tuple[str, int, str]]:
    """(``arg``/``result``, index, its text) of each entry of ``@main``'s signature."""
    lines = stage.read_text(encoding="utf-8").splitlines()
    line = next(ln for ln in lines if re.search(r"func\.func (?:public )?@main\(", ln))
    head = line[line.index("@main(") + len("@main(") :]
    depth, cut = 1, 0
    for i, ch in enumerate(head):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            cut = i
            break
    args, rest = head[:cut], head[cut + 1 :]
    results = rest[rest.index("->") + 2 : rest.rindex("{")].strip()
    if results.startswith("("):
        results = results[1:-1]
    for kind, text in (("arg", args), ("result", results)):
        for k, item in enumerate(_split_top(text)):
            yield kind, k, item


def explain_oracle(p: Program, folder: Path) -> list[str]:
    """``explain`` names, for each entry argument and result, the origin of each axis that Shardy's
    ``sdy.sharding_origins`` records, read from the file and from stdin alike."""
    found = []
    for stage in _one(folder, "verbose/shardy/*/02.after_propagation.mlir"):
        text = stage.read_text(encoding="utf-8")
        for kind, k, origins, sharding in recorded_origins(stage):
            where = f"explain {stage.relative_to(folder)} --{kind} {k}"
            r = run("explain", str(stage), f"--{kind}", str(k), "--format", "json")
            if r.code != 0:
                found.append(f"{where}: exit {r.code}: {_first_line(r.err)}")
                continue
            (e,) = json.loads(r.out)["explanations"]
            if e.get("sharding") != sharding:
                said = e.get("sharding")
                found.append(f"{where}: explains {e.get('value')} sharded {said}, {kind} {k} is {sharding}")
            found += _disconnected(where, stage, kind, k)
            got = {a["axis"]: a["origin"]["label"] for a in e["axes"] if a.get("origin")}
            recorded = expected_origins(stage, kind, k, origins, e.get("sharding") or "")
            if got.keys() != recorded.keys() or any(got[a] not in labels for a, labels in recorded.items()):
                shown = {a: " or ".join(sorted(labels)) for a, labels in recorded.items()}
                found.append(f"{where}: origins {got}, Shardy recorded {shown} (sharding {e.get('sharding')})")
            s = run("explain", "-", f"--{kind}", str(k), "--format", "json", input=text)
            if s.code != 0:
                found.append(f"{where} (stdin): exit {s.code}: {_first_line(s.err)}")
                continue
            (es,) = json.loads(s.out)["explanations"]
            if [_beside(a) for a in es["axes"]] != [_beside(a) for a in e["axes"]]:
                found.append(f"{where}: from stdin {_axes(es)}, from the file {_axes(e)}")
    return found


def recorded_by_axis(origins: dict[str, str], held: set[str]) -> dict[str, set[str]]:
    """Per axis on the value's dims, the origins Shardy records for it: its own, else its sub-axes' (Shardy
    records a whole axis that a reshape merged by its parts, ``"a:(1)2"`` and ``"a:(2)2"``). Shardy also
    records axes the value does not hold: those are left out."""
    found: dict[str, set[str]] = {}
    for axis, label in origins.items():
        whole = axis.partition(":")[0]
        if axis in held:
            found[axis] = {label}
        elif whole in held and whole not in origins:
            found.setdefault(whole, set()).add(label)
    return found


def expected_origins(stage: Path, kind: str, k: int, origins: dict[str, str], sharding: str) -> dict[str, set[str]]:
    """``recorded_by_axis`` of an entry argument or result, read as Shardy writes a result's: it keeps them
    on the value the result returns (source_sharding.cc: seeded with every out_sharding returning it,
    first result first, and printed on one result returning it, ``output: k`` as ``self``), so an axis
    that value does not hold where the result does (the dim, and the axes major to it there) did not
    cross the return: the result holds it as its out_sharding gave it (what the executable returns), its
    own, ``self``. Likewise an argument's axis recorded from a constraint that takes the argument and does
    not hold the axis there (jax 0.10.2 records one that holds no axis): the argument's own sharding."""
    recorded = recorded_by_axis(origins, _dim_axes(sharding))
    if kind == "arg":
        named = constraints(stage)
        return {a: {"self"} if len(labels) == 1 and _lacks(named.get(next(iter(labels))), f"%arg{k}", sharding, a)
                else labels for a, labels in recorded.items()}
    returned = (returned_shardings(stage)[k:] or [None])[0]
    if returned is None:
        return recorded
    return {a: labels if axis_place(sharding, a) == axis_place(returned, a) else {"self"}
            for a, labels in recorded.items()}


def _lacks(constraint: tuple[str, str] | None, arg: str, sharding: str, axis: str) -> bool:
    """Whether a constraint (the value it takes, its sharding) takes ``arg`` and does not hold ``axis`` where
    ``arg``'s ``sharding`` does."""
    if constraint is None or constraint[0] != arg:
        return False
    return axis_place(constraint[1], axis) != axis_place(sharding, axis)


def _disconnected(where: str, stage: Path, kind: str, k: int) -> list[str]:
    """Axes whose path does not run from their origin to the value, step after step (explain_util)."""
    (e,) = sc.explain_path(str(stage), **{kind: k})  # type: ignore[arg-type]
    found = []
    for a in e.axes:
        try:
            assert_connected(a, e.value)
        except AssertionError:
            found.append(f"{where}: the path of {a.axis} does not run from {a.origin.value} to {e.value}: "
                         + " ; ".join(f"{s.source}->{s.target} ({s.op}, step {s.step})" for s in a.path))
    return found


def _dim_axes(sharding: str) -> set[str]:
    """The axis names on the dims of an sdy sharding (not its replicated or unreduced axes)."""
    if "[" not in sharding:
        return set()
    dims = sharding[sharding.index("[") : skip_group(sharding, sharding.index("["))]
    return set(re.findall(r'"([^"]+)"', dims))


def _beside(a: dict[str, Any]) -> dict[str, Any]:
    """An axis's explanation as standard input can give it: a sharding group's members are read from the
    stage beside the file (``01.before_propagation.mlir``), which stdin has none of, so an origin through a
    group is the group alone there (docs/explain.md), and its path starts at the group's member."""
    origin = a.get("origin") or {}
    if origin.get("group") is None:
        return a
    return {"axis": a["axis"], "dim": a.get("dim"), "group": origin["group"], "label": origin.get("label")}


def _axes(e: dict[str, Any]) -> str:
    return "; ".join(f"{a['axis']}<-{(a.get('origin') or {}).get('label')} ({len(a['path'])} steps)" for a in e["axes"])


# --- conversions ------------------------------------------------------------------------------------------


def conversion_oracle(p: Program, folder: Path) -> list[str]:
    """``from_jax`` -> ``to_hlo`` equals jax's ``NamedSharding._to_xla_hlo_sharding(ndim)`` and ``to_jax``
    of it is ``is_equivalent_to`` the original, for every NamedSharding the program names (computed in the
    child, which holds the devices)."""
    found = []
    for row in result_of(folder)["conversions"]:
        if "error" in row:
            found.append(f"from_jax/to_hlo/to_jax({row['jax']}): {row['error']}")
            continue
        if row["shardconv"] != row["xla"]:
            found.append(f"to_hlo(from_jax({row['jax']}, ndim={row['ndim']})) = {row['shardconv']}, XLA: {row['xla']}")
        if not row["equivalent"]:
            found.append(f"to_jax(from_jax({row['jax']})) is not equivalent to it")
    return found


# --- scan -------------------------------------------------------------------------------------------------

_TEXTUAL = {
    sc.SiteKind.HLO: (r"\bsharding=\{", r'\bmhlo\.sharding = "'),
    sc.SiteKind.SDY_SHARDING: (r"#sdy\.sharding<",),
    sc.SiteKind.SDY_PER_VALUE: (r"#sdy\.sharding_per_value<",),
    sc.SiteKind.SDY_MESH: (r"\bsdy\.mesh @",),
    sc.SiteKind.SDY_SHARDING_BARE: (r"\bsdy\.(?:sharding_constraint|reshard) %",),
}


def scan_oracle(p: Program, folder: Path) -> list[str]:
    """``scan_path`` finds at least as many shardings of each kind as a plain textual count finds."""
    found = []
    for path in ir_files(folder):
        text = path.read_text(encoding="utf-8")
        counts: dict[Any, int] = {}
        for site in sc.scan_path(str(path)):
            counts[site.kind] = counts.get(site.kind, 0) + 1
        for kind, patterns in _TEXTUAL.items():
            textual = sum(len(re.findall(pat, text)) for pat in patterns)
            seen = counts.get(kind, 0)
            if seen < textual:
                found.append(f"scan_path({path.relative_to(folder)}): {seen} {kind.value} sites, text has {textual}")
    return found


# --- mutations --------------------------------------------------------------------------------------------


def _occurrences(path: Path, mesh: str) -> tuple[int, int]:
    """(exit code, sharding values found) of ``check --mesh MESH --format json PATH``."""
    r = run("check", str(path), "--mesh", mesh, "--format", "json")
    if r.code == 2 or not r.out.strip():
        return r.code, 0
    doc = json.loads(r.out)
    return r.code, sum(f["occurrences"] for f in doc["files"])


_OPENERS = {sc.SiteKind.COLLECTIVE_MESH: b"mesh["}  # `replica_groups=` alone announces a device list, no value


def _keyword_spans(path: Path, data: bytes) -> list[tuple[int, int]]:
    """Each value's keyword (``sharding=``, ``num_partitions=``, ``xla.sdy.manual_axes=``,
    ``replica_groups=mesh[``...) in ``data`` (``path``'s bytes), from the byte before it (``,Zsharding=`` is
    no attribute) to where the value starts: a mutant that changes any of it no longer holds the value."""
    spans = []
    for site in sc.scan_path(str(path)):
        keyword = data.rfind(site.attribute.encode(), 0, site.start)
        if keyword != -1:
            spans.append((keyword - 1, site.start + len(_OPENERS.get(site.kind, b""))))
    return spans


def _values_lost(spans: list[tuple[int, int]], data: bytes, how: str, mutant: bytes) -> int:
    """The values whose keyword span (``_keyword_spans``) ``mutant`` no longer holds: the one byte a flip
    changed falls in it, or a cut leaves it out (in part or whole)."""
    if how == "byte flipped":
        at = next((i for i, (a, b) in enumerate(zip(data, mutant)) if a != b), len(data))
        return sum(start <= at < end for start, end in spans)
    if how.startswith("cut at byte"):
        return sum(end > len(mutant) for _, end in spans)
    return 0


def mutants(data: bytes, rng: random.Random) -> Iterator[tuple[str, bytes]]:
    """The file cut at a random place, with a byte flipped, and with a non-UTF-8 byte added."""
    text = data.decode("utf-8", "surrogateescape")
    i = rng.randrange(len(data) + 1)
    yield f"cut at byte {i}", data[:i]
    yield "byte flipped", OPERATORS["flip"](rng, text).encode("utf-8", "surrogateescape")
    j = rng.randrange(len(data) + 1)
    yield f"0xff added at byte {j}", data[:j] + b"\xff" + data[j:]


def mutation_oracle(p: Program, folder: Path, per_file: int = 2) -> list[str]:
    """A dump cut, with a byte flipped or a non-UTF-8 byte added is never "clean" with fewer values found,
    checked in a folder beside an intact file (a file the gate skips must not pass as clean)."""
    rng = random.Random(p.seed)
    files = ir_files(folder)
    picked = rng.sample(files, min(4, len(files)))
    found = []
    out = folder / "mutants"
    out.mkdir(exist_ok=True)
    _, lowered = _occurrences(folder / "lowered.mlir", p.mesh_flag)
    for path in picked:
        code, base = _occurrences(path, p.mesh_flag)
        if code != 0:
            continue  # the check oracle reports it
        data = path.read_bytes()
        spans = _keyword_spans(path, data)
        for n in range(per_file):
            for k, (how, mutant) in enumerate(mutants(data, rng)):
                beside = out / f"{path.stem}.{n}.{k}"  # checked as a folder, beside an intact file
                beside.mkdir(exist_ok=True)
                shutil.copy(folder / "lowered.mlir", beside / "intact.mlir")
                (beside / path.name).write_bytes(mutant)
                mcode, seen = _occurrences(beside, p.mesh_flag)
                # a flip that turns a keyword into another word (`s#arding=`), or a cut before it, leaves the
                # text itself a value fewer: only values the mutant's text still holds are owed
                lost = _values_lost(spans, data, how, mutant)
                if mcode == 0 and seen < base + lowered - lost:
                    found.append(f"check {path.relative_to(folder)} {how}: clean with {seen} values beside an intact "
                                 f"file, the two intact files have {base + lowered} (kept in {beside})")
    return found


ORACLES: dict[str, Oracle] = {
    "outputs": outputs_oracle, "check": check_oracle, "trace": trace_oracle, "explain": explain_oracle,
    "conversions": conversion_oracle, "scan": scan_oracle, "mutations": mutation_oracle,
}
