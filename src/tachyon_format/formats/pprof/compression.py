"""The wrappers around a serialized ``Profile``: gzip (what pprof writes), zstd, or none.

pprof's own reader (``profile.Parse``) gunzips when the data starts with the gzip magic and
otherwise takes the bytes as the message; zstd is proposed for pprof (golang/go#74022) and
written by Datadog. Decompression is capped (:data:`DEFAULT_MAX_SIZE`) so that a
decompression bomb costs at most the cap, and is streamed, since neither wrapper has to
state the size.

Sniffing must be cheap and must not claim other compressed formats, so it decompresses only
the first bytes and checks that they start like a ``Profile`` message
(:func:`looks_like_profile`).
"""

from __future__ import annotations

import zlib
from typing import Literal

from tachyon_format.errors import FormatError
from tachyon_format.schema.leb128 import LEN, VARINT, LEB128Error, scan_uleb128
from tachyon_format.schema.pprof_plain import GZIP_MAGIC, PROFILE, ZSTD_MAGIC
from tachyon_format.schema.protobuf_plain import wire_type_of

from ..sources import INPUT_STEP, gunzip

Compression = Literal["gzip", "zstd", "none"]
COMPRESSIONS = ("gzip", "zstd", "none")
DEFAULT_MAX_SIZE = 1 << 30
"""Default cap on the decompressed size (1 GiB): larger data raises FormatError."""
GZIP_LEVEL = 1
"""gzip's fastest level, as Go's runtime writes its profiles (``runtime/pprof``:
``gzip.BestSpeed``): files a few percent larger, written several times faster."""
ZSTD_LEVEL = 3
SNIFF_OUTPUT = 64
"""Decompressed bytes that sniffing looks at."""

_WIRE = {f.number: wire_type_of(f) for f in PROFILE.fields}
_WIRE_ALSO = {13: VARINT}  # comment, unpacked


def compression_of(head: bytes) -> Compression:
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


def _zstd():
    try:
        from compression import zstd  # Python 3.14+
    except ImportError:
        from backports import zstd
    return zstd


def decompress(data: bytes | memoryview, max_size: int = DEFAULT_MAX_SIZE) -> tuple[
        bytes | memoryview, Compression]:
    """The serialized message inside *data*, and the wrapper it had."""
    kind = compression_of(bytes(data[:4]))
    if kind == "none":
        if len(data) > max_size:
            raise FormatError(f"pprof: {len(data)} bytes exceed the size limit {max_size}",
                              path="max_size")
        return data, kind
    try:
        out = (gunzip(data, max_size, label="pprof") if kind == "gzip"
               else _unzstd(data, max_size))
    except (zlib.error, EOFError, ValueError) as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(f"pprof: corrupt {kind}-compressed data ({exc})", offset=0,
                          path=kind) from None
    except Exception as exc:  # zstd's own error type
        if type(exc).__name__ != "ZstdError":
            raise
        raise FormatError(f"pprof: corrupt zstd-compressed data ({exc})", offset=0,
                          path=kind) from None
    return out, kind


def _too_big(kind: str, max_size: int) -> FormatError:
    return FormatError(f"pprof: {kind} data decompresses to more than {max_size} bytes "
                       "(max_size)", path=kind)


def _unzstd(data, max_size: int) -> bytearray:
    """Every zstd frame of *data*, capped at *max_size*; the input is handed over
    :data:`~..sources.INPUT_STEP` bytes at a time (see there: thousands of tiny frames
    would otherwise copy the rest of the file once each)."""
    zstd = _zstd()
    out = bytearray()
    view = memoryview(data)
    start = 0
    while start < len(view):
        d = zstd.ZstdDecompressor()
        fed = start
        while not d.eof and len(out) <= max_size:
            if d.needs_input:
                if fed >= len(view):
                    break
                piece = bytes(view[fed:fed + INPUT_STEP])
                fed += len(piece)
            else:
                piece = b""
            out += d.decompress(piece, max_length=max_size - len(out) + 1)
        if len(out) > max_size:
            raise _too_big("zstd", max_size)
        if not d.eof:
            raise FormatError("pprof: zstd data ends early (truncated file?)", offset=len(data),
                              path="zstd")
        start = fed - len(d.unused_data)
    return out


def compress(message: bytes, compression: Compression = "gzip", level: int | None = None
             ) -> bytes:
    """*message* in the wrapper *compression*."""
    if compression == "gzip":
        import gzip

        return gzip.compress(message, GZIP_LEVEL if level is None else level, mtime=0)
    if compression == "zstd":
        return _zstd().compress(message, ZSTD_LEVEL if level is None else level)
    if compression == "none":
        return message
    raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)}, "
                     f"not {compression!r}")


# --- sniffing ---------------------------------------------------------------------------------


def head_of(head: bytes) -> bytes | None:
    """The first decompressed bytes of *head* (the start of a file), None if they cannot be
    had from it."""
    kind = compression_of(head)
    try:
        if kind == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SNIFF_OUTPUT)
        if kind == "zstd":
            return _zstd().ZstdDecompressor().decompress(head, max_length=SNIFF_OUTPUT)
    except Exception:  # noqa: BLE001 - not decompressible: not ours
        return None
    return head


def looks_like_profile(head: bytes, complete: bool = False) -> bool:
    """Do the first bytes of a message read as fields of ``Profile`` with the right wire
    types? At least two fields must, or all of *head* if shorter (a LEN field's payload may
    run past *head* unless *complete*)."""
    pos, fields = 0, 0
    while pos < len(head):
        key, pos = _varint(head, pos)
        if key is None:
            return fields >= 1 and not complete
        number, wire = key >> 3, key & 7
        if _WIRE.get(number) != wire and _WIRE_ALSO.get(number) != wire:
            return False
        value, pos = _varint(head, pos)
        if value is None:
            return fields >= 1 and not complete
        fields += 1
        if wire == LEN:
            pos += value
            if pos > len(head):
                return not complete
    return fields >= 1


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    """The ULEB128 at *pos* and the offset after it; ``(None, pos)`` if it is cut or too
    long."""
    try:
        return scan_uleb128(data, pos, len(data))
    except LEB128Error:
        return None, pos


def sniff(head: bytes) -> bool:
    """Is *head* the start of a pprof file (raw, gzip or zstd)?"""
    if not head:
        return False
    inner = head_of(head)
    if not inner or (inner is not head and len(inner) < 2):
        return False
    return looks_like_profile(inner, complete=False)
