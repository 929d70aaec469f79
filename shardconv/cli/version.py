"""What ``shardconv --version`` prints, shared by the click group and the console script's fast path."""

from shardconv.core.version import VERSION

FLAGS = ("--version", "-V")
LINE = f"shardconv, version {VERSION}"
