"""``python -m shardconv``."""

from .cli.main import main

main()
