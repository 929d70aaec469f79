"""``shardconv outputs``: the output shardings of a post-Shardy module in the forms a PJRT plugin reports
them, and ``--expect`` to check a plugin's report against the module."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from shardconv.text.atomic import write_atomic

FORMATS = ("hlo", "tuple", "proto", "proto-hex", "textproto", "json", "mlir")


def _read_module(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    from shardconv.text.files import not_regular_reason

    why = not_regular_reason(path)
    if why is not None:
        raise click.UsageError(f"{path}: {why}")
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror}") from None


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
    help="Output file (for proto: a folder, or a file of length-prefixed protos).",
)
@click.option("--params", is_flag=True, help="Parameter shardings instead of output shardings.")
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
    help="Compare a plugin's report (HLO lines, tuple string, proto folder/stream, hex lines); exit 1 on mismatch.",
)
def outputs(
    module: str,
    func: str,
    fmt: str,
    out: str | None,
    params: bool,
    strip_body: bool,
    from_constraints: bool,
    expect: Path | None,
) -> int:
    """Print the output shardings XLA reads from MODULE (MLIR, or an HLO text module), one per leaf.

    \b
    Sources, as XLA's GetOutputShardings sees them: the module's mhlo.spmd_output_sharding
    (mhlo.spmd_parameters_shardings for --params) when present, cross-checked against the
    per-value attributes (a disagreement is a finding: exit 1); else each value's sdy.sharding or
    mhlo.sharding; else replicated. Tuple-typed values count one output per leaf. HLO text:
    the ENTRY's ROOT sharding and parameter shardings.
    \b
    Examples:
      shardconv outputs module.mlir                      one HLO string per output
      shardconv outputs module.mlir -f proto -o out/     out/output_0.pb ... (PJRT_Executable_OutputShardings)
      shardconv outputs module.mlir -f mlir --strip-body -o optimized.mlir   (PJRT_Executable_OptimizedProgram)
      shardconv outputs module.mlir --expect reported.txt    exit 1 if the plugin reports something else
      shardconv outputs before_optimizations.txt --params    an HLO text module
    """
    from shardconv.outputs import writers as w
    from shardconv.outputs.hlo_module import read_hlo_module
    from shardconv.outputs.notes import findings, notes
    from shardconv.outputs.source import HLO, module_kind

    text = _read_module(module)
    what = "parameter" if params else "output"
    ir = None
    if module_kind(text) == HLO:
        if fmt == "mlir":
            raise click.UsageError("-f mlir rewrites an MLIR module; this is an HLO text module")
        reading = read_hlo_module(text, params=params)
    else:
        from shardconv.outputs.module import read_module
        from shardconv.outputs.read import reading_of

        ir = read_module(text, func)
        reading = reading_of(ir, params=params, from_constraints=from_constraints)
    for line in notes(reading, what, from_constraints=from_constraints) + findings(reading, what):
        click.echo(line, err=True)
    status = 1 if reading.conflicts else 0
    if reading.reads_none and expect is None and fmt in ("hlo", "tuple", "proto-hex", "textproto"):
        return status  # XLA reads none: the note says so, and no {replicated} stands in for it
    shardings = reading.shardings
    if expect is not None:
        from shardconv.outputs.expect import compare, format_mismatches, read_report
        from shardconv.outputs.read import devices_of, num_devices

        devices = max([1, *(devices_of(h) for h in shardings)]) if ir is None else num_devices(ir, shardings)
        bad = compare(shardings, read_report(expect), devices)
        if bad:
            click.echo(format_mismatches(bad, max(len(shardings), len(bad))), nl=False)
            return 1
        click.echo(f"all {len(shardings)} {what}s match")
        return status
    if fmt == "proto":
        blobs = w.proto_blobs(shardings)
        if out is not None and _is_folder(out):
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
            for i, b in enumerate(blobs):
                write_atomic(folder / f"{what}_{i}.pb", b)
            return status
        if out is None and sys.stdout.isatty():
            raise click.UsageError("binary protos would go to a terminal; use -o FILE, -o FOLDER/ or -f proto-hex")
        _emit(w.length_prefixed(blobs), out)
        return status
    if fmt == "mlir" and ir is not None:
        from shardconv.outputs.read import reading_of
        from shardconv.outputs.rewrite import to_mlir

        other = reading_of(ir, params=not params, from_constraints=from_constraints).shardings
        outs, prms = (other, shardings) if params else (shardings, other)
        result = to_mlir(ir, outs, prms, strip_body=strip_body)
    elif fmt == "json":
        from shardconv.ui.jsonout import dumps

        doc = w.json_document(reading, func=func, params=params, from_constraints=from_constraints)
        result = dumps(doc) + "\n"
    elif fmt == "tuple":
        result = w.tuple_string(shardings) + "\n"
    elif fmt == "proto-hex":
        result = w.proto_hex_lines(shardings)
    elif fmt == "textproto":
        result = w.textproto(shardings, what)
    else:
        result = w.hlo_lines(shardings)
    _emit(result.encode("utf-8", "surrogateescape"), out)
    return status
