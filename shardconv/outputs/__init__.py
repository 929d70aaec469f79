"""Output (and parameter) shardings of a post-Shardy module, in the forms a PJRT plugin reports them."""

from shardconv.outputs.read import (
    output_shardings,
    parameter_shardings,
    read_shardings,
    reading_of,
)
from shardconv.outputs.reading import Conflict, Feeder, OutputSharding, Reading
from shardconv.outputs.rewrite import to_mlir
from shardconv.outputs.writers import (
    hlo_lines,
    length_prefixed,
    proto_blobs,
    proto_hex_lines,
    textproto,
    tuple_string,
)

__all__ = [
    "Conflict",
    "Feeder",
    "OutputSharding",
    "Reading",
    "hlo_lines",
    "length_prefixed",
    "output_shardings",
    "parameter_shardings",
    "proto_blobs",
    "proto_hex_lines",
    "read_shardings",
    "reading_of",
    "textproto",
    "to_mlir",
    "tuple_string",
]
