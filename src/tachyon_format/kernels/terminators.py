"""Rank and select over the terminator bytes (``< 0x80``) of a varint stream.

Every varint ends at a byte below 0x80, so "the n-th varint after position p" is "the
terminator of rank rank(p) + n": these indexes answer both questions for whole arrays of
queries, without an int64 per byte of the buffer.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import ULEB128_MAX_BYTES

from .segments import decode_ragged_ranges
from .varint import decode_uleb128_ending_at


class TerminatorIndex:
    """Vectorised rank and select over the terminator bytes (``< 0x80``) of a buffer.

    Two layouts answer the same questions: :class:`SparseTerminatorIndex` keeps only the
    continuation bytes (a Tachyon region recorded at a high rate is almost all one-byte
    varints), :class:`DenseTerminatorIndex` keeps every terminator (when varints of two bytes
    or more are common, searching among the continuation bytes costs more than 8 bytes of
    index per terminator). :meth:`of` picks one."""

    #: continuation bytes per byte above which the dense layout is used
    DENSE_ABOVE = 1 / 16

    buf: npt.NDArray[np.uint8]
    count: int  # number of terminators

    @staticmethod
    def of(buf: npt.NDArray[np.uint8]) -> TerminatorIndex:
        cont = np.flatnonzero(buf >= 0x80)
        if cont.size > TerminatorIndex.DENSE_ABOVE * buf.size:
            return DenseTerminatorIndex(buf)
        return SparseTerminatorIndex(buf, cont)

    def varints_ending_at(self, pos: npt.NDArray[np.integer]) -> npt.NDArray[np.uint64]:
        """Values of the ULEB128s whose terminators are at *pos*, each taken to start after
        the previous terminator (:func:`decode_uleb128_ending_at`)."""
        return decode_uleb128_ending_at(self.buf, pos)

    def varints_at(self, pos: npt.NDArray[np.intp], multi: npt.NDArray[np.intp]):
        """Values of the ULEB128s ending at the terminators *pos*, given which of them
        (indices *multi*) follow a continuation byte, as :meth:`select_runs` reports."""
        values = np.take(self.buf, pos).astype(np.uint64)
        if multi.size:
            values[multi] = decode_uleb128_ending_at(self.buf, pos[multi])
        return values


class DenseTerminatorIndex(TerminatorIndex):
    """:class:`TerminatorIndex` holding the position of every terminator."""

    def __init__(self, buf: npt.NDArray[np.uint8]) -> None:
        self.buf = buf
        self.ends = np.flatnonzero(buf < 0x80)
        self.count = self.ends.size

    def rank(self, pos: npt.NDArray[np.integer], *, ordered: bool = False) -> npt.NDArray[np.intp]:
        """Number of terminators before each position (0 <= pos <= size)."""
        return np.searchsorted(self.ends, pos, side="left")

    def select(self, k: npt.NDArray[np.integer], *, ordered: bool = False) -> npt.NDArray[np.intp]:
        """Position of the ``k``-th terminator (0-based; ``0 <= k < count``)."""
        return self.ends[k]

    def select_runs(
        self, first: npt.NDArray[np.integer], count: npt.NDArray[np.integer], step: int = 1
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """See :meth:`SparseTerminatorIndex.select_runs`."""
        pos = self.ends[decode_ragged_ranges(first, count, step)]
        # at position 0 the clipped index reads the terminator itself: one byte
        multi = np.flatnonzero(np.take(self.buf, pos - 1, mode="clip") >= 0x80)
        return pos, multi

    def long_varint_ends(self, length: int = ULEB128_MAX_BYTES) -> npt.NDArray[np.intp]:
        """See :meth:`SparseTerminatorIndex.long_varint_ends`."""
        if not self.ends.size:
            return self.ends
        run = np.empty(self.ends.size, np.intp)  # continuation bytes before each terminator
        run[0] = self.ends[0]
        np.subtract(self.ends[1:], self.ends[:-1], out=run[1:])
        run[1:] -= 1
        return self.ends[run >= length]


class SparseTerminatorIndex(TerminatorIndex):
    """:class:`TerminatorIndex` holding the sorted positions of the continuation bytes only."""

    # select_runs: above this share of ranks in runs with continuation bytes inside, one
    # step-up pass over all ranks beats fixing those runs rank by rank
    STEPPED_ABOVE = 0.25

    def __init__(self, buf: npt.NDArray[np.uint8], cont: npt.NDArray[np.intp] | None = None):
        self.buf = buf
        self.cont = np.flatnonzero(buf >= 0x80) if cont is None else cont
        self.count = buf.size - self.cont.size
        # terminators before each continuation byte: non-decreasing, the key of select()
        self._before_cont = self.cont - np.arange(self.cont.size)

    def rank(self, pos: npt.NDArray[np.integer], *, ordered: bool = False) -> npt.NDArray[np.intp]:
        """Number of terminators before each position (0 <= pos <= size); *ordered* says
        that *pos* is non-decreasing (the fast case)."""
        if not self.cont.size:
            return np.asarray(pos, np.intp)
        return pos - _count_at_most(self.cont, pos, ordered, strict=True)

    def select(self, k: npt.NDArray[np.integer], *, ordered: bool = False) -> npt.NDArray[np.intp]:
        """Position of the ``k``-th terminator (0-based; ``0 <= k < count``); *ordered* says
        that *k* is non-decreasing (the fast case).

        The continuation bytes before it are those with at most ``k`` terminators before
        them."""
        if not self.cont.size:
            return np.asarray(k, np.intp)
        return k + _count_at_most(self._before_cont, k, ordered, strict=False)

    def select_runs(
        self, first: npt.NDArray[np.integer], count: npt.NDArray[np.integer], step: int = 1
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """Positions of the terminators of ranks ``first[r] + step * i`` (``i < count[r]``)
        for increasing, non-overlapping runs, concatenated; and the indices, into that
        result, of the terminators that follow a continuation byte (the multi-byte varints).

        ``select(decode_ragged_ranges(first, count, step))`` without the per-rank search:
        the continuation bytes counted before a run's first rank are one search per run,
        and only runs with continuation bytes inside (multi-byte varints after their
        first, rare in sample payloads) need work per rank."""
        first = np.asarray(first, np.intp)
        count = np.asarray(count, np.intp)
        total = int(count.sum())
        start = np.cumsum(count)
        start -= count  # index of each run's first rank
        keys = self._before_cont
        before = np.searchsorted(keys, first, side="right") if keys.size else 0
        out = np.repeat(first - step * start + before, count)
        out += _steps(step, total)
        if not keys.size or not total:
            return out, np.zeros(0, np.intp)
        within = np.searchsorted(keys, first + step * (count - 1), side="right") - before
        inner = np.flatnonzero((within > 0) & (count > 0))
        # a key equal to a run's first rank makes that first terminator a multi-byte one
        opens = (before > 0) & (count > 0)
        opens[opens] = keys[before[opens] - 1] == first[opens]
        multi = start[opens]
        if not inner.size:
            return out, multi
        touched = count[inner]
        if int(touched.sum()) > self.STEPPED_ABOVE * total:  # many: one pass over all
            return self._select_runs_stepped(first, count, step, start, total)
        # the keys inside each such run, and the index where each one steps the count up
        key_at = decode_ragged_ranges(before[inner], within[inner])
        run = np.repeat(inner, within[inner])
        offset = keys[key_at] - first[run]  # > 0
        at = start[run] - (-offset // step)  # the first rank at or after the key
        idx = decode_ragged_ranges(start[inner], touched)
        keys_before = np.cumsum(within[inner])
        keys_before -= within[inner]
        out[idx] += np.searchsorted(at, idx, side="right") - np.repeat(keys_before, touched)
        exact = at[offset % step == 0]
        # (not np.union1d: its first call imports numpy.ma, some 25 ms)
        multi = _unique_sorted(np.sort(np.concatenate([multi, exact])))
        return out, multi

    def _select_runs_stepped(self, first, count, step, start, total):
        """:meth:`select_runs` with one step-up pass over all the ranks."""
        out = np.repeat(first - step * start, count)
        out += _steps(step, total)
        # only the continuation bytes among the listed ranks matter; those before count once
        keys = self._before_cont
        lo = int(np.searchsorted(keys, first[0], side="left"))
        hi = int(np.searchsorted(keys, out[-1], side="right"))  # out holds the ranks yet
        at, exact = self._first_at_least(keys[lo:hi], first, count, start, step)
        # the continuation bytes counted before each rank: a step up at every `at`
        bounds = np.empty(at.size + 2, np.intp)
        bounds[0], bounds[-1] = 0, total
        bounds[1:-1] = at
        out += np.repeat(np.arange(lo, lo + at.size + 1, dtype=np.intp), np.diff(bounds))
        # a terminator of rank exactly `before_cont` ends the varint holding that byte
        return out, _unique_sorted(at[exact])

    @staticmethod
    def _first_at_least(keys, first, count, start, step):
        """For each sorted key rank: the index of the first listed rank ``>= key`` (the
        total when none), and whether that rank equals the key."""
        r = np.searchsorted(first, keys, side="right") - 1
        inside = r >= 0
        rr = np.maximum(r, 0)
        offset = keys - first[rr]  # >= 0 where inside
        i = np.minimum(-(-offset // step), count[rr])  # ceil, clipped to the run
        at = np.where(inside, start[rr] + i, 0)
        exact = inside & (offset % step == 0) & (offset // step < count[rr])
        return at, exact

    def long_varint_ends(self, length: int = ULEB128_MAX_BYTES) -> npt.NDArray[np.intp]:
        """Positions of the terminators that end a run of at least *length* continuation
        bytes (a varint longer than *length* bytes), in increasing order."""
        c = self.cont
        if c.size < length:
            return np.zeros(0, np.intp)
        # a run of `length` consecutive continuation positions starts at c[j]
        starts = np.flatnonzero(c[length - 1:] - c[: c.size - length + 1] == length - 1)
        ends = c[starts + length - 1] + 1  # first byte after the run's first `length` bytes
        nxt = self.rank(ends, ordered=True)  # that varint ends at select(rank(end))
        found = self.select(nxt[nxt < self.count], ordered=True)  # non-decreasing
        return _unique_sorted(found)


_STEPS: dict[int, np.ndarray] = {}
_STEPS_CACHED = 1 << 18


def _unique_sorted(a: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array."""
    return a[np.r_[True, a[1:] != a[:-1]]] if a.size else a


def _steps(step: int, n: int) -> np.ndarray:
    """``step * arange(n)``, from a small cache for the usual block sizes (read-only)."""
    if n > _STEPS_CACHED:
        return np.arange(0, step * n, step, dtype=np.intp)
    cached = _STEPS.get(step)
    if cached is None or cached.size < n:
        cached = np.arange(0, step * max(n, 1 << 16), step, dtype=np.intp)
        cached.flags.writeable = False
        _STEPS[step] = cached
    return cached[:n]


def _count_at_most(keys: np.ndarray, queries: np.ndarray, ordered: bool, strict: bool):
    """Vectorised: for each query ``q``, how many of the sorted *keys* are ``<= q`` (``< q``
    if *strict*).

    For non-decreasing queries this runs the search the other way round: each key finds its
    place among the queries (few keys, many queries) and the counts follow by ``repeat``; a
    ``searchsorted`` per query costs about 10 ns even when the queries are sorted."""
    if not ordered:
        return np.searchsorted(keys, queries, side="left" if strict else "right")
    first = np.searchsorted(queries, keys.astype(queries.dtype, copy=False),
                            side="right" if strict else "left")
    bounds = np.empty(keys.size + 2, np.intp)
    bounds[0], bounds[-1] = 0, queries.size
    bounds[1:-1] = first
    return np.repeat(np.arange(keys.size + 1, dtype=queries.dtype), np.diff(bounds))
