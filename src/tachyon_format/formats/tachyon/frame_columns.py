"""The frame table's columns, allocated once and filled by one of two scans with the same
results (the tests compare them): the record walk's compiled loop
(:func:`~.region.walk.scan_frame_table`, a chunk of entries per call), or numpy a window of
bytes at a time (tier c). Both stop before the first entry that does not parse; saying what
breaks in it is :mod:`.tables`' job.

The numpy scan: an entry is six varints and an opcode byte, so its varints end at six
consecutive terminators (bytes below 0x80), and the opcode byte after them is a seventh
when it is below 0x80 too. The entries' first terminators are found by
:func:`~tachyon_format.kernels.short_steps.walk_short_steps` (each entry's step is 6 or 7
terminators), then each field is decoded from its first and last byte, widened to 64 bits
only where it is longer than one byte.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.short_steps import walk_short_steps
from tachyon_format.kernels.varint import decode_uleb128_at, decode_zigzag
from tachyon_format.model import Frames
from tachyon_format.schema.leb128 import U32_MAX, ULEB128_MAX_BYTES
from tachyon_format.schema.tachyon_values import OPCODE_NONE

CHUNK = 1 << 16
"""Entries a call of the compiled scan decodes at most: the scratch it needs (the entries'
starts, before they are narrowed) stays small whatever the table's size."""

WINDOW = 1 << 19
"""Bytes decoded at a time by the numpy scan: what the read holds beyond its columns is a few
times this, whatever the table's size (and a window that stays in cache is faster than a
larger one: 512 KiB measured best of 256 KiB to 2 MiB)."""


class FrameColumns:
    """The frame table's columns, allocated once for *cap* entries (and the entries' offsets
    in a file of *size* bytes, when asked)."""

    def __init__(self, cap: int, size: int | None) -> None:
        self.cap = cap
        self.count = 0
        self.filename = np.empty(cap, np.uint32)
        self.funcname = np.empty(cap, np.uint32)
        self.lineno = np.empty(cap, np.int32)
        self.end_lineno = np.empty(cap, np.int32)
        self.column = np.empty(cap, np.int32)
        self.end_column = np.empty(cap, np.int32)
        self.opcode = np.empty(cap, np.int16)
        self.offsets = np.empty(cap if size is not None else 0, offset_dtype(size or 0))

    def scan(self, walk, data: memoryview, at: int, stop: int) -> int:
        """Fill the columns from the entry at file offset *at* of *data* (the whole file),
        none starting at or after *stop*, with *walk*'s ``scan_frame_table``; returns where
        the next entry starts."""
        scratch = np.empty(min(self.cap, CHUNK) if self.offsets.size else 0, np.int64)
        while self.count < self.cap:
            i = self.count
            room = min(self.cap - i, CHUNK)
            rows = slice(i, i + room)
            found, at = walk.scan_frame_table(
                data, at, stop, self.filename[rows], self.funcname[rows], self.lineno[rows],
                self.end_lineno[rows], self.column[rows], self.end_column[rows],
                self.opcode[rows], scratch[:room])
            if self.offsets.size:
                self.offsets[i : i + found] = scratch[:found]
            self.count += found
            if found < room:
                break
        return at

    def scan_windows(self, b: npt.NDArray[np.uint8], at: int, stop: int | None) -> int:
        """:meth:`scan` with numpy, a window of *b* (the whole file) at a time."""
        n = b.size
        while self.count < self.cap and (stop is None or at < stop):
            window = b[at : min(at + WINDOW, n)]
            entries = _window_entries(window, self.cap - self.count)
            if entries is None:
                # no whole entry in the window: at the end of the file the entry is cut
                # short, elsewhere one of its fields is longer than 10 bytes
                break
            term, rank = entries
            starts = _entry_starts(term, rank)
            keep = rank.size if stop is None else int(np.searchsorted(starts, stop - at))
            bad = self._add(window, at, term, rank[:keep], starts[:keep])
            if bad is not None:
                return at + int(starts[bad])
            if keep < rank.size:
                return at + int(starts[keep])
            at += int(term[rank[-1] + 5]) + 2
        return at

    def _add(self, window, at: int, term, rank, starts) -> int | None:
        """Decode the entries of *window* (at file offset *at*) up to the first that is not
        valid, whose index in the window it returns (None if all are)."""
        count = rank.size
        bad = np.zeros(count, bool)
        values = []
        first = starts
        for k in range(6):
            last = term[rank + k]
            values.append(_u32_varints(window, first, last, bad))
            first = last + 1
        opcode_at = last + 1
        stop = int(np.argmax(bad)) if bad.any() else count
        i = slice(self.count, self.count + stop)
        self.filename[i] = values[0][:stop]
        self.funcname[i] = values[1][:stop]
        lineno, end_delta, column, end_column_delta = (decode_zigzag(v[:stop]) for v in values[2:])
        rebase_positions(lineno, end_delta, out=self.end_lineno[i])
        rebase_positions(column, end_column_delta, out=self.end_column[i])
        self.lineno[i] = lineno
        self.column[i] = column
        opcode = self.opcode[i]
        opcode[:] = window[opcode_at[:stop]]
        opcode[opcode == OPCODE_NONE] = -1
        if self.offsets.size:
            np.add(starts[:stop], at, out=self.offsets[i], casting="unsafe")
        self.count += stop
        return None if stop == count else stop

    def done(self) -> tuple[Frames, np.ndarray]:
        """The columns and the offsets (copied when the table came out shorter than
        allocated)."""
        n = self.count
        cut = (lambda a: a[:n].copy()) if n < self.cap else (lambda a: a)
        frames = Frames(*(cut(a) for a in (self.filename, self.funcname, self.lineno,
                                            self.end_lineno, self.column, self.end_column,
                                            self.opcode)))
        return frames, cut(self.offsets) if self.offsets.size else self.offsets


def rebase_positions(start: np.ndarray, delta: np.ndarray,
                     out: np.ndarray | None = None) -> np.ndarray:
    """``-1 if start == -1 else start + delta`` in int32 arithmetic (C's wrap-around)."""
    end = np.add(start, delta, out=out, dtype=np.int32, casting="unsafe")  # wraps like C
    end[start == -1] = -1
    return end


def offset_dtype(size: int) -> type[np.integer]:
    """The narrowest dtype of the offsets into a file of *size* bytes."""
    return np.uint32 if size <= U32_MAX else np.int64


def _window_entries(window: npt.NDArray[np.uint8], limit: int):
    """The whole entries (at most *limit*) that start at the start of *window*: the positions
    of the varint terminators (bytes below 0x80) and the rank among them of each entry's
    first terminator; None if not even one entry fits."""
    term = np.flatnonzero(window < 0x80).astype(np.int32)  # (a window is far below 2 GiB)
    t = term.size
    if t < 6:
        return None
    # from the entry whose first field ends at terminator r, the next one's first field ends
    # at r + 6, or at r + 7 when the opcode byte after the sixth is itself below 0x80
    nxt = np.arange(6, t + 6, dtype=np.int32)
    nxt[: t - 6] += np.diff(term[5:]) == 1
    nxt[t - 5 :] = t  # t: the path stops (not six varints left in the window)
    rank = walk_short_steps(nxt, 7, 6)
    del nxt
    # the path ends with the entry that is not whole within the window, if any
    whole = rank.size
    if whole and (rank[-1] + 5 >= t or term[rank[-1] + 5] + 1 >= window.size):
        whole -= 1
    if not whole:
        return None
    return term, rank[: min(whole, limit)]


def _entry_starts(term: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Where each entry starts in its window: 0, then two bytes after the previous entry's
    sixth terminator (past its opcode byte)."""
    starts = np.empty(rank.size, np.int32)
    starts[0] = 0
    np.add(term[rank[:-1] + 5], 2, out=starts[1:])
    return starts


def _u32_varints(window, first, last, bad) -> npt.NDArray[np.uint32]:
    """The u32 varints from *first* to *last* (their terminator) in *window*, marking in *bad*
    those that are not one (over 10 bytes, or a value beyond u32)."""
    values = window[last].astype(np.uint32)  # one byte: the terminator is the value
    multi = np.flatnonzero(last != first)
    if not multi.size:
        return values
    end = last[multi]
    length = end - first[multi] + 1
    wide = decode_uleb128_at(window, end, length)  # (mod 2**64, like CPython's reader)
    bad[multi[(length > ULEB128_MAX_BYTES) | (wide > U32_MAX)]] = True
    values[multi] = wide.astype(np.uint32)
    return values
