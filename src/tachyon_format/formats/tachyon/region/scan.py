"""Sequential reader of one sample-region record with CPython's checks, in CPython's order
and with its messages (tier d): the fallback of the vectorised decoder in :mod:`.samples` for
new interpreters, status bytes >= 0x80, the first record of a window that the vectorised
search cannot place, and malformed or truncated input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.kernels.varint import U32_MAX
from tachyon_format.schema import tachyon as spec

if TYPE_CHECKING:
    from .decoder import SampleDecoder

REPEAT, FULL, SUFFIX, POP_PUSH = (int(e) for e in spec.Encoding)
PREFIX_SIZE = spec.RECORD_PREFIX_SIZE
MAX_DEPTH = spec.MAX_STACK_DEPTH

__all__ = ["Incomplete", "scan_record"]


class Incomplete(Exception):
    """The record at this offset runs past the available (non-final) data."""


def _scan_varint(data, pos: int, end: int, final: bool, message: str, u32: bool):
    """Scan: one ULEB128 as CPython reads it; raises *message* (a str) on failure."""
    result = 0
    shift = 0
    while True:
        if pos >= end:
            if not final:
                raise Incomplete
            raise _VarintError(message)
        byte = int(data[pos])
        pos += 1
        result |= ((byte & 0x7F) << shift) & 0xFFFFFFFFFFFFFFFF
        if byte < 0x80:
            break
        shift += 7
        if shift >= 64:
            raise _VarintError(message)
    if u32 and result > U32_MAX:
        raise _VarintError(message)
    return result, pos


class _VarintError(Exception):
    pass


_GENERIC = "Invalid or incomplete varint in binary data"


def scan_record(dec: SampleDecoder, data, pos, end, final, base, depth, nparsed):
    """Scan: one record with CPython's checks in CPython's order (tier d, fallback path).

    *depth* overlays the decoder's per-thread depths for records parsed but not committed.
    """
    off = base + pos

    def fail(msg):
        raise FormatError(msg, offset=off, record=dec._records + nparsed, region=True)

    if end - pos < PREFIX_SIZE:
        if not final:
            raise Incomplete
        fail(f"Truncated sample data: {end - pos} trailing bytes")
    tid = int(np.frombuffer(data[pos:pos + 8].tobytes(), dec._tid_dtype)[0])
    iid = int(np.frombuffer(data[pos + 8:pos + 12].tobytes(), dec._iid_dtype)[0])
    enc = int(data[pos + 12])
    row = dec._thread_row.get((iid, tid))
    if row is None:
        if len(dec._tids) >= dec.thread_count:
            fail("Invalid thread count: sample data contains more unique threads than "
                 f"declared in header (declared {dec.thread_count}, found at least "
                 f"{len(dec._tids) + 1})")
        row = dec._new_thread((iid, tid))
    if enc > POP_PUSH:
        fail(f"Unknown stack encoding: {enc}")
    cur = depth.get(row, int(dec._depth[row]))
    p = pos + PREFIX_SIZE
    deltas, statuses, frames = [], [], []
    arg = npush = 0

    def sample(p, in_rle):
        """One (delta, status) pair at *p*; returns the position after it."""
        malformed, truncated = (
            ("Malformed varint in RLE sample data", "Unexpected end of sample data in RLE")
            if in_rle else ("Malformed varint in sample data", "Unexpected end of sample data"))
        d, p = _scan_varint(data, p, end, final, malformed, False)
        if p >= end:
            if not final:
                raise Incomplete
            fail(truncated)
        deltas.append(d)
        statuses.append(int(data[p]))
        return p + 1

    try:
        if enc == REPEAT:
            count, p = _scan_varint(data, p, end, final, "Malformed varint for RLE count", True)
            if final and count > (end - p) // 2:
                fail(f"Invalid RLE count {count} exceeds maximum possible {(end - p) // 2}")
            for _ in range(count):
                p = sample(p, in_rle=True)
            nsamp = count
        else:
            p = sample(p, in_rle=False)
            nsamp = 1
            if enc == FULL:
                npush, p = _scan_varint(data, p, end, final, _GENERIC, True)
                if npush > MAX_DEPTH:
                    fail(f"Stack depth {npush} exceeds capacity {MAX_DEPTH}")
                keep = 0
            else:
                arg, p = _scan_varint(data, p, end, final, _GENERIC, True)
                npush, p = _scan_varint(data, p, end, final, _GENERIC, True)
                if enc == SUFFIX:
                    if arg > cur:
                        fail(f"Shared count {arg} exceeds current stack depth {cur}")
                    keep = arg
                else:
                    keep = max(cur - arg, 0)
                if keep + npush > MAX_DEPTH:
                    fail(f"Final stack depth {keep + npush} exceeds capacity {MAX_DEPTH}")
            for _ in range(npush):
                f, p = _scan_varint(data, p, end, final, _GENERIC, True)
                frames.append(f)
            for f in frames:
                if f >= dec.frame_count:
                    fail(f"Invalid frame index: {f}")
                if not dec._frame_ok[f]:
                    fail("Invalid string index in frame")
            depth[row] = keep + npush
    except _VarintError as exc:
        fail(str(exc))
    rec = {"offset": off, "encoding": enc, "tid": tid, "iid": iid, "nsamp": nsamp,
           "arg": arg, "npush": npush, "delta": deltas, "status": statuses, "frames": frames}
    return rec, p
