"""Mutations of real Tachyon files aimed at the reader's limits (issue 13): shared by the
hostile-input hypothesis suite and the differential test against CPython's reader.

A mutation takes a parsed golden file and a ``random.Random`` and returns new file bytes.
Region mutations work on the logical (decompressed) region, at the records' own offsets
(from ``read()``'s record table), and put the region back (recompressed for zstd files, the
header's table offsets moved by the change in length); file mutations patch the header,
the footer, the zstd frame or cut the file at a section boundary.
"""

from __future__ import annotations

import functools
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import tachyon_format
from tachyon_format.formats.tachyon import zstd
from tests.helpers.models import canonical as uleb
from tests.helpers.paths import DATA_DIR

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
HUGE = (0, 1, 2, 255, 256, 257, 2**29, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1)


class Golden(NamedTuple):
    data: bytes
    region: bytes  # logical
    compressed: bool
    offsets: list[int]  # region offset of every record
    encodings: list[int]
    sections: list[int]  # file offsets where sections start


@functools.cache
def golden(path: Path) -> Golden:
    data = path.read_bytes()
    str_off, frame_off = struct.unpack_from("<QQ", data, 40)
    compressed = struct.unpack_from("<I", data, 56)[0] == 1
    region = data[64:str_off]
    if compressed:
        region = zstd.decompress(region)
    records = tachyon_format.read(path).extras["tachyon"].records
    size = len(data)
    sections = sorted({64, str_off, frame_off, size - 32, max(size - 88, 64)})
    return Golden(data, region, compressed, records.offset.tolist(),
                  records.encoding.tolist(), sections)


def embed(g: Golden, region: bytes, *, recompress: bool = True) -> bytes:
    """The file with its logical region replaced (and the table offsets moved)."""
    str_off, frame_off = struct.unpack_from("<QQ", g.data, 40)
    stored = zstd.compress_region(region) if g.compressed and recompress else region
    delta = len(stored) - (str_off - 64)
    head = bytearray(g.data[:64])
    struct.pack_into("<QQ", head, 40, str_off + delta, frame_off + delta)
    return bytes(head) + stored + g.data[str_off:]


def _record(g: Golden, rng: random.Random) -> int:
    return rng.choice(g.offsets) if g.offsets else 0


def _varint_at(region: bytes, pos: int) -> int:
    """The end of the varint at *pos* (at most 11 bytes on)."""
    end = pos
    while end < len(region) and end - pos < 11 and region[end] & 0x80:
        end += 1
    return min(end + 1, len(region))


# -- region mutations ---------------------------------------------------------------------

def flip_bit(g: Golden, rng: random.Random) -> bytes:
    r = bytearray(g.region)
    if r:
        r[rng.randrange(len(r))] ^= 1 << rng.randrange(8)
    return embed(g, bytes(r))


def record_byte(g: Golden, rng: random.Random) -> bytes:
    """A byte of a record's prefix or first body bytes set to any value."""
    r = bytearray(g.region)
    at = _record(g, rng) + rng.randrange(20)
    if at < len(r):
        r[at] = rng.randrange(256)
    return embed(g, bytes(r))


def first_varint(g: Golden, rng: random.Random) -> bytes:
    """The first body varint of a record (REPEAT count, or delta) replaced by a huge or
    odd value, or by an overlong encoding."""
    at = _record(g, rng) + 13
    end = _varint_at(g.region, at)
    value = rng.choice(HUGE)
    new = (uleb(value % 2**64) if rng.random() < 0.8
           else b"\xff" * rng.randrange(9, 13) + b"\x01")
    return embed(g, g.region[:at] + new + g.region[end:])


def encoding(g: Golden, rng: random.Random) -> bytes:
    r = bytearray(g.region)
    at = _record(g, rng) + 12
    if at < len(r):
        r[at] = rng.choice([0, 1, 2, 3, 4, rng.randrange(256)])
    return embed(g, bytes(r))


def cut_region(g: Golden, rng: random.Random) -> bytes:
    at = max(0, _record(g, rng) + rng.randrange(-2, 16))
    return embed(g, g.region[:at])


def duplicate(g: Golden, rng: random.Random) -> bytes:
    """A stretch of records repeated many times (more samples than declared)."""
    i = rng.randrange(max(len(g.offsets), 1))
    a = g.offsets[i] if g.offsets else 0
    b = g.offsets[min(i + rng.randrange(1, 4), len(g.offsets) - 1)] if g.offsets else 0
    if b <= a:
        b = len(g.region)
    return embed(g, g.region[:b] + g.region[a:b] * rng.choice([1, 2, 50]) + g.region[b:])


def full_record(g: Golden, rng: random.Random) -> bytes:
    """A FULL record inserted at a record boundary: deep (256, 257, 300 frames), with an
    out-of-range frame index, or of a new thread."""
    at = _record(g, rng)
    tid, iid = struct.unpack_from("<QI", g.region, at) if len(g.region) >= at + 12 else (1, 0)
    if rng.random() < 0.2:
        tid = rng.randrange(2**64)
    depth = rng.choice([0, 1, 255, 256, 257, 300])
    frame = rng.choice([0, 0, 0, 2**31, 2**32 - 1, 10**6])
    rec = (struct.pack("<QIB", tid, iid, 1) + b"\x00\x00" + uleb(depth)
           + uleb(frame) + uleb(0) * max(depth - 1, 0))
    return embed(g, g.region[:at] + rec + g.region[at:])


def huge_repeat(g: Golden, rng: random.Random) -> bytes:
    """A REPEAT claiming many entries, backed by zero entries or not."""
    at = _record(g, rng)
    tid, iid = struct.unpack_from("<QI", g.region, at) if len(g.region) >= at + 12 else (1, 0)
    count = rng.choice([2**12, 2**16, 2**31, 2**32 - 1])
    backed = rng.choice([0, count // 2, count]) if count <= 2**16 else 0
    rec = struct.pack("<QIB", tid, iid, 0) + uleb(count) + bytes(2 * backed)
    return embed(g, g.region[:at] + rec + g.region[at:])


def empty_repeats(g: Golden, rng: random.Random) -> bytes:
    """Many REPEATs of count 0 of a record's thread (legal; never written by CPython)."""
    at = _record(g, rng)
    rec = g.region[at:at + 12] + b"\x00\x00" if len(g.region) >= at + 12 else bytes(14)
    return embed(g, g.region[:at] + rec * rng.choice([1, 2, 1000, 100_000]) + g.region[at:])


# -- file mutations -----------------------------------------------------------------------

def header_field(g: Golden, rng: random.Random) -> bytes:
    d = bytearray(g.data)
    at, fmt = rng.choice([(28, "<Q"), (36, "<I"), (40, "<Q"), (48, "<Q"), (56, "<I"),
                          (60, "<I"), (4, "<I")])
    old = struct.unpack_from(fmt, d, at)[0]
    top = 2 ** (8 * struct.calcsize(fmt)) - 1
    value = rng.choice([0, 1, old + 1, max(old - 1, 0), top, top // 2 + 1, rng.randrange(top)])
    struct.pack_into(fmt, d, at, min(value, top))
    return bytes(d)


def footer_field(g: Golden, rng: random.Random) -> bytes:
    d = bytearray(g.data)
    at = len(d) - 32 + rng.choice([0, 4])
    old = struct.unpack_from("<I", d, at)[0]
    struct.pack_into("<I", d, at, rng.choice([0, old + 1, old + 1000, 2**32 - 1]))
    return bytes(d)


def cut_file(g: Golden, rng: random.Random) -> bytes:
    """The file cut at (or next to) a section boundary."""
    return g.data[:max(0, rng.choice(g.sections) + rng.choice([-1, 0, 1]))]


def zstd_frame(g: Golden, rng: random.Random) -> bytes:
    """The stored zstd region corrupted, cut, or given an extra frame before or after."""
    if not g.compressed:
        return flip_bit(g, rng)
    str_off = struct.unpack_from("<Q", g.data, 40)[0]
    stored = bytearray(g.data[64:str_off])
    kind = rng.randrange(5)
    if kind == 0 and stored:
        stored[rng.randrange(len(stored))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        stored = stored[:rng.randrange(len(stored) + 1)]
    elif kind == 2:
        skippable = (0x184D2A50).to_bytes(4, "little") + (1).to_bytes(4, "little") + b"x"
        stored = rng.choice([zstd.compress_region(b""), skippable]) + stored
    elif kind == 3:
        stored += rng.choice([b"\x00", b"garbage", zstd.compress_region(b"")])
    else:  # a frame expanding past a small cap (see max_region_size in the hostile suite)
        stored = zstd.compress_region(g.region + bytes(rng.choice([0, 4 << 20])))
    return embed(g, bytes(stored), recompress=False)


REGION = [flip_bit, record_byte, first_varint, encoding, cut_region, duplicate, full_record,
          huge_repeat, empty_repeats]
FILE = [header_field, footer_field, cut_file, zstd_frame]
ALL: list[Callable[[Golden, random.Random], bytes]] = REGION + FILE


def mutated(path: Path, rng: random.Random, steps: int = 1) -> bytes:
    """*steps* mutations of the golden file at *path*, one after the other."""
    data = golden(path).data
    for _ in range(steps):
        try:
            g = _parse(data) if data is not golden(path).data else golden(path)
        except Exception:  # (an earlier step broke what later ones need: stop there)
            return data
        data = rng.choice(ALL)(g, rng)
    return data


def _parse(data: bytes) -> Golden:
    """:func:`golden` for bytes that are readable (the records from our reader)."""
    str_off, frame_off = struct.unpack_from("<QQ", data, 40)
    compressed = struct.unpack_from("<I", data, 56)[0] == 1
    region = data[64:str_off]
    if compressed:
        region = zstd.decompress(region)
    records = tachyon_format.read(data).extras["tachyon"].records
    size = len(data)
    return Golden(data, region, compressed, records.offset.tolist(),
                  records.encoding.tolist(),
                  sorted({64, str_off, frame_off, size - 32, max(size - 88, 64)}))


__all__ = ["ALL", "GOLDEN", "golden", "mutated"]
