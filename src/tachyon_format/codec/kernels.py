"""numpy kernels for the Tachyon codec: LEB128 runs, zigzag, ragged index ranges.

Tiers (see STYLE.md 3.5): ``decode_*``/``encode_*`` are vectorised (tier c, arrays in and
out, no Python loop per value); ``scan_*`` are sequential (tier d).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Longest ULEB128 the CPython reader accepts (its loop fails once ``shift >= 64``).
ULEB128_MAX_BYTES = 10
U32_MAX = 0xFFFFFFFF


def scan_terminators(buf: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.intp], np.ndarray]:
    """Vectorised: positions of the terminator bytes (``< 0x80``) of *buf* and the length of
    the ULEB128 ending at each (distance from the previous terminator, int32).

    A varint is taken to start right after the previous terminator (or at 0), which is exact
    for every varint that follows a byte below 0x80. Lengths above 10 mark malformed varints.
    """
    b = np.asarray(buf, dtype=np.uint8)
    ends = np.nonzero(b < 0x80)[0]
    lengths = np.empty(ends.size, dtype=np.int32)
    if ends.size:
        lengths[0] = ends[0] + 1
        np.subtract(ends[1:], ends[:-1], out=lengths[1:], casting="unsafe")
    return ends, lengths


def decode_uleb128_at(
    buf: npt.NDArray[np.uint8], ends: np.ndarray, lengths: np.ndarray, which: np.ndarray
) -> npt.NDArray[np.uint64]:
    """Vectorised: values of the varints ending at terminators ``ends[which]``.

    Mod 2**64, as CPython's reader: of a 10th byte only bit 0 counts. Values of varints longer
    than 10 bytes are meaningless (callers reject those by their length).
    """
    pos = ends[which]
    length = lengths[which]
    hi = buf[pos]
    lo = buf[pos - 1] & 0x7F
    lo[length < 2] = 0
    values = (hi.astype(np.uint64) << np.uint64(7)) | lo
    one = np.flatnonzero(length == 1)
    values[one] = hi[one]
    idx = np.flatnonzero(length > 2)
    k = 2
    while idx.size and k < ULEB128_MAX_BYTES:
        values[idx] = (values[idx] << np.uint64(7)) | (buf[pos[idx] - k] & 0x7F)
        k += 1
        idx = idx[length[idx] > k]
    return values


def decode_uleb128_ends(
    buf: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """Vectorised: every terminator of *buf*, the ULEB128 value ending there and its length.

    See :func:`scan_terminators` and :func:`decode_uleb128_at`.
    """
    b = np.asarray(buf, dtype=np.uint8)
    ends, lengths = scan_terminators(b)
    return ends, decode_uleb128_at(b, ends, lengths, np.arange(ends.size)), lengths


def decode_uleb128(buf: bytes | memoryview | npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """Vectorised: decode back-to-back ULEB128 values (a packed run), CPython's rules (§0.1).

    Raises ``ValueError`` if the run ends inside a varint or a varint is longer than 10 bytes.
    """
    b = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    if b.size and b[-1] >= 0x80:
        raise ValueError("truncated ULEB128 run")
    _, values, lengths = decode_uleb128_ends(b)
    if lengths.size and lengths.max() > ULEB128_MAX_BYTES:
        raise ValueError("ULEB128 value longer than 10 bytes")
    return values


def encode_uleb128(values: npt.ArrayLike) -> bytes:
    """Vectorised: the canonical (shortest) ULEB128 encoding of unsigned 64-bit values."""
    v = np.asarray(values, dtype=np.uint64).ravel()
    nbytes = np.ones(v.size, dtype=np.intp)
    for k in range(1, ULEB128_MAX_BYTES):
        nbytes += v >= (np.uint64(1) << np.uint64(7 * k))
    out = np.empty(int(nbytes.sum()), dtype=np.uint8)
    starts = np.cumsum(nbytes) - nbytes
    for k in range(ULEB128_MAX_BYTES):
        sel = np.flatnonzero(nbytes > k)
        if not sel.size:
            break
        group = ((v[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        group |= np.where(nbytes[sel] > k + 1, 0x80, 0).astype(np.uint8)
        out[starts[sel] + k] = group
    return out.tobytes()


def decode_zigzag(u: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Vectorised: zigzag to signed, ``0, 1, 2, 3 -> 0, -1, 1, -2`` (64-bit)."""
    u = np.asarray(u, dtype=np.uint64)
    return (u >> np.uint64(1)).astype(np.int64) ^ -(u & np.uint64(1)).astype(np.int64)


def encode_zigzag(v: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Vectorised: signed to zigzag, the inverse of :func:`decode_zigzag`."""
    v = np.asarray(v, dtype=np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def decode_ragged_ranges(
    starts: npt.ArrayLike, lengths: npt.ArrayLike, step: int = 1
) -> npt.NDArray[np.intp]:
    """Vectorised: concatenation of ``range(s, s + step * n, step)`` for each (s, n)."""
    starts = np.asarray(starts, dtype=np.intp)
    lengths = np.asarray(lengths, dtype=np.intp)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    first = np.cumsum(lengths)
    first -= lengths
    out = np.arange(0, step * total, step, dtype=np.intp)
    out += np.repeat(starts - step * first, lengths)
    return out


def decode_group_cumsum(
    keys: npt.NDArray[np.integer],
    values: npt.NDArray[np.uint64],
    carry: npt.NDArray[np.uint64],
    order: npt.NDArray[np.intp] | None = None,
) -> npt.NDArray[np.uint64]:
    """Vectorised: running sum of *values* per group *key* (mod 2**64), each from ``carry[key]``.

    Keys are small non-negative ints (rows into *carry*); order within a group is kept.
    *order*, if given, is a stable argsort of *keys*.
    """
    n = keys.size
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if order is None:
        order = np.argsort(keys, kind="stable")
    k = keys[order]
    run = np.cumsum(values[order], dtype=np.uint64)
    head = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    before = np.where(head > 0, run[np.maximum(head - 1, 0)], np.uint64(0))
    lengths = np.diff(np.r_[head, n])
    run += np.repeat(carry[k[head]] - before, lengths)
    out = np.empty(n, dtype=np.uint64)
    out[order] = run
    return out


def small_key_dtype(limit: int) -> np.dtype:
    """The narrowest unsigned dtype for keys below *limit* (16-bit keys sort by radix)."""
    if limit <= 1 << 8:
        return np.dtype(np.uint8)
    if limit <= 1 << 16:
        return np.dtype(np.uint16)
    if limit <= 1 << 32:
        return np.dtype(np.uint32)
    return np.dtype(np.uint64)


def decode_uleb128_ending_at(
    buf: npt.NDArray[np.uint8], pos: npt.NDArray[np.intp], first: np.ndarray | None = None
) -> npt.NDArray[np.uint64]:
    """Vectorised: values of the ULEB128s whose last byte (``< 0x80``) is at *pos*.

    Each varint is taken to start right after the previous byte below 0x80 (or at 0), which
    is exact for every varint that follows a terminator, or at *first* (per varint) where
    given; only the rare multi-byte ones cost more than one gather. Mod 2**64 like CPython's
    reader; callers reject varints longer than 10 bytes beforehand
    (:meth:`TerminatorIndex.long_varint_ends`),
    their values here are meaningless.
    """
    values = np.take(buf, pos).astype(np.uint64)
    before = pos - 1
    # at pos 0 the clipped index reads the terminator itself (< 0x80): one byte
    multi = np.take(buf, before, mode="clip") >= 0x80
    if first is not None:
        multi &= pos > first
    idx = np.flatnonzero(multi)
    del before, multi
    if not idx.size:
        return values
    p = pos[idx] - 1  # the continuation byte before each terminator
    lo = np.zeros(idx.size, np.intp) if first is None else first[idx]
    for _ in range(ULEB128_MAX_BYTES - 1):
        values[idx] = (values[idx] << np.uint64(7)) | (buf[p] & 0x7F)
        more = np.flatnonzero((p > lo) & (np.take(buf, p - 1, mode="clip") >= 0x80))
        if not more.size:
            break
        idx, p, lo = idx[more], p[more] - 1, lo[more]
    return values


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


def unique_inverse(
    keys: npt.NDArray,
) -> tuple[npt.NDArray, npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Vectorised: ``np.unique(keys, return_index=True, return_inverse=True)`` for a 1-d
    array (sorted unique values, the first index of each, the inverse), without
    ``np.unique``'s one-time import of ``numpy.ma`` (about 12 ms in a fresh process)."""
    n = keys.size
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    head = np.empty(n, dtype=bool)
    head[:1] = True
    head[1:] = s[1:] != s[:-1]  # (structured keys have no ufunc loop)
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = np.cumsum(head) - 1
    return s[head], order[head], inverse


def hash_table(count: int, seed: int, first: int = 0) -> npt.NDArray[np.uint64]:
    """Vectorised: a random-looking 64-bit value for each of ``first .. first + count - 1``
    under a 64-bit *seed* (splitmix64's finaliser of index + seed: one-to-one)."""
    x = np.arange(first, first + count, dtype=np.uint64)
    x += np.uint64(seed & 0xFFFFFFFFFFFFFFFF)
    tmp = np.empty_like(x)
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
        np.right_shift(x, np.uint64(shift), out=tmp)
        x ^= tmp
        if factor is not None:
            x *= np.uint64(factor)
    return x


def decode_chain_sums(
    values: npt.NDArray[np.uint64], ptr: npt.NDArray[np.integer]
) -> npt.NDArray[np.uint64]:
    """Vectorised (pointer jumping, one round per doubling of the longest chain): for each i
    the sum mod 2**64 of *values* along ``i, ptr[i], ptr[ptr[i]], ...`` until a pointer is
    negative. Pointers must not form a cycle; *values* and *ptr* are consumed."""
    live = np.flatnonzero(ptr >= 0)
    while live.size:
        p = ptr[live]
        values[live] += values[p]  # reads the previous round's values, then writes
        ptr[live] = ptr[p]
        live = live[ptr[live] >= 0]
    return values


def group_by_hash(
    h: npt.NDArray[np.uint64], exact: bool = False
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Vectorised: ``(order, head)``: the indices of *h* sorted by (value, index) and a mask,
    in that order, of the first element of each group.

    A group is a run of equal values if *exact*, by a stable argsort. Otherwise, by one SIMD
    sort of plain uint64 keys (the value's high bits with the index in the low bits), a run
    of equal high bits: equal values always share a group, and among ``n`` random values
    some different ones do too with a chance of about ``n**3 / 2**65`` (the caller checks)."""
    n = h.size
    head = np.empty(n, bool)
    head[:1] = True
    if exact:
        order = np.argsort(h, kind="stable")
        hs = h[order]
        np.not_equal(hs[1:], hs[:-1], out=head[1:])
        return order, head
    low = np.uint64((1 << max(1, (n - 1).bit_length())) - 1)
    keys = h | low
    keys ^= low
    keys |= np.arange(n, dtype=np.uint64)
    keys.sort()
    high = keys[1:] ^ keys[:-1]
    np.greater(high, low, out=head[1:])  # some high bit differs
    del high
    keys &= low
    return keys.view(np.intp), head  # (indices below 2**63: the same bits)


def previous_below(
    values: npt.NDArray[np.integer], at: npt.NDArray[np.integer], limit: npt.NDArray[np.integer]
) -> npt.NDArray[np.intp]:
    """Vectorised (binary lifting over tables of running minima, one round per doubling of
    ``values.size``): for each query the largest ``j < at[i]`` with ``values[j] < limit[i]``,
    -1 if there is none."""
    j = np.asarray(at, dtype=np.intp) - 1
    if not values.size:
        return j
    # the index right before is the answer often enough to be worth a first look
    near = values[np.maximum(j, 0)] < limit
    todo = np.flatnonzero(~near & (j >= 0))
    if not todo.size:
        return np.where(j >= 0, j, -1)
    q, lim = j[todo], limit[todo]
    if values.min() >= 0 and values.max() < 1 << 16 and lim.max() < 1 << 16:
        # narrow tables and limits: less memory to touch, no casts in the compares
        values, lim = values.astype(np.uint16), lim.astype(np.uint16)
    # minima[k][x] = min(values[max(0, x - 2**k + 1) .. x])
    minima = [values]
    span = 1
    while span < values.size:
        m = np.empty_like(values)
        m[:span] = minima[-1][:span]
        np.minimum(minima[-1][span:], minima[-1][:-span], out=m[span:])
        minima.append(m)
        span *= 2
    at_least_0 = np.empty_like(q)
    for k in range(len(minima) - 1, -1, -1):  # skip whole blocks at or above the limit
        np.maximum(q, 0, out=at_least_0)
        skip = minima[k][at_least_0] >= lim
        skip &= q >= 0
        q -= np.left_shift(skip, k, dtype=q.dtype)
    j[todo] = q
    return np.where(j >= 0, j, -1)
