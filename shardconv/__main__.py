"""``python -m shardconv``."""

from shardconv.cli.entry import main

main()
