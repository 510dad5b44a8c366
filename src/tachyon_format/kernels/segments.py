"""Vectorised work on ragged segments and groups: ranges, grouped running sums, pointer
chains, unique values with inverses. numpy only; no Python loop per element.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


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


def last_per_group(keys: npt.NDArray, order: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """Vectorised: index of the last occurrence of each distinct key (in key order), given a
    stable argsort *order* of *keys*."""
    k = keys[order]
    return order[np.flatnonzero(np.r_[k[1:] != k[:-1], True])] if k.size else order


def first_false(ok: npt.NDArray[np.bool_]) -> int:
    """Vectorised: index of the first False in *ok*, or its size when all are True."""
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else int(ok.size)


def group_blocks(counts: npt.NDArray[np.integer], block: int) -> list[tuple[int, int, int, int]]:
    """Blocks of consecutive groups holding about *block* items each, as
    ``(first group, end group, first item, end item)``: each block ends with the group that
    reaches the next multiple of *block* items, so a block holds at most *block* items plus
    its last group's (a group larger than *block* makes a block of its own). Callers use it
    to bound the memory of temporaries per item."""
    cum = np.cumsum(counts)
    total = int(cum[-1]) if cum.size else 0
    if total <= block:
        return [(0, int(counts.size), 0, total)]
    ends = np.r_[np.searchsorted(cum, np.arange(block, total, block)) + 1, counts.size]
    ends = ends[np.r_[True, ends[1:] != ends[:-1]]].tolist()
    out, ga, ia = [], 0, 0
    for gb in ends:
        ib = int(cum[gb - 1])
        out.append((ga, gb, ia, ib))
        ga, ia = gb, ib
    return out


def chain_from_first(
    positions: npt.NDArray[np.integer], targets: npt.NDArray[np.integer], size: int
) -> npt.NDArray[np.intp]:
    """Vectorised: indices of the *positions* (sorted, distinct, below *size*) reachable from
    the first one by following ``targets`` (each the position it points to, at most
    ``size + 1``; a target that is no position ends the chain), in order.

    Positions that no surviving position points to are pruned until nothing changes; what is
    left is exactly the chain (every survivor has a surviving predecessor, so it is
    reachable). Membership is marked in a byte map of *size* + 2 entries, and each round works
    on the survivors only. After a few rounds, or one that prunes little (long runs of false
    positions, each round pruning only one more of their links: a region of one repeated
    byte is 17 interleaved chains), the chain is followed by pointer doubling: its first
    2**k members, then the members 2**k links on from each of them, one gather per round."""
    index = np.arange(positions.size)
    if not positions.size:  # (no first position: an empty chain)
        return index
    mark = np.zeros(size + 2, bool)
    for _ in range(8):  # rounds before doubling; real chains settle in two or three
        mark[targets] = True
        pointed = mark[positions]
        mark[targets] = False
        pointed[0] = True
        if pointed.all():
            return index
        keep = np.flatnonzero(pointed)  # integer gathers beat boolean masks here
        index, positions, targets = index[keep], positions[keep], targets[keep]
        if 8 * keep.size > 7 * pointed.size:  # pruning too little to be worth a round
            break
    m = positions.size
    # jump[i]: the survivor 2**k links on from survivor i; m past the chain's end (m: itself)
    jump = np.empty(m + 1, np.intp)
    jump[m] = m
    if size < 16 * m:  # dense: a map of the positions (4 bytes a byte) beats a search
        slot = np.full(size + 2, m, np.int32 if m < 1 << 31 else np.intp)
        slot[positions] = np.arange(m)
        jump[:m] = slot[targets]
    else:
        landing = np.minimum(np.searchsorted(positions, targets), m - 1)
        jump[:m] = np.where(positions[landing] == targets, landing, m)
    chain = np.zeros(1, np.intp)  # its first 2**k members
    while True:
        ahead = jump[chain]  # the next 2**k (non-decreasing: m, the largest, once past the end)
        if ahead[-1] == m:
            return index[np.concatenate([chain, ahead[:np.searchsorted(ahead, m)]])]
        chain = np.concatenate([chain, ahead])
        jump = jump[jump]


def decode_group_max_plus(
    keys: npt.NDArray[np.integer],
    order: npt.NDArray[np.intp],
    add: npt.NDArray[np.int64],
    floor: npt.NDArray[np.int64],
    reset: npt.NDArray[np.bool_],
    carry: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Vectorised: a running value per group *key* (rows into *carry*, where each group
    starts), stepped by every element in turn: ``x = floor`` where *reset*, else
    ``x = max(x + add, floor)``. Returns the value before and after each element.

    *order* is a stable argsort of *keys*. The values and the running sums of *add* must
    fit in int64.

    Composed maps ``max(x + a, b)`` stay of that form, so within a run that starts at a
    reset or at a group's first element, with ``A`` the running sum of *add*, the value is
    ``max(x0 + A, A + max(floor - A so far))``: two cumulative sums and one running
    maximum, kept apart per run by adding the run number times the spread of the values."""
    n = keys.size
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    k = keys[order]
    head = np.r_[True, k[1:] != k[:-1]]
    rs = reset[order]
    run_start = head | rs
    run = np.cumsum(run_start)
    run -= 1
    a = np.where(rs, 0, add[order])
    acc = np.cumsum(a)
    run_first = np.flatnonzero(run_start)
    run_len = np.diff(np.r_[run_first, n])
    acc -= np.repeat(acc[run_first] - a[run_first], run_len)  # running sums from each run
    f = floor[order]
    x0 = np.where(rs[run_first], f[run_first], carry[k[run_first]])
    gap = f - acc
    lo = min(int(gap.min()), int(x0.min()))
    span = int(gap.max()) - lo + 1  # runs apart by more than the spread of the values
    if span * (n + 1) >= 1 << 62:  # too far apart to keep runs apart in int64: by halves
        return _group_max_plus_halves(keys, add, floor, reset, carry)
    # a reset's floor is already its run's x0: below everything else in the running maximum
    v = np.where(run_start & rs, np.int64(lo - span), gap)
    offset = run.astype(np.int64) * span
    best = np.maximum.accumulate(v + offset)
    best -= offset
    after_s = np.maximum(np.repeat(x0, run_len) + acc, acc + best)
    before_s = np.where(head, carry[k], np.r_[np.int64(0), after_s[:-1]])
    before = np.empty(n, np.int64)
    after = np.empty(n, np.int64)
    before[order] = before_s
    after[order] = after_s
    return before, after


def _group_max_plus_halves(keys, add, floor, reset, carry):
    """:func:`decode_group_max_plus` of the first half of the elements, then of the rest
    from the values the first half left; one element directly."""
    if keys.size == 1:
        x = carry[keys[0]]
        return np.array([x]), np.array([floor[0] if reset[0] else max(x + add[0], floor[0])])
    h = keys.size // 2
    order = np.argsort(keys[:h], kind="stable")
    before, after = decode_group_max_plus(keys[:h], order, add[:h], floor[:h], reset[:h], carry)
    carry = carry.copy()
    last = last_per_group(keys[:h], order)
    carry[keys[:h][last]] = after[last]
    rest = decode_group_max_plus(keys[h:], np.argsort(keys[h:], kind="stable"), add[h:],
                                 floor[h:], reset[h:], carry)
    return np.r_[before, rest[0]], np.r_[after, rest[1]]


def group_forward_fill(
    keys: npt.NDArray[np.integer],
    order: npt.NDArray[np.intp],
    has_value: npt.NDArray[np.bool_],
    values: npt.NDArray,
    carry: npt.NDArray,
) -> npt.NDArray:
    """Vectorised: per element, its own value where *has_value*, else the value of the
    latest earlier element of its group (*keys*, rows into *carry*) that has one, else
    ``carry[key]``. *order* is a stable argsort of *keys*; the result has *carry*'s dtype."""
    n = keys.size
    if not n:
        return np.zeros(0, carry.dtype)
    k = keys[order]
    has = has_value[order]
    head = np.r_[True, k[1:] != k[:-1]]
    source = np.where(has | head, np.arange(n), 0)
    np.maximum.accumulate(source, out=source)  # the latest element with a value, or the head
    filled = np.where(has[source], values[order][source], carry[k]).astype(carry.dtype)
    out = np.empty(n, carry.dtype)
    out[order] = filled
    return out


def count_longer_than(lengths: npt.NDArray[np.integer]) -> npt.NDArray[np.intp]:
    """Vectorised: for non-increasing *lengths*, how many are above i, for i from 0 up to
    the first length (the walks of those lengths still under way at each step)."""
    top = int(lengths[0]) if lengths.size else 0
    return np.searchsorted(-lengths, -np.arange(top))


def ranges_equal(
    values: npt.NDArray,
    a: npt.NDArray[np.integer],
    b: npt.NDArray[np.integer],
    count: npt.NDArray[np.integer],
    block: int = 1 << 20,
) -> npt.NDArray[np.bool_]:
    """Vectorised, in blocks of about *block* compared items (bounded temporaries): per
    pair, whether ``values[a:a + count]`` equals ``values[b:b + count]``."""
    same = np.ones(a.size, bool)
    cum = np.cumsum(count)
    total = int(cum[-1]) if cum.size else 0
    bounds = np.r_[0, np.searchsorted(cum, np.arange(block, total, block)), a.size]
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if lo >= hi:
            continue
        c = count[lo:hi]
        idx = decode_ragged_ranges(a[lo:hi], c)
        listed = values[idx]
        idx += np.repeat(b[lo:hi] - a[lo:hi], c)
        differ = np.flatnonzero(listed != values[idx])
        if differ.size:
            offs = np.cumsum(c)
            offs -= c
            same[lo + np.searchsorted(offs, differ, side="right") - 1] = False
    return same


def find_sorted(haystack: npt.NDArray, needles: npt.NDArray) -> npt.NDArray[np.intp]:
    """Vectorised: index of each needle in the sorted *haystack*, -1 where absent."""
    if not haystack.size:
        return np.full(needles.size, -1, np.intp)
    pos = np.minimum(np.searchsorted(haystack, needles), haystack.size - 1)
    return np.where(haystack[pos] == needles, pos, -1)


def grown(a: npt.NDArray, capacity: int, used: int) -> npt.NDArray:
    """A new array of *capacity* entries starting with ``a[:used]``, the rest unset
    (``np.resize`` would also fill the rest, by repeating *a*)."""
    out = np.empty(capacity, a.dtype)
    out[:used] = a[:used]
    return out
