"""The ``shardconv`` command line: an outer layer that only calls into the library."""
