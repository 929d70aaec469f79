"""``shardconv server``: check's findings, fixes, hovers and outlines in an editor, over the Language
Server Protocol (the optional ``shardconv[lsp]`` extra: pygls). The top layer beside ``cli``."""
