"""``shardconv outputs``: the output shardings of a post-Shardy module in the forms a PJRT plugin reports
them, and ``--expect`` to check a plugin's report against the module."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from shardconv.cli.options import usage_error
from shardconv.outputs import writers as w
from shardconv.outputs.dumps import last_dump_in
from shardconv.outputs.hlo_module import after_propagation, read_hlo_module
from shardconv.outputs.notes import findings, notes
from shardconv.outputs.pjrt import c_header, forms, pack
from shardconv.outputs.read import meshes_of, num_devices, reading_of
from shardconv.outputs.reading import devices_of, undecided_error
from shardconv.outputs.rewrite import to_mlir
from shardconv.outputs.source import HLO, module_kind
from shardconv.scan.inputs import sniff_path, stdin_copy
from shardconv.scan.mlir_module import read_module
from shardconv.text.atomic import write_atomic
from shardconv.text.files import os_reason, refuse_special

if TYPE_CHECKING:
    from shardconv.core.model import HloSharding
    from shardconv.outputs.dumps import Dump
    from shardconv.outputs.reading import Reading
    from shardconv.scan.mlir_module import ModuleIR

FORMATS = ("hlo", "tuple", "proto", "proto-hex", "textproto", "pjrt", "pjrt-header", "json", "mlir")
BINARY = ("proto", "pjrt")


_HEAD = 1 << 16  # what is read of a file the scan's sniff finds no IR in, to say what it is


def _read_module(path: str) -> Dump:
    """The module ``outputs`` reads from ``path``: its last (a pass log holds many); ``-`` (stdin) is copied
    to a temporary file first and read as a file is, in bounded memory."""
    if path == "-":
        with stdin_copy() as copy:
            return _read_file(copy, "-")
    return _read_file(path, path)


def _read_file(path: str, shown: str) -> Dump:
    """The last module of the regular file ``path``, called ``shown`` in errors."""
    refuse_special([path], lambda _, why: usage_error(shown, why))

    try:
        if sniff_path(path).skipped:  # not IR (binary, a report, prose): named from its head, not read whole
            with open(path, "rb") as f:
                module_kind(f.read(_HEAD).decode("utf-8", "surrogateescape"))
        return last_dump_in(path)
    except OSError as e:
        raise click.ClickException(f"cannot read {shown}: {e.strerror}") from None


def _emit(data: bytes, out: str | None) -> None:
    if out is None or out == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        write_atomic(out, data)


def _is_folder(out: str) -> bool:
    return out.endswith(("/", os.sep)) or Path(out).is_dir()


@click.command(
    "outputs",
    context_settings={"help_option_names": ["-h", "--help"]},
    short_help="Output shardings of a post-Shardy module, in the form a PJRT plugin reports them.",
)
@click.argument("module", metavar="MODULE")
@click.option("--func", "func", default="main", show_default=True, help="Entry function to read (MLIR).")
@click.option(
    "--format", "-f", "fmt", type=click.Choice(FORMATS), default="hlo", show_default=True, help="Output format."
)
@click.option(
    "-o",
    "--output",
    "out",
    default=None,
    help="Output file (-f proto: a folder of .pb files, or a file of length-prefixed protos).",
)
@click.option(
    "--params", "--parameters", "params", is_flag=True, help="Parameter shardings instead of output shardings."
)
@click.option(
    "--v3",
    "named",
    is_flag=True,
    help="V3 named shardings (OpSharding field 14) for the values the module shards on a mesh; default V2.",
)
@click.option("--strip-body", is_flag=True, help="mlir: replace the body by zero values and drop sdy ops.")
@click.option(
    "--from-constraints",
    is_flag=True,
    help="Unannotated results take the sharding of the constraint feeding them (XLA reports them replicated).",
)
@click.option(
    "--expect",
    "expect",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Compare a plugin's report (a pjrt file, proto folder/stream, hex lines, HLO lines, a tuple string) "
    "as XLA compares shardings; exit 1 on mismatch.",
)
def outputs(
    module: str,
    func: str,
    fmt: str,
    out: str | None,
    params: bool,
    named: bool,
    strip_body: bool,
    from_constraints: bool,
    expect: Path | None,
) -> int:
    """Print the output shardings XLA reads from MODULE (MLIR, or an HLO text module), one per leaf.

    \b
    Sources, as XLA's GetOutputShardings sees them: the module's mhlo.spmd_output_sharding
    (mhlo.spmd_parameters_shardings for --parameters) when present, cross-checked against the
    per-value attributes (a disagreement is a finding: exit 1); else each value's sdy.sharding or
    mhlo.sharding; else replicated, as the SPMD partitioner records it. On one device with no module
    attribute no partitioner runs and PJRT returns none: no sharding is written (a note says so).
    Tuple-typed values count one output per leaf. HLO text: the ENTRY's ROOT sharding and parameter
    shardings (XLA's dump named *.after_shardy-xla.* counts as propagated). MODULE '-' reads stdin.
    A leaf the compile's propagation still chooses (unspecified in a jax lowering; flagged
    allow_spmd_sharding_propagation_to_* in an HLO header before propagation) is refused: exit 2,
    naming the stage to read (JSON: "decided": false). A pass log of many modules is read at its
    last module (a note says which).
    \b
    Shardings are written V2 (tile arrays); --v3 writes the values read from an sdy sharding
    as V3 named shardings on their mesh (OpSharding field 14, as XLA serializes V3); the others
    stay V2 (a note says which). -f pjrt and -f pjrt-header hold exactly what the PJRT
    Shardings extension returns (layouts: docs/pjrt.md); --expect compares as XLA's
    HloSharding == does and prints the first difference of each sharding.
    \b
    Examples:
      shardconv outputs module.mlir                          one HLO string per output
      shardconv outputs module.mlir -f pjrt -o outputs.pjrt  what PJRT_Executable_OutputShardings returns
      shardconv outputs module.mlir -f pjrt-header -o out.h  the same as C arrays (docs/pjrt.md)
      shardconv outputs module.mlir --parameters --v3 -f pjrt -o params.pjrt    V3 named protos
      shardconv outputs module.mlir --expect returned.pjrt   exit 1 unless the plugin returned these
      shardconv outputs module.mlir --expect reported.txt    the same, from HLO lines or hex lines
      shardconv outputs module.mlir -f proto -o out/         out/output_0.pb ... (one file per output)
      shardconv outputs module.mlir -f mlir --strip-body -o optimized.mlir   (PJRT_Executable_OptimizedProgram)
      shardconv outputs before_optimizations.txt --parameters   an HLO text module
    """
    dump = _read_module(module)
    text = dump.text
    what = "parameter" if params else "output"
    if dump.count > 1:
        after = "" if dump.header is None else f", {dump.header}"
        click.echo(f"note: read module {dump.number} of {dump.count}, the last in the file (line {dump.line}{after}); "
                   f"the {dump.skipped} before it not read", err=True)
    if named and fmt == "mlir":
        raise click.UsageError("--v3 writes protos and strings; -f mlir writes mhlo.sharding strings XLA reads as V2")
    ir = None
    meshes = {}
    if module_kind(text) == HLO:
        if fmt == "mlir":
            raise click.UsageError("-f mlir rewrites an MLIR module; this is an HLO text module")

        propagated = dump.count == 1 and after_propagation(Path(module).name)  # XLA's dump names its stage
        reading = read_hlo_module(text, params=params, propagated=propagated)
    else:
        ir = read_module(text, func)
        reading = reading_of(ir, params=params, from_constraints=from_constraints)
        meshes = dict(meshes_of(ir))
    chosen = forms(reading, meshes, named=named)
    for line in notes(reading, what, from_constraints=from_constraints) + findings(reading, what):
        click.echo(line, err=True)
    other = None  # -f mlir writes both sides into the module
    if fmt == "mlir" and ir is not None:
        other = reading_of(ir, params=not params, from_constraints=from_constraints)
    refusal = undecided_error(reading, what)
    if refusal is None and other is not None:
        refusal = undecided_error(other, "output" if params else "parameter")
    if refusal is not None:
        if fmt == "json" and expect is None:  # the document says which leaves, and carries the refusal
            from shardconv.ui.jsonout import dumps

            doc = w.json_document(reading, func=func, params=params, from_constraints=from_constraints,
                                  shardings=list(chosen.shardings), error=refusal, dump=dump)
            _emit((dumps(doc) + "\n").encode("utf-8", "surrogateescape"), out)
            click.echo(f"error: {refusal}", err=True)
            return 2
        raise refusal
    if chosen.kept_v2:
        kept = ", ".join(map(str, chosen.kept_v2))
        which = f"{what} {kept} has" if len(chosen.kept_v2) == 1 else f"{what}s {kept} have"
        click.echo(f"note: --v3: {which} no mesh in the module (an HLO string, or unannotated): written V2", err=True)
    status = 1 if reading.conflicts else 0
    if reading.returns_none and expect is None and fmt in ("hlo", "tuple", "proto-hex", "textproto"):
        return status  # PJRT returns none: the note says so, and no {replicated} stands in for it
    shardings = [] if reading.returns_none else list(chosen.shardings)  # (-f pjrt: N = 0, json: no items)
    if expect is not None:
        from shardconv.outputs.expect import compare, format_mismatches, read_report

        devices = max([1, *(devices_of(h) for h in shardings)]) if ir is None else num_devices(ir, shardings)
        try:
            report = read_report(expect)
        except OSError as e:
            raise click.ClickException(f"cannot read {expect}: {os_reason(e, str(expect))}") from None
        bad = compare(shardings, report, devices, what)
        if bad:
            click.echo(format_mismatches(bad, max(len(shardings), len(report)), what), nl=False)
            return 1
        click.echo(f"all {len(shardings)} {what}s match")
        return status
    if fmt in BINARY and out is None and sys.stdout.isatty():
        raise click.UsageError("binary output would go to a terminal; use -o FILE (-o FOLDER/ for -f proto)")
    if fmt == "proto" and out is not None and _is_folder(out):
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        for i, b in enumerate(w.proto_blobs(shardings)):
            write_atomic(folder / f"{what}_{i}.pb", b)
        return status
    _emit(_render(fmt, reading, shardings, ir, other, what, dump, strip_body=strip_body, params=params, func=func,
                  from_constraints=from_constraints), out)
    return status


def _render(
    fmt: str,
    reading: Reading,
    shardings: list[HloSharding],
    ir: ModuleIR | None,
    other_side: Reading | None,
    what: str,
    dump: Dump,
    *,
    strip_body: bool,
    params: bool,
    func: str,
    from_constraints: bool,
) -> bytes:
    """The bytes ``-f fmt`` writes for ``shardings`` (the leaves of ``reading`` in the form asked for);
    ``other_side`` is the parameters' reading when these are the outputs, and the reverse (-f mlir)."""
    if fmt == "proto":
        return w.length_prefixed(w.proto_blobs(shardings))
    if fmt == "pjrt":
        return pack(w.proto_blobs(shardings))
    if fmt == "mlir" and ir is not None and other_side is not None:
        other = None if other_side.returns_none else list(forms(other_side, {}, named=False).shardings)
        mine = None if reading.returns_none else shardings
        outs, prms = (other, mine) if params else (mine, other)
        # the module alone: without the line breaks that stand for the log's lines before it (their
        # first run, at its start or right after the wrapping module's brace)
        result = to_mlir(ir, outs, prms, strip_body=strip_body).replace("\n" * (dump.line - 1), "", 1)
    elif fmt == "pjrt-header":
        form = "V3 where the module shards on a mesh, else V2" if any(h.mesh_sharding for h in shardings) else "V2"
        result = c_header(w.proto_blobs(shardings), [str(h) for h in shardings], what, form)
    elif fmt == "json":
        from shardconv.ui.jsonout import dumps

        doc = w.json_document(
            reading, func=func, params=params, from_constraints=from_constraints, shardings=shardings, dump=dump
        )
        result = dumps(doc) + "\n"
    elif fmt == "tuple":
        result = w.tuple_string(shardings) + "\n"
    elif fmt == "proto-hex":
        result = w.proto_hex_lines(shardings)
    elif fmt == "textproto":
        result = w.textproto(shardings, what)
    else:
        result = w.hlo_lines(shardings)
    return result.encode("utf-8", "surrogateescape")
