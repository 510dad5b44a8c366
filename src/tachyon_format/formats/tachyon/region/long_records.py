"""Records the windows of :mod:`.decoder` cannot take whole, in bounded time and memory
(docs/format/limits.md).

* A *long REPEAT*: one record may hold up to 2**32-1 entries (a valid 1 GiB region holds one
  of 536 M samples). Waiting for its end would keep the whole record as the chunk tail and
  scan it again at every chunk; instead its head is read once (:func:`start_long_repeat`)
  and its entries are decoded as they arrive (:func:`repeat_entries`), committed piece by
  piece as one record.
* *Runs of empty REPEATs*: a REPEAT of count 0 is legal (CPython's writer never writes one);
  a region of them (1 GiB of zero bytes is 76 M), each written alike (14 bytes, or more with
  its count of zero in a longer form), is found here at once, vectorised
  (:func:`empty_repeat_run`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import segments, varint
from tachyon_format.kernels.fixed import decode_fixed_at
from tachyon_format.schema.leb128 import ULEB128_MAX_BYTES, scan_uleb128

from .layout import (
    ENCODING_AT,
    INTERPRETER_ID_AT,
    INTERPRETER_ID_SIZE,
    PREFIX_SIZE,
    THREAD_ID_AT,
    THREAD_ID_SIZE,
)
from .records import REPEAT, RecordBatch, RegionFacts

EMPTY_REPEAT_SIZE = PREFIX_SIZE + 1  # a REPEAT whose count (one byte, 0) lists nothing
LONG_TAIL = 1 << 18
"""An incomplete record longer than this can only be a REPEAT (any other is at most
13 + 10 + 1 + 2 * 10 + 256 * 10 bytes, every varint in its longest, non-canonical form)."""

__all__ = ["LongRepeat", "empty_repeat_run", "empty_repeat_size", "repeat_entries",
           "start_long_repeat"]


class LongRepeat(NamedTuple):
    """A REPEAT whose entries are still arriving."""

    offset: int  # region offset of the record
    index: int  # its record number
    thread_id: int
    interpreter_id: int
    left: int  # entries not decoded yet


class Malformed(Exception):
    """An entry's delta is longer than 10 bytes (CPython: a malformed varint)."""


def start_long_repeat(buf: npt.NDArray[np.uint8], pos: int, *, base: int, facts: RegionFacts,
                      index: int) -> tuple[LongRepeat, int]:
    """The head of the REPEAT at ``buf[pos]`` and the position of its first entry. Its
    checks (thread, encoding, count) have been made by :func:`.scan.scan_record`, which
    found the record incomplete."""
    data = memoryview(buf)
    assert data[pos + ENCODING_AT] == REPEAT
    count, p = scan_uleb128(data, pos + PREFIX_SIZE, buf.size)
    head = LongRepeat(
        offset=base + pos, index=index,
        thread_id=int.from_bytes(data[pos + THREAD_ID_AT:pos + THREAD_ID_AT + THREAD_ID_SIZE],
                                 facts.endian),
        interpreter_id=int.from_bytes(data[pos + INTERPRETER_ID_AT:pos + INTERPRETER_ID_AT
                                           + INTERPRETER_ID_SIZE], facts.endian), left=count)
    return head, p


def repeat_entries(b: npt.NDArray[np.uint8], left: int
                   ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8], int]:
    """Vectorised: the complete (delta, status) entries at the start of *b*, at most *left*
    of them: deltas (uint64), statuses, and the bytes they take. Raises :class:`Malformed`
    (after the entries before it, as ``args``) at a delta of more than 10 bytes."""
    n = b.size
    m = min(left, n // 2)
    if m and bool((b[0:2 * m:2] < 0x80).all()):  # one-byte deltas: every other byte
        return b[0:2 * m:2].astype(np.uint64), b[1:2 * m:2].copy(), 2 * m
    ends = np.flatnonzero(b < 0x80)
    # entry starts: 0, and two bytes after any delta's last byte (its status between)
    starts = np.concatenate([np.zeros(1, np.intp), ends + 2])
    starts = starts[starts < n]
    at = np.searchsorted(ends, starts)
    last = ends[np.minimum(at, max(ends.size - 1, 0))] if ends.size else starts
    complete = (at < ends.size) & (last + 1 < n)
    chain = segments.chain_from_first(starts, np.where(complete, last + 2, n + 1), n)
    chain = chain[:left]
    s, e, ok = starts[chain], last[chain], complete[chain]
    stop = int(np.argmin(ok)) if not ok.all() else ok.size
    s, e = s[:stop], e[:stop]
    too_long = np.flatnonzero(e - s >= ULEB128_MAX_BYTES)
    if too_long.size:
        k = int(too_long[0])
        raise Malformed(*_entries(b, s[:k], e[:k]))
    return _entries(b, s, e)


def _entries(b, s, e) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8], int]:
    """The entries whose deltas span ``b[s:e+1]``: deltas, statuses, bytes taken."""
    if not e.size:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint8), 0
    return varint.decode_uleb128_ending_at(b, e, s), b[e + 1], int(e[-1]) + 2


def repeat_piece(head: LongRepeat, deltas: npt.NDArray[np.uint64],
                 statuses: npt.NDArray[np.uint8]) -> RecordBatch:
    """Entries of a long REPEAT as a batch of that one record."""
    return RecordBatch(
        offset=np.array([head.offset], np.int64), encoding=np.array([REPEAT], np.uint8),
        thread_id=np.array([head.thread_id], np.uint64),
        interpreter_id=np.array([head.interpreter_id], np.uint32),
        nsamp=np.array([deltas.size], np.int64), arg=np.zeros(1, np.int64),
        npush=np.zeros(1, np.int64), delta=deltas, status=statuses,
        frames=np.zeros(0, np.int64))


def empty_repeat_run(buf: npt.NDArray[np.uint8], pos: int, *, base: int, order: str
                     ) -> tuple[RecordBatch, int] | None:
    """Vectorised: the REPEATs of count 0 from ``buf[pos]`` on, each written as the first one
    is (the count in one byte, ``00``, or longer: ``80 00``, ``80 80 00``, ...), as a batch
    (their threads are checked when committed) and the size of each; None if fewer than
    two."""
    size = empty_repeat_size(buf, pos)
    m = (buf.size - pos) // size if size else 0
    if m < 2:
        return None
    rows = buf[pos:pos + m * size].reshape(m, size)
    ok = (rows[:, ENCODING_AT] == REPEAT) & (rows[:, size - 1] == 0)
    if size > EMPTY_REPEAT_SIZE:
        ok &= (rows[:, PREFIX_SIZE:size - 1] == 0x80).all(axis=1)
    n = int(np.argmin(ok)) if not ok.all() else m
    if n < 2:
        return None
    at = pos + size * np.arange(n)
    zeros = np.zeros(n, np.int64)
    return RecordBatch(
        offset=at.astype(np.int64) + base, encoding=np.full(n, REPEAT, np.uint8),
        thread_id=decode_fixed_at(buf, at + THREAD_ID_AT, np.dtype(order + "u8")),
        interpreter_id=decode_fixed_at(buf, at + INTERPRETER_ID_AT, np.dtype(order + "u4")),
        nsamp=zeros, arg=zeros, npush=zeros,
        delta=np.zeros(0, np.uint64), status=np.zeros(0, np.uint8),
        frames=np.zeros(0, np.int64)), size


def empty_repeat_size(buf: npt.NDArray[np.uint8], pos: int) -> int:
    """The size of the REPEAT of count 0 at ``buf[pos]`` (its count of zero written in 1 to
    10 bytes, ``80 ... 80 00``), or 0 if there is none there."""
    if buf.size - pos < EMPTY_REPEAT_SIZE or buf[pos + ENCODING_AT] != REPEAT:
        return 0
    count = buf[pos + PREFIX_SIZE:pos + PREFIX_SIZE + ULEB128_MAX_BYTES]
    end = np.flatnonzero(count != 0x80)
    if not end.size or count[end[0]] != 0:
        return 0
    return EMPTY_REPEAT_SIZE + int(end[0])
