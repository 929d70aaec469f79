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
@click.argument("module", metavar="MODULE.mlir")
@click.option("--func", "func", default="main", show_default=True, help="Entry function to read.")
@click.option("--format", "-f", "fmt", type=click.Choice(FORMATS), default="hlo", show_default=True, help="Output format.")
@click.option("-o", "--output", "out", default=None, help="Output file (for proto: a folder, or a file of length-prefixed protos).")
@click.option("--params", is_flag=True, help="Parameter shardings instead of output shardings.")
@click.option("--strip-body", is_flag=True, help="mlir: replace the body by zero constants and drop sdy ops.")
@click.option("--expect", "expect", type=click.Path(exists=True, path_type=Path), default=None,
              help="Compare a plugin's report (HLO lines, tuple string, proto folder/stream, hex lines); exit 1 on mismatch.")
def outputs(module: str, func: str, fmt: str, out: str | None, params: bool, strip_body: bool, expect: Path | None) -> int:
    """Read the entry function of MODULE (sdy shardings) and print its output shardings.

    \b
    Sources, in order: the result's sdy.sharding (or mhlo.sharding); the sharding_constraint,
    reshard or manual_computation out_shardings feeding the return; else replicated.
    \b
    Examples:
      shardconv outputs module.mlir                      one HLO string per output
      shardconv outputs module.mlir -f proto -o out/     out/output_0.pb ... (PJRT_Executable_OutputShardings)
      shardconv outputs module.mlir -f mlir --strip-body -o optimized.mlir   (PJRT_Executable_OptimizedProgram)
      shardconv outputs module.mlir --expect reported.txt    exit 1 if the plugin reports something else
    """
    from shardconv.outputs import read as rd
    from shardconv.outputs import writers as w
    from shardconv.outputs.module import read_module

    text = _read_module(module)
    ir = read_module(text, func)
    items = rd.shardings_of(ir, params=params)
    shardings = [o.hlo for o in items]
    what = "parameter" if params else "output"
    for o in items:
        if o.open:
            click.echo(
                f"note: {what} {o.index} comes from a sharding with open dims ({o.source}); "
                "Shardy propagation may still shard it further",
                err=True,
            )
    if expect is not None:
        from shardconv.outputs.expect import compare, format_mismatches, read_report

        bad = compare(shardings, read_report(expect), rd.num_devices(ir, shardings))
        if bad:
            click.echo(format_mismatches(bad, max(len(shardings), len(bad))), nl=False)
            return 1
        click.echo(f"all {len(shardings)} {what}s match")
        return 0
    if fmt == "proto":
        blobs = w.proto_blobs(shardings)
        if out is not None and _is_folder(out):
            folder = Path(out)
            folder.mkdir(parents=True, exist_ok=True)
            for i, b in enumerate(blobs):
                write_atomic(folder / f"{what}_{i}.pb", b)
            return 0
        if out is None and sys.stdout.isatty():
            raise click.UsageError("binary protos would go to a terminal; use -o FILE, -o FOLDER/ or -f proto-hex")
        _emit(w.length_prefixed(blobs), out)
        return 0
    if fmt == "mlir":
        from shardconv.outputs.rewrite import to_mlir

        outs = shardings if not params else [o.hlo for o in rd.shardings_of(ir)]
        prms = shardings if params else [o.hlo for o in rd.shardings_of(ir, params=True)]
        result = to_mlir(ir, outs, prms, strip_body=strip_body)
    elif fmt == "json":
        from shardconv.ui.jsonout import dumps

        result = dumps(w.json_document(items, func=func, params=params, text=text)) + "\n"
    elif fmt == "tuple":
        result = w.tuple_string(shardings) + "\n"
    elif fmt == "proto-hex":
        result = w.proto_hex_lines(shardings)
    elif fmt == "textproto":
        result = w.textproto(shardings, what)
    else:
        result = w.hlo_lines(shardings)
    _emit(result.encode("utf-8", "surrogateescape"), out)
    return 0
