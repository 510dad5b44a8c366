"""Read, write, validate and convert CPython 3.15 Tachyon profiles."""

from .errors import FormatError

__all__ = ["FormatError"]
__version__ = "0.1.0"
