"""Independent scalar models the kernels and decoders are checked against."""

from __future__ import annotations

U64 = (1 << 64) - 1


def scalar_uleb128(data: bytes, pos: int = 0) -> tuple[int, int]:
    """CPython's reader loop: 10 bytes at most, only bit 0 of a 10th byte kept."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("incomplete")
        byte = data[pos]
        pos += 1
        result |= ((byte & 0x7F) << shift) & U64
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise ValueError("malformed")


def canonical(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
