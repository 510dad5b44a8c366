"""Files built to hurt a Tachyon reader (issue 13, "Hostile input"), crafted byte by byte.

The sample regions that expand to a GiB or more are zstd frames of RLE blocks (RFC 8878
§3.1.1.2: a 3-byte block header and one byte stand for up to 128 KiB of that byte), so a
1 GiB region costs 32 KB to build and store, and nothing here compresses anything.
"""

from __future__ import annotations

import functools

from tachyon_format.formats.tachyon import zstd
from tests.formats.tachyon.region.helpers import prefix, uleb
from tests.formats.tachyon.region.helpers import tachyon_file as region_tests_file

BLOCK_MAX = 128 << 10  # the largest zstd block
GIB = 1 << 30
REPEAT = 0


def zstd_frame(*parts: bytes | tuple[int, int]) -> bytes:
    """One zstd frame without a content size: each part is raw bytes, or ``(byte, n)``:
    *n* copies of *byte* as RLE blocks."""
    blocks = []
    for part in parts:
        if isinstance(part, tuple):
            byte, n = part
            while n:
                size = min(n, BLOCK_MAX)
                blocks.append([1, size, bytes([byte])])
                n -= size
        else:
            for start in range(0, len(part), BLOCK_MAX):
                chunk = part[start:start + BLOCK_MAX]
                blocks.append([0, len(chunk), chunk])
    if not blocks:
        blocks.append([0, 0, b""])
    out = [zstd.ZSTD_MAGIC, bytes([0x00, (17 - 10) << 3])]  # window 128 KiB
    for i, (kind, size, body) in enumerate(blocks):
        last = i == len(blocks) - 1
        out.append((last | kind << 1 | size << 3).to_bytes(3, "little") + body)
    return b"".join(out)


tachyon_file = functools.partial(region_tests_file, compressed=True)
"""A little-endian file around *region*, a zstd frame (the region tests' builder)."""


def repeat_head(count: int, tid: int = 1) -> bytes:
    return prefix(tid, 0, REPEAT) + uleb(count)


# -- the classes of the issue ----------------------------------------------------------------

def declared_2_29_samples() -> bytes:
    """A tiny file whose header declares 2**29 samples, and a zstd region of one sample."""
    region = prefix(1, 0, 1) + b"\x00\x00\x01\x00"
    return tachyon_file(zstd_frame(region), sample_count=2**29)


def huge_rle_counts() -> bytes:
    """A REPEAT claiming 2**31 entries at the start of a 1 GiB region (of which CPython
    finds at most 2**29 possible: it rejects it at once)."""
    head = repeat_head(2**31)
    return tachyon_file(zstd_frame(head, (0, GIB - len(head))), sample_count=2**31)


def zero_count_repeats(size: int = GIB) -> bytes:
    """*size* zero bytes: REPEAT records of thread 0 that hold no sample (14 bytes each);
    valid when *size* is a multiple of 14 (this file then has 0 samples)."""
    size -= size % 14
    return tachyon_file(zstd_frame((0, size)), sample_count=0)


def bomb(size: int = 8 * GIB) -> bytes:
    """A zstd frame expanding to *size* zero bytes (beyond the 1 GiB cap)."""
    return tachyon_file(zstd_frame((0, size)), sample_count=0)


def many_samples(count: int = (GIB - 18) // 2) -> bytes:
    """A *valid* file of one REPEAT of *count* samples (2 zero bytes each): 536 M samples
    in a 1 GiB region by default."""
    head = repeat_head(count)
    return tachyon_file(zstd_frame(head, (0, 2 * count)), sample_count=count)


def leading_frame(kind: str) -> bytes:
    """A valid one-sample file whose region starts with an ``empty`` zstd frame or a
    ``skippable`` one, before the frame holding the records."""
    region = prefix(1, 0, 1) + b"\x00\x00\x01\x00"
    first = zstd_frame() if kind == "empty" else (
        (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc")
    return tachyon_file(first + zstd_frame(region), sample_count=1)


def killed(region: bytes) -> bytes:
    """What a profiler killed before it finished leaves: the all-zero placeholder header, then
    *region* (records, or a zstd frame of them)."""
    return bytes(64) + region


# -- the classes of issue 21 (the salvage path) ------------------------------------------------

def rle_count_u32_max(size: int = (256 << 10) + 200, *, compressed: bool = True) -> bytes:
    """A REPEAT claiming 2**32 - 1 entries at the start of a *size*-byte region of zero bytes
    (more than the 256 KiB after which a record can only be a long REPEAT)."""
    head = repeat_head(2**32 - 1)
    region = head + bytes(size - len(head))
    return (tachyon_file(zstd_frame(region), sample_count=1) if compressed
            else region_tests_file(region, sample_count=1))


def frame_index(index: int = 2**31 - 1) -> bytes:
    """One FULL record of one frame, *index*: beyond the file's one-frame table (and any
    table's, but that salvage, which has no table to go by, takes every index below 2**31)."""
    return region_tests_file(prefix(1, 0, 1) + b"\x00\x00\x01" + uleb(index), sample_count=1)


# -- the slow classes (issue 21): records a reader cannot batch, at a ratio of ~10^4 ----------

def pattern_file(unit: bytes, size: int, *, samples_per_unit: int, head: bytes = b"",
                 num_frames: int = 1) -> bytes:
    """A file whose region is *head* then *unit* repeated to about *size* bytes (whole units),
    compressed as it is made (level 1), so that a GiB region is never held whole."""
    count = (size - len(head)) // len(unit)
    compressor = zstd.StreamCompressor(level=1)
    parts = [compressor.compress(head)]
    per_chunk = max(1, (4 << 20) // len(unit))
    chunk = unit * per_chunk
    for start in range(0, count, per_chunk):
        n = min(per_chunk, count - start)
        parts.append(compressor.compress(chunk if n == per_chunk else unit * n))
    parts.append(compressor.finish())
    head_samples = 1 if head else 0
    return tachyon_file(b"".join(parts), sample_count=head_samples + samples_per_unit * count,
                        num_frames=num_frames)


EMPTY_REPEAT = repeat_head(0)


def noncanonical_empty_repeats(size: int = GIB) -> bytes:
    """REPEATs of no sample whose count is written ``80 00`` (15 bytes each): no sample."""
    return pattern_file(prefix(1, 0, REPEAT) + b"\x80\x00", size, samples_per_unit=0)


def empty_repeats_and_full0(size: int = 16 << 20) -> bytes:
    """An empty REPEAT, then a FULL of depth 0 (delta 0, status 0): one sample a pair."""
    return pattern_file(EMPTY_REPEAT + prefix(1, 0, 1) + b"\x00\x00\x00", size,
                        samples_per_unit=1)


def empty_repeats_and_repeat1(size: int = 16 << 20) -> bytes:
    """An empty REPEAT, then a REPEAT of one sample: one sample a pair."""
    return pattern_file(EMPTY_REPEAT + repeat_head(1) + b"\x00\x00", size,
                        samples_per_unit=1)


def empty_repeats_and_pop_push0(size: int = 64 << 20) -> bytes:
    """An empty REPEAT, then a POP_PUSH popping and pushing nothing: one sample a pair."""
    return pattern_file(EMPTY_REPEAT + prefix(1, 0, 3) + b"\x00\x00\x00\x00", size,
                        samples_per_unit=1)


def suffix_new0(size: int = 54 << 20) -> bytes:
    """A FULL of one frame, then SUFFIX records sharing it and adding none (17 bytes each):
    3.3 M samples in 54 MiB by default."""
    return pattern_file(prefix(1, 0, 2) + b"\x00\x00\x01\x00", size, samples_per_unit=1,
                        head=prefix(1, 0, 1) + b"\x00\x00\x01\x00")


def ones(size: int = 32 << 20) -> bytes:
    """A region of ``0x01`` bytes: FULL records of thread 0x0101010101010101, delta 1,
    status 1, depth 1, frame 1 (17 bytes each), every id byte alike."""
    return pattern_file(b"\x01" * 17, size, samples_per_unit=1, num_frames=2)


SLOW_CLASSES = {
    "noncanonical_empty_repeats": noncanonical_empty_repeats,
    "empty_repeats_and_full0": empty_repeats_and_full0,
    "empty_repeats_and_repeat1": empty_repeats_and_repeat1,
    "empty_repeats_and_pop_push0": empty_repeats_and_pop_push0,
    "suffix_new0": suffix_new0,
    "ones": ones,
}
"""Issue 21's classes at their full sizes (the default argument of each builder)."""


CLASSES = {
    "declared_2_29_samples": declared_2_29_samples,
    "huge_rle_counts": huge_rle_counts,
    "zero_count_repeats": zero_count_repeats,
    "bomb_8gib": bomb,
    "many_samples": many_samples,
    "leading_empty_frame": lambda: leading_frame("empty"),
    "leading_skippable_frame": lambda: leading_frame("skippable"),
}
