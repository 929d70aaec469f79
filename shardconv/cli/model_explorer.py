"""``shardconv model-explorer DUMP``: Model Explorer's node data for the graph it draws of an MLIR dump:
per op, its sharding on the global mesh, the devices per shard and ``check``'s findings there. Needs the
``model-explorer`` extra (its node data builder writes the file; jax's MLIR parser walks the ops)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from shardconv.check.config import ConfigFinder, options_of, resolve
from shardconv.check.engine import check_text
from shardconv.cli.node_data import node_texts, ops_of
from shardconv.cli.options import file_error, usage_error
from shardconv.formats.detect import parse_mesh_option
from shardconv.scan.api import scan_text
from shardconv.text.files import refuse_special

if TYPE_CHECKING:
    from shardconv.cli.node_data import NodeText

EPILOG = """\b
DUMP is one MLIR module as text (a jax lowering, an XLA or Shardy stage dump).
Load DUMP in Model Explorer, then OUT with "Load node data": each node shows its
sharding on the global mesh (--mesh, else [tool.shardconv] mesh, else the
module's own mesh) as the partition spec jax would write, how many devices hold
each shard, and what shardconv check finds there (red: an error, amber: a warning).

\b
Examples:
  shardconv model-explorer lowered.mlir -o lowered.shardings.json
  shardconv model-explorer 02.after_propagation.mlir --mesh data=2,model=4 -o nd.json
  model-explorer lowered.mlir --node_data_paths=lowered.shardings.json
"""

COLORS = {"error": "#f4a6a6", "warning": "#fbd38d"}  # a node's background by its worst finding
NAME = "shardconv shardings"  # the node data's name in Model Explorer's side panel
NEEDS = "shardconv model-explorer needs Model Explorer's package and jax: pip install 'shardconv[model-explorer]'"


@click.command(epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("dump", metavar="DUMP")
@click.option("--output", "-o", "out", metavar="OUT", help="Write the node data here (default: standard output).")
@click.option("--mesh", "-m", "mesh_text", metavar="MESH",
              help="The global mesh (e.g. batch=2,model=4); default: [tool.shardconv] mesh, else the module's.")
def model_explorer(dump: str, out: str | None, mesh_text: str | None) -> int:
    """Model Explorer node data for an MLIR dump: shardings, devices per shard, findings per op."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # (jaxlib's own info lines on stderr)

    refuse_special([dump], usage_error)
    builder()  # (before any work: a missing extra is said first)
    try:
        with open(dump, "rb") as f:
            data = f.read()
    except OSError as e:
        raise file_error(e, dump) from None
    texts = node_data(data, dump, mesh_text)
    rendered = to_json(texts)
    if out is None:
        sys.stdout.write(rendered)
        return 0
    from shardconv.text.atomic import write_atomic

    try:
        write_atomic(out, rendered.encode("utf-8"))
    except OSError as e:
        raise file_error(e, out) from None
    nodes = sum(len(v) for v in texts.values())
    click.echo(f"{out}: {nodes} node(s) in {len(texts)} graph(s)", err=True)
    return 0


def node_data(data: bytes, path: str, mesh_text: str | None) -> dict[str, dict[str, NodeText]]:
    """The node texts of the dump ``data`` (read from ``path``: its config applies)."""
    opts = options_of(resolve(ConfigFinder().for_path(path).for_file(path), {}))
    if mesh_text:  # (checked on it too, as ``shardconv check --mesh`` is)
        opts = replace(opts, mesh=parse_mesh_option(mesh_text))
    mesh = opts.mesh
    try:
        from shardconv.backends._jax_private import function_ops

        walked = function_ops(data.decode("utf-8", "surrogateescape"))
    except ImportError:
        raise click.ClickException(NEEDS) from None
    functions = [(name, ops_of(ops)) for name, ops in walked]
    findings = check_text(data, path=path, options=opts)
    return node_texts(functions, scan_text(data, path=path), findings, mesh)


def builder() -> Any:
    """Model Explorer's node data builder (``model_explorer.node_data_builder``)."""
    try:
        from model_explorer import node_data_builder
    except ImportError:
        raise click.ClickException(NEEDS) from None
    return node_data_builder


def to_json(texts: dict[str, dict[str, NodeText]]) -> str:
    """The node data file, built with Model Explorer's own node data builder (a string value per node,
    coloured by its worst finding)."""
    ndb = builder()
    graphs: dict[str, Any] = {}
    for graph, nodes in texts.items():
        results = {
            node: ndb.NodeDataResult(value=t.text, bgColor=COLORS.get(t.severity or "")) for node, t in nodes.items()
        }
        graphs[graph] = ndb.GraphNodeData(results=results, name=NAME)
    return str(ndb.ModelNodeData(graphsData=graphs).to_json_string(indent=2)) + "\n"
