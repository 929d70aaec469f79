"""``python -m shardconv``."""

from shardconv.cli.main import main

main()
