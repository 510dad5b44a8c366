"""The verbs: ``read``, ``iter_batches``, ``write``, ``validate``, ``info``, ``sniff``.

Each verb finds the format (``format=`` if given, else from the content's first bytes, else
from the file name's extension) in :data:`tachyon_format.formats.FORMATS` and hands the work
to that format's module. The command line calls only these.
"""

from __future__ import annotations

import inspect
import io
import os
from collections.abc import Iterator
from typing import Any, BinaryIO

from .errors import FormatError
from .formats import FORMATS, Format, format_for_extension
from .model import Profile
from .model.aggregate import aggregate_samples

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO
"""A path, the file's bytes, or a binary file object (read whole)."""

SNIFF_SIZE = 4096
"""Bytes of the start of a file that sniffing looks at: every magic fits, and so does the
start of a compressed pprof file, whose first fields sniffing decompresses (a deflate block
header alone can take a few hundred bytes)."""


def sniff(source: Source) -> str | None:
    """The name of the format *source* is in, judged from its first bytes; None if no format
    of :data:`~tachyon_format.FORMATS` recognises them."""
    head, _ = _head(source)
    return _sniff_head(head)


def read(source: Source, *, format: str | None = None, aggregate: bool = False,
         **options: Any) -> Profile:
    """The whole profile in *source* as columns. *options* go to the format's reader (for
    Tachyon: ``threads``, ``chunk_size``). Raises :class:`FormatError` for malformed input.

    *aggregate*: one sample row per distinct (thread, stack, status) with its summed weight
    as ``values``, no timestamps (:func:`~tachyon_format.model.aggregate.aggregate_samples`);
    a reader that takes ``aggregate`` itself (Tachyon: counted while decoding, rows in
    order of first appearance) does it, others read every sample first."""
    chosen, source = _format_of(source, format, "read")
    reader = chosen.verb("read")
    if not aggregate:
        return reader(source, **options)
    if "aggregate" in inspect.signature(reader).parameters:
        return reader(source, aggregate=True, **options)
    return aggregate_samples(reader(source, **options))


def iter_batches(source: Source, *, format: str | None = None,
                 **options: Any) -> Iterator[Profile]:
    """The profile in successive batches of samples, in bounded memory (for Tachyon:
    ``samples_per_batch``, ``threads``); stack and thread ids stay valid across batches."""
    chosen, source = _format_of(source, format, "iter_batches")
    return chosen.verb("iter_batches")(source, **options)


def write(profile: Profile, destination: str | os.PathLike, *, format: str | None = None,
          **options: Any) -> None:
    """Write *profile* to the path *destination* in *format* (default: from the path's
    extension, else the profile's own format, else Tachyon)."""
    name = format
    if name is None:
        by_extension = format_for_extension(os.fspath(destination))
        own = next((f for f in profile.extras if f in FORMATS), None)
        name = by_extension.name if by_extension is not None else own or "tachyon"
    chosen = _named(name)
    writer = chosen.verb("write")
    if writer is None:
        raise ValueError(f"tachyon_format cannot write {chosen.name} files")
    writer(profile, destination, **options)


def validate(source: Source, *, format: str | None = None, **options: Any) -> list[str]:
    """The problems that make *source* unreadable, ``[]`` if there are none; never raises on
    malformed input (an unreadable path is reported too)."""
    try:
        chosen, source = _format_of(source, format, "validate")
    except FormatError as exc:
        return [str(exc)]
    except OSError as exc:
        return [f"cannot read: {exc}"]
    return chosen.verb("validate")(source, **options)


def info(source: Source | Profile, *, format: str | None = None) -> dict[str, Any]:
    """Header-level facts of a file, without decoding its samples (for Tachyon: the dict of
    CPython's ``BinaryReader.get_info()``). For a :class:`Profile` read from a file: what
    that file's header said."""
    if isinstance(source, Profile):
        for name, facts in source.extras.items():
            if name in FORMATS and hasattr(facts, "info"):
                return facts.info
        raise ValueError("this profile carries no file-level facts (it was not read from a "
                         "file whose format has them)")
    chosen, source = _format_of(source, format, "info")
    return chosen.verb("info")(source)


# -- finding the format ------------------------------------------------------------------------


def _named(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise ValueError(f"unknown format {name!r} (known: {known})") from None


def _format_of(source: Source, format: str | None, verb: str) -> tuple[Format, Source]:
    """The format of *source* and the source to hand on (a stream is read whole first, so
    that sniffing does not consume it)."""
    if format is not None:
        chosen = _named(format)
    else:
        head, source = _head(source)
        name = _sniff_head(head)
        if name is None and isinstance(source, str | os.PathLike):
            by_extension = format_for_extension(os.fspath(source))
            name = by_extension.name if by_extension is not None else None
        if name is None:
            raise FormatError(f"not a profile this library reads: {describe(head)}",
                              offset=0, path="magic")
        chosen = FORMATS[name]
    if chosen.verb(verb) is None:
        raise ValueError(f"tachyon_format cannot {verb.replace('_', ' ')} {chosen.name} files")
    return chosen, source


def _sniff_head(head: bytes) -> str | None:
    for name, candidate in FORMATS.items():
        sniffer = candidate.verb("sniff")
        if sniffer is not None and sniffer(head):
            return name
    return None


def _head(source: Source) -> tuple[bytes, Source]:
    """The first :data:`SNIFF_SIZE` bytes of *source*, and what to read the whole from."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(memoryview(source)[:SNIFF_SIZE]), source
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as f:
            return f.read(SNIFF_SIZE), source
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            raise TypeError("profiles are binary: open the file in binary mode ('rb')")
        return bytes(data[:SNIFF_SIZE]), io.BytesIO(data)
    raise TypeError(f"expected a path, bytes or a binary file object, not "
                    f"{type(source).__name__}")


_LOOKS_LIKE = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"\x00" * 8, "an all-zero start (a Tachyon file whose profiler never finished writing it?)"),
)


def describe(head: bytes) -> str:
    """A few words on what *head* looks like, for an error about an unknown format."""
    if not head:
        return "the file is empty"
    for magic, words in _LOOKS_LIKE:
        if head.startswith(magic):
            return words
    if head.lstrip()[:1] in (b"{", b"["):
        return "JSON text"
    return f"unknown magic {head[:4].hex(' ')}"
