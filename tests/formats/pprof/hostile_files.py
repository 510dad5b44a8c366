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


def _streamed_field(number: int, head: bytes, piece: bytes, count: int,
                    tail: bytes = b"") -> Iterator[bytes]:
    """A LEN field of *number* whose payload is *head*, *piece* *count* times, *tail*,
    streamed."""
    yield varint(number << 3 | 2) + varint(len(head) + len(piece) * count + len(tail)) + head
    yield from _repeat(piece, count)
    yield tail


def many_empty_entries(number: int, count: int) -> bytes:
    """A profile of *count* empty messages of the top-level table field *number* (3:
    mappings, 4: locations, 5: functions): 2 bytes of message each."""
    def parts():
        yield SAMPLE_TYPE + STRINGS
        yield from _repeat(varint(number << 3 | 2) + b"\0", count)
    return gzipped(parts())


def many_lines(count: int) -> bytes:
    """One location (id 1) of *count* empty lines, and one sample of it."""
    def parts():
        yield SAMPLE_TYPE + STRINGS + field(2, field(1, b"\x01") + field(2, b"\x01"))
        yield from _streamed_field(4, b"\x08\x01", field(4, b""), count)
    return gzipped(parts())


def one_giant_sample(num_ids: int = 0, num_values: int = 1, location_id: int = 1) -> bytes:
    """One location and one sample that lists it *num_ids* times and has *num_values*
    values (10**7 ids: a 10 MB message in a 10 KB file)."""
    def parts():
        yield SAMPLE_TYPE + STRINGS + field(4, b"\x08" + varint(location_id))
        ids = list(_streamed_field(1, b"", varint(location_id), num_ids))
        values = list(_streamed_field(2, b"", b"\x01", num_values))
        size = sum(map(len, ids)) + sum(map(len, values))
        yield varint(2 << 3 | 2) + varint(size)
        yield from ids
        yield from values
    return gzipped(parts())
