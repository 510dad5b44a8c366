"""A valid Tachyon file with a frame table as large as asked: a small real profile (its samples
use its own frames) with generated frames appended to its table, the footer counts and file
size updated. For the memory and time tests of the table scanner (and the benchmark)."""

from __future__ import annotations

import struct

import numpy as np

from tachyon_format.kernels.varint import encode_zigzag
from tachyon_format.schema.tachyon_values import FOOTER_SIZE

from .paths import DATA_DIR

BASE = DATA_DIR / "synthetic_edges_raw.bin"
"""Uncompressed, little-endian, with a statistics block: 19 strings, 17 frames."""


def frame_table_bytes(count: int, num_strings: int, seed: int = 0) -> bytes:
    """*count* frame entries (layout L3) with random fields: string indices below
    *num_strings*, lines and columns of one to three bytes, opcodes 0-255 (255: none), so
    that entries are 7 to 13 bytes and both opcode kinds (terminator or not) occur."""
    rng = np.random.default_rng(seed)
    line = rng.integers(1, 3000, count)
    col = rng.integers(-1, 120, count)
    fields = np.stack([
        rng.integers(0, num_strings, count).astype(np.uint64),
        rng.integers(0, num_strings, count).astype(np.uint64),
        encode_zigzag(line), encode_zigzag(rng.integers(0, 3, count)),
        encode_zigzag(col), encode_zigzag(np.where(col < 0, 0, rng.integers(0, 40, count))),
    ], axis=1)
    nbytes = np.ones(fields.shape, np.int64)
    for k in range(1, 5):
        nbytes += fields >= np.uint64(1 << (7 * k))
    entry_size = nbytes.sum(axis=1) + 1
    entry_end = np.cumsum(entry_size)
    field_end = entry_end[:, None] - 1 - np.cumsum(nbytes[:, ::-1], axis=1)[:, ::-1] + nbytes
    out = np.empty(int(entry_end[-1]) if count else 0, np.uint8)
    out[entry_end - 1] = rng.integers(0, 256, count).astype(np.uint8)  # the opcode byte
    start = field_end - nbytes
    for k in range(5):
        at = nbytes > k
        group = (fields[at] >> np.uint64(7 * k)) & np.uint64(0x7F)
        out[start[at] + k] = group.astype(np.uint8) | np.where(nbytes[at] > k + 1, 0x80, 0)
    return out.tobytes()


def with_frames(count: int, seed: int = 0) -> bytes:
    """The base profile with *count* generated frames after its own (CPython opens and
    replays it: its samples use the first frames only)."""
    data = BASE.read_bytes()
    frames_at = struct.unpack_from("<Q", data, 48)[0]
    num_strings, num_frames = struct.unpack_from("<II", data, len(data) - FOOTER_SIZE)
    stats_at = _stats_start(data)
    extra = frame_table_bytes(count, num_strings, seed)
    out = bytearray(data[:stats_at] + extra + data[stats_at:])
    footer = len(out) - FOOTER_SIZE
    struct.pack_into("<IIQ", out, footer, num_strings, num_frames + count, len(out))
    assert frames_at < stats_at
    return bytes(out)


def _stats_start(data: bytes) -> int:
    """Where the base file's frame table ends (its statistics block starts)."""
    import io

    import construct as cs

    from tachyon_format.schema import tachyon as spec

    frames_at = struct.unpack_from("<Q", data, 48)[0]
    num_frames = struct.unpack_from("<I", data, len(data) - FOOTER_SIZE + 4)[0]
    stream = io.BytesIO(data[frames_at:])
    cs.Array(num_frames, spec.FRAME).parse_stream(stream)
    return frames_at + stream.tell()
