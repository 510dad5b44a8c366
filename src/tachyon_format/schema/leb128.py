"""LEB128 and zigzag scalars without construct: the limits, the one scalar decoder and
encoder of each, and protobuf's wire types (whose keys and lengths are LEB128s).

:mod:`.primitives` declares the construct types over these (``ULEB128``, ``ZigZagLEB128``);
the sequential readers that must start fast (the tables, the region checks, the protobuf
wire walks) call them directly, and ``kernels.varint`` holds their vectorised twins, tested
against them.
"""

from __future__ import annotations

ULEB128_MAX_BYTES = 10
U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF


# protobuf's wire types: a field's key is ``field_number << 3 | wire_type`` (a ULEB128)
VARINT = 0
"""Wire type of a ULEB128 value (int64 as two's complement, uint64, bool)."""
I64 = 1
"""Wire type of 8 little-endian bytes (unused by profile.proto)."""
LEN = 2
"""Wire type of a ULEB128 byte count and the bytes: messages, strings, packed repeated
scalars."""
I32 = 5
"""Wire type of 4 little-endian bytes (unused by profile.proto)."""


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


def decode_zigzag(z: int) -> int:
    """Zigzag to signed, at any width: ``0, 1, 2, 3 -> 0, -1, 1, -2``."""
    return (z >> 1) ^ -(z & 1)


def encode_zigzag(v: int, bits: int) -> int:
    """Signed to zigzag in *bits* bits (32: Tachyon's svarint; 64: protobuf's sint64),
    ``(v << 1) ^ (v >> (bits - 1))``: the inverse of :func:`decode_zigzag`."""
    return ((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1)


def encode_uleb128(value: int) -> bytes:
    """Canonical unsigned LEB128 of a non-negative int."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
