"""``explain``: why a value is sharded the way it is, read from Shardy's own propagation records."""
