"""What a reader takes as its input, shared by the formats read whole into memory."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

from tachyon_format.errors import FormatError

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


def problems_reading(reader: Callable[..., object], source: Source,
                     **options: Any) -> list[str]:
    """What stops ``reader(source, **options)``, ``[]`` if nothing does: a format's
    ``validate`` where reading the file whole is the check. Never raises on bad input: a
    reader bug is reported as a problem too, not passed on."""
    try:
        reader(source, **options)
    except FormatError as exc:
        return [str(exc)]
    except OSError as exc:
        return [f"cannot read: {exc}"]
    except Exception as exc:  # a reader bug must not break the never-raises contract
        return [f"internal error while reading: {type(exc).__name__}: {exc}"]
    return []
