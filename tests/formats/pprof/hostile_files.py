"""pprof files built to hurt the reader (issue 21), at any size: small gzip files whose
message declares what would take gigabytes to hold as arrays. Each is made by streaming
the message through zlib, so that building the full-size class does not hold the message
either."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

MIB = 1 << 20


def varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


SAMPLE_TYPE = field(1, b"\x08\x01\x10\x02")  # type "cpu", unit "ns" (strings 1 and 2)
STRINGS = field(6, b"") + field(6, b"cpu") + field(6, b"ns")


def gzipped(parts: Iterator[bytes]) -> bytes:
    """The concatenation of *parts*, gzip-compressed as it comes."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [z.compress(part) for part in parts]
    out.append(z.flush())
    return b"".join(out)


def _repeat(piece: bytes, count: int) -> Iterator[bytes]:
    block = max(1, MIB // max(len(piece), 1))
    for first in range(0, count, block):
        yield piece * min(block, count - first)


def one_long_string(num_bytes: int) -> bytes:
    """A profile whose string table holds one string of *num_bytes* zero bytes (900 MiB in
    the issue: a 917 KB file)."""
    def parts():
        yield SAMPLE_TYPE + STRINGS + varint(6 << 3 | 2) + varint(num_bytes)
        yield from _repeat(b"\0", num_bytes)
    return gzipped(parts())


def many_empty_strings(count: int) -> bytes:
    """A profile of *count* empty strings (268 M in the issue: a 522 KB file)."""
    def parts():
        yield SAMPLE_TYPE + STRINGS
        yield from _repeat(b"\x32\x00", count)
    return gzipped(parts())


def deep_samples(num_samples: int, depth: int) -> bytes:
    """*num_samples* samples of one stack *depth* locations deep (40,000 x 10**4 in the issue:
    5.9 MB)."""
    ids = b"".join(varint(i) for i in range(1, depth + 1))
    sample = field(2, field(1, ids) + field(2, b"\x01"))
    locations = b"".join(field(4, b"\x08" + varint(i)) for i in range(1, depth + 1))

    def parts():
        yield SAMPLE_TYPE + STRINGS + locations
        yield from _repeat(sample, num_samples)
    return gzipped(parts())
