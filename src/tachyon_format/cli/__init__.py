"""The ``tachyon-format`` command line."""

from .main import main

__all__ = ["main"]
