"""What a reader takes as its input and a writer its output, for every format: the one
:data:`Source` type, the one way to open it (:func:`load`; :func:`read_head` and
:func:`read_ends` for a look at its start or both ends), the one :data:`Destination` type
and the one way to write whole bytes to it (:func:`write_bytes`, :func:`whole_file_writer`);
and what the readers of lists of frames share (the stack depth limit, gzip members)."""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, NamedTuple

from tachyon_format.errors import FormatError
from tachyon_format.problems import Problem

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO
"""A path, the file's bytes, or a binary file object (read whole)."""

Destination = str | os.PathLike | BinaryIO
"""A path (``"-"``, to the verbs, is standard output), or a binary file object (written to,
not closed)."""


class Loaded(NamedTuple):
    """A source's bytes (bytes-like; a view, never a copy, of bytes given), the name messages
    call it by, and the memory map when the bytes are one (the caller closes it)."""

    data: Any
    name: str
    mapping: mmap.mmap | None = None


def load(source: Source, *, mapped: bool = False) -> Loaded:
    """The bytes of *source*: a path is read whole, or with ``mapped=True`` memory-mapped
    (the Tachyon reader's way: a file of gigabytes is paged in as it is decoded, never held;
    an empty file, which cannot be mapped, is ``b""``); bytes-like are viewed as they are; a
    binary file object is read to its end. TypeError for a text stream or anything else."""
    if isinstance(source, bytes | bytearray | memoryview):
        return Loaded(memoryview(source).cast("B"), "<bytes>")
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as f:
            if not mapped:
                return Loaded(f.read(), os.fsdecode(source))
            if os.fstat(f.fileno()).st_size == 0:
                return Loaded(b"", os.fsdecode(source))
            mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return Loaded(mapping, os.fsdecode(source), mapping)
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            raise TypeError("profiles are binary: open the file in binary mode ('rb')")
        name = getattr(source, "name", "<stream>")
        return Loaded(data, name if isinstance(name, str) else "<stream>")
    raise TypeError(f"expected a path, bytes or a binary file object, not "
                    f"{type(source).__name__}")


def read_bytes(source: Source) -> bytes:
    """The bytes of *source* (:func:`load`) as ``bytes``, for a parser that needs them."""
    data = load(source).data
    return data if type(data) is bytes else bytes(data)


@contextlib.contextmanager
def loaded(source: Source, *, mapped: bool = False) -> Iterator[Loaded]:
    """:func:`load` for the time of a ``with``: the memory map, if any, is closed after (or
    by the GC, if a view of it outlives the block)."""
    opened = load(source, mapped=mapped)
    try:
        yield opened
    finally:
        if opened.mapping is not None:
            with contextlib.suppress(BufferError):
                opened.mapping.close()


def read_head(source: Source, size: int) -> tuple[bytes, Source]:
    """The first *size* bytes of *source*, and what to read the whole from: a path or bytes
    as given, a stream's bytes (read whole here, so that the first look does not consume
    it)."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as f:
            return f.read(size), source
    data = load(source).data
    head = bytes(data[:size])
    if isinstance(source, bytes | bytearray | memoryview):
        return head, source
    return head, io.BytesIO(data)


@contextlib.contextmanager
def output_stream(destination: Destination) -> Iterator[BinaryIO]:
    """A binary stream to write *destination*: the path opened for writing (closed after),
    or the binary file object itself (left open)."""
    if hasattr(destination, "write"):
        yield destination  # type: ignore[misc]
        return
    with open(destination, "wb") as f:  # type: ignore[arg-type]
        yield f


def read_ends(source: Source, head_size: int, tail_size: int) -> tuple[bytes, bytes, int] | None:
    """The first *head_size* and last *tail_size* bytes of *source* (fewer of a shorter one)
    and its size, reading no more of a path than that (a seek, not a memory map: several
    times cheaper for a file's header and footer); None for a stream, which cannot be looked
    at without being read whole."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(head_size)
            f.seek(max(0, size - tail_size))
            return head, f.read(), size
    if isinstance(source, bytes | bytearray | memoryview):
        data = memoryview(source).cast("B")
        return bytes(data[:head_size]), bytes(data[max(0, len(data) - tail_size):]), len(data)
    return None


def write_bytes(data: bytes, destination: Destination) -> None:
    """Write *data* to the path or binary file *destination*."""
    with output_stream(destination) as out:
        out.write(data)


def whole_file_writer(build: Callable[..., Any],
                      encode: Callable[[Any], bytes] | None = None) -> Callable[..., None]:
    """The ``write(profile, destination, **options)`` verb of a format whose file is made
    whole in memory: ``build(profile, **options)``, its bytes (or what *encode* makes bytes
    of), to the path or binary file *destination*. The formats written piece by piece
    (Tachyon, pprof, collapsed) write to *destination* as they go instead."""

    def write(profile: Any, destination: Destination, **options: Any) -> None:
        data = build(profile, **options)
        write_bytes(data if encode is None else encode(data), destination)

    write.__module__ = build.__module__  # (where ``write_options`` looks for *build*)
    write.__doc__ = (f"Write *profile* to the path or binary file *destination*; *options* "
                     f"as for :func:`{build.__name__}`.")
    return write


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


def too_deep(frames: int | str) -> str:
    """What every reader says of a stack of *frames* frames (a number, or "more than N")."""
    return (f"a stack of {frames} frames, deeper than the limit of {MAX_STACK_DEPTH} "
            "(MAX_STACK_DEPTH)")


def check_stack_depths(offsets: Any, where: Callable[[int], str]) -> None:
    """Raise :class:`FormatError` if a stack listed in CSR form (stack ``i`` is
    ``offsets[i]:offsets[i + 1]``, a numpy array) is deeper than :data:`MAX_STACK_DEPTH`;
    ``where(i)`` is the field path of stack ``i``."""
    lengths = offsets[1:] - offsets[:-1]
    deep = (lengths > MAX_STACK_DEPTH).nonzero()[0]
    if deep.size:
        i = int(deep[0])
        raise FormatError(too_deep(int(lengths[i])), path=where(i))


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
