"""The reference scanner: the pure-Python extractor shardconv used before its native core, kept as it
was (independent of the core) so a differential test can hold the core to it, site for site."""
