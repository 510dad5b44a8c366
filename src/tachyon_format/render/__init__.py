"""Writers of text and pictures from a Profile (no file-format knowledge)."""
