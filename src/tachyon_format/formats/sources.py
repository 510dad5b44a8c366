"""What a reader takes as its input, shared by the formats read whole into memory."""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

from tachyon_format.errors import FormatError
from tachyon_format.problems import Problem

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO
"""A path, the file's bytes, or a binary file object (read whole)."""


Destination = str | os.PathLike | BinaryIO
"""A path, or a binary file object (written to, not closed)."""


def write_bytes(data: bytes, destination: Destination) -> None:
    """Write *data* to the path or binary file *destination*."""
    if hasattr(destination, "write"):
        destination.write(data)  # type: ignore[union-attr]
        return
    with open(destination, "wb") as f:  # type: ignore[arg-type]
        f.write(data)


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
                     **options: Any) -> list[Problem]:
    """What stops ``reader(source, **options)``, ``[]`` if nothing does: a format's
    ``validate`` where reading the file whole is the check. Never raises on bad input: a path
    that cannot be read, and a reader bug, are reported as problems too, not passed on."""
    try:
        reader(source, **options)
    except FormatError as exc:
        return [Problem.from_error(exc)]
    except OSError as exc:
        return [Problem.from_os_error(exc)]
    except Exception as exc:  # a reader bug must not break the never-raises contract
        return [Problem("unreadable", f"internal error while reading: {type(exc).__name__}: "
                        f"{exc}")]
    return []


MAX_STACK_DEPTH = 1 << 16
"""The deepest stack (in frames) the readers of lists of frames take (pprof, gperftools,
collapsed, speedscope). Profilers stop far sooner (gperftools at 254 frames, CPython's
Tachyon at 256, async-profiler at 2048 by default); the prefix tree is built a level at a
time, so a crafted file with a stack millions of frames deep would take minutes, and is
refused instead."""


def check_stack_depths(offsets: Any, where: Callable[[int], str]) -> None:
    """Raise :class:`FormatError` if a stack listed in CSR form (stack ``i`` is
    ``offsets[i]:offsets[i + 1]``, a numpy array) is deeper than :data:`MAX_STACK_DEPTH`;
    ``where(i)`` is the field path of stack ``i``."""
    lengths = offsets[1:] - offsets[:-1]
    deep = (lengths > MAX_STACK_DEPTH).nonzero()[0]
    if deep.size:
        i = int(deep[0])
        raise FormatError(f"a stack of {int(lengths[i])} frames, deeper than the limit of "
                          f"{MAX_STACK_DEPTH} (MAX_STACK_DEPTH)", path=where(i))


GUNZIP_STEP = 1 << 22
"""Decompressed bytes per step of :func:`gunzip`."""
INPUT_STEP = 1 << 16
"""Compressed bytes handed to the decompressor at a time. At the end of a member (or zstd
frame) the decompressor copies the input it was given but did not need; given the whole
rest of the file, a file of thousands of tiny members would be copied once per member."""


def gunzip(data: bytes | bytearray | memoryview, max_size: int, *, label: str) -> bytearray:
    """Every gzip member, as Go's gzip reader (multistream) reads them, capped. Into one
    buffer sized from the last member's ISIZE trailer (the size mod 2**32; a wrong guess only
    costs a resize), so the data is never held twice. *label* starts each error message
    (what the data was meant to be); zlib.error for a corrupt stream."""
    guess = int.from_bytes(bytes(data[-4:]), "little") if len(data) >= 4 else 0
    out = bytearray(min(guess, max_size, 1032 * len(data)))  # deflate: at most ~1032:1
    size = 0
    view = memoryview(data)
    start = 0  # where the member being read starts
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        fed = start  # input handed to d so far ends here
        pending = view[fed:fed + INPUT_STEP]
        fed += len(pending)
        while True:
            chunk = d.decompress(pending, min(GUNZIP_STEP, max_size - size + 1))
            if size + len(chunk) > len(out):
                out.extend(bytes(size + len(chunk) - len(out)))
            out[size:size + len(chunk)] = chunk
            size += len(chunk)
            if size > max_size:
                raise FormatError(f"{label}: gzip data decompresses to more than {max_size} "
                                  "bytes (max_size)", path="gzip")
            if d.eof:
                break
            pending = d.unconsumed_tail
            if not pending:
                pending = view[fed:fed + INPUT_STEP]
                fed += len(pending)
                if not pending and not chunk:
                    break
        if not d.eof:
            raise FormatError(f"{label}: gzip data ends early (truncated file?)",
                              offset=len(data), path="gzip")
        start = fed - len(d.unused_data)  # the bytes after this member
        rest = view[start:]
        if not rest or bytes(rest[:2]) != b"\x1f\x8b":
            if rest and any(rest):  # trailing bytes that are not padding
                raise FormatError(f"{label}: bytes after the gzip data", offset=start,
                                  path="gzip")
            del out[size:]
            return out
