"""The release number in one place below every layer (pyproject.toml reads it from here)."""

VERSION = "0.1.0"
