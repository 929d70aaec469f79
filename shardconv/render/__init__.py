"""Rendering of placements (which device holds which tile) for the CLI."""
