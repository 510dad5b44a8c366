"""Bytes to text: the encodings collapsed files come in, and where an offset falls.

Files are UTF-8 (CPython, py-spy, flamegraph.pl), with or without a byte order mark, or UTF-16
with one (Windows tools; speedscope reads both). Bytes that are not UTF-8 are kept through
``surrogateescape``, so that :class:`~tachyon_format.model.Strings` stores them unchanged.
"""

from __future__ import annotations

import codecs

from tachyon_format.errors import FormatError

ENCODINGS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
"""Byte order marks and the encoding each announces (no mark: UTF-8)."""


def encoding_of(data: bytes) -> tuple[str, int]:
    """The encoding of *data* and the length of its byte order mark."""
    for bom, encoding in ENCODINGS:
        if data.startswith(bom):
            return encoding, len(bom)
    return "utf-8", 0


def decode(data: bytes) -> tuple[str, str]:
    """The text of a whole file and its encoding (``utf-8``, ``utf-8-sig``, ``utf-16-le``,
    ``utf-16-be``). UTF-16 must be well formed: :class:`FormatError` names the byte offset."""
    encoding, skip = encoding_of(data)
    if encoding == "utf-8":
        return data[skip:].decode("utf-8", "surrogateescape"), "utf-8-sig" if skip else "utf-8"
    try:
        return data[skip:].decode(encoding), encoding
    except UnicodeDecodeError as exc:
        raise FormatError(f"not {encoding.upper()} text: {exc.reason}",
                          offset=skip + exc.start, path="text") from None


def decode_head(head: bytes) -> str | None:
    """The text of a file's first bytes (a character cut at the end is left out), or None if
    they are not text in one of :data:`ENCODINGS`."""
    encoding, skip = encoding_of(head)
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    try:
        return decoder.decode(head[skip:], final=False)
    except UnicodeDecodeError:
        return None
