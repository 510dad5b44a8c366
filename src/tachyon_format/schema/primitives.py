"""Field types shared by every schema. Each is documented once, here.

Tier (a)/(b): these are scalar construct types over the construct-free scalars of
``schema/leb128.py``. Bulk decoding and encoding of the same encodings lives in
``tachyon_format.kernels.varint`` and is tested against these declarations.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import construct as cs

from .leb128 import (  # noqa: F401 (the construct-free scalars, re-exported)
    U32_MAX,
    U64_MAX,
    ULEB128_MAX_BYTES,
    LEB128Error,
    decode_zigzag,
    encode_uleb128,
    encode_zigzag,
    scan_uleb128,
)
from .plain import ByteOrder  # noqa: F401 (declared there: plain needs no construct)


class VarintError(cs.ConstructError):
    """A LEB128 value that breaks the decoding rules (too long, out of range, truncated)."""


class UnsignedLEB128(cs.Construct):
    r"""Unsigned LEB128: 7 bits a byte, least significant group first, bit 7 = more follow.

    Decoding follows CPython's Tachyon reader exactly (docs/format/reader.md#varint-decoding): at
    most 10 bytes (a continuation bit on the 10th byte is an error), only bit 0 of the 10th byte is
    kept (``ff ff ff ff ff ff ff ff ff 7f`` is accepted), non-canonical forms such as ``80 00`` are
    accepted, and values above ``max_value`` are rejected. Building always writes the canonical
    (shortest) form.
    """

    def __init__(self, max_value: int) -> None:
        super().__init__()
        self.max_value = max_value

    def _parse(self, stream, context, path):
        data = bytearray()
        while len(data) < ULEB128_MAX_BYTES:
            data += cs.stream_read(stream, 1, path)
            if data[-1] < 0x80:
                break
        try:
            value, _ = scan_uleb128(data, 0, len(data))
        except LEB128Error as exc:
            raise VarintError(str(exc), path=path) from None
        if value > self.max_value:
            raise VarintError(f"LEB128 value {value} exceeds maximum {self.max_value}", path=path)
        return value

    def _build(self, obj, stream, context, path):
        if not isinstance(obj, int) or not 0 <= obj <= self.max_value:
            raise VarintError(f"cannot encode {obj!r} as LEB128 (0..{self.max_value})", path=path)
        data = encode_uleb128(obj)
        cs.stream_write(stream, data, len(data), path)
        return obj

    def _sizeof(self, context, path):
        raise cs.SizeofError("LEB128 is variable-length", path=path)


class ZigZagLEB128Int32(cs.Adapter):
    """Zigzag over int32, then unsigned LEB128 (Tachyon's "svarint",
    docs/format/reader.md#varint-decoding).

    ``z = (v << 1) ^ (v >> 31)`` in 32 bits; decode ``(z >> 1) ^ -(z & 1)``. The zigzag
    source is a u32, so an encoded value above ``0xFFFFFFFF`` is rejected. -1 is ``01``,
    3 is ``06``, 97 is ``c2 01``.
    """

    def _decode(self, obj, context, path):
        return decode_zigzag(obj)

    def _encode(self, obj, context, path):
        if not isinstance(obj, int) or not -(2**31) <= obj < 2**31:
            raise VarintError(f"cannot encode {obj!r} as zigzag int32", path=path)
        return encode_zigzag(obj, 32)


ULEB128 = UnsignedLEB128(U64_MAX)
"""uvarint holding a u64 (timestamp deltas)."""
ULEB128_U32 = UnsignedLEB128(U32_MAX)
"""uvarint holding a u32 (counts, indices, string lengths): larger values are rejected."""
ZigZagLEB128 = ZigZagLEB128Int32(ULEB128_U32)
"""svarint: zigzag int32 then LEB128 (line numbers, columns and their deltas)."""


class Sentinel(cs.Adapter):
    """Read one reserved raw value as ``None`` (and write ``None`` back as it)."""

    def __init__(self, subcon: cs.Construct, raw: int) -> None:
        super().__init__(subcon)
        self.raw = raw

    def _decode(self, obj, context, path):
        return None if obj == self.raw else obj

    def _encode(self, obj, context, path):
        return self.raw if obj is None else obj


@dataclass(frozen=True)
class Ints:
    """Fixed-width numbers for one byte order, so each layout is declared once."""

    u8: cs.Construct
    u32: cs.Construct
    u64: cs.Construct
    f64: cs.Construct

    @staticmethod
    @functools.cache
    def of(order: ByteOrder) -> Ints:
        if order == "<":
            return Ints(cs.Int8ul, cs.Int32ul, cs.Int64ul, cs.Float64l)
        return Ints(cs.Int8ub, cs.Int32ub, cs.Int64ub, cs.Float64b)


def peel(sc: cs.Construct) -> cs.Construct:
    """The type under a declaration's name and doc wrappers (``"doc" * cs.Struct(...)`` is a
    ``Renamed``, not a ``Struct``)."""
    while isinstance(sc, cs.Renamed):
        sc = sc.subcon
    return sc


def fixed_offsets(struct: cs.Construct) -> dict[str, int]:
    """The byte offset of each named field of *struct* that follows only fixed-size fields
    (so that code which reads a field where it lies takes its offset from the declaration,
    not typed again by hand)."""
    offsets, at = {}, 0
    for field in peel(struct).subcons:
        if field.name:
            offsets[field.name] = at
        try:
            at += field.sizeof()
        except cs.SizeofError:
            break
    return offsets


def bits_of(order: ByteOrder, bit_struct: cs.Construct) -> cs.Construct:
    """A BitStruct over a multi-byte word: construct reads bits in stream order (big-endian),
    so a little-endian word is byte-swapped first."""
    return cs.ByteSwapped(bit_struct) if order == "<" else bit_struct
