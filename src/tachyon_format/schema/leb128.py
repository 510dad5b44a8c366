"""LEB128 scalars without construct: the limits, the one scalar decoder and the encoder.

:mod:`.primitives` declares the construct types over these (``ULEB128``, ``ZigZagLEB128``);
the sequential readers that must start fast (the tables, the region checks) call
:func:`scan_uleb128` directly, and ``kernels.varint`` is its vectorised twin, tested
against it.
"""

from __future__ import annotations

ULEB128_MAX_BYTES = 10
U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF


class LEB128Error(ValueError):
    """A LEB128 value that breaks the decoding rules (too long, truncated)."""


class OverlongLEB128(LEB128Error):
    """A LEB128 value with a continuation bit on its 10th byte."""


class TruncatedLEB128(LEB128Error):
    """The data ends inside a LEB128 value."""


def scan_uleb128(data, pos: int, end: int) -> tuple[int, int]:
    """Scan: the unsigned LEB128 at ``data[pos:end]`` as CPython's Tachyon reader reads it
    (docs/format/reader.md#varint-decoding): ``(value, position after it)``.

    At most 10 bytes, of a 10th byte only bit 0 counts (the value is mod 2**64),
    non-canonical forms are accepted. Raises :class:`OverlongLEB128` or
    :class:`TruncatedLEB128`."""
    value = shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & U64_MAX, pos
        shift += 7
        if shift >= 7 * ULEB128_MAX_BYTES:
            raise OverlongLEB128("LEB128 value longer than 10 bytes")
    raise TruncatedLEB128("LEB128 value runs past the end of the data")


def encode_uleb128(value: int) -> bytes:
    """Canonical unsigned LEB128 of a non-negative int."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
