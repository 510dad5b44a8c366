"""What a reader takes as its input, shared by the formats read whole into memory."""

from __future__ import annotations

import os
from typing import BinaryIO

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO
"""A path, the file's bytes, or a binary file object (read whole)."""


def read_bytes(source: Source) -> bytes:
    """The bytes of *source*. TypeError for a text stream or anything else."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source)
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as f:
            return f.read()
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            raise TypeError("profiles are binary: open the file in binary mode ('rb')")
        return bytes(data)
    raise TypeError(f"expected a path, bytes or a binary file object, not "
                    f"{type(source).__name__}")
