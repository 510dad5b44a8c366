"""Equal rows of a ragged array (CSR: row ``i`` is ``values[offsets[i]:offsets[i + 1]]``).

Readers of formats that list a stack per sample (pprof) see the same few stacks many times;
grouping equal rows first means the stacks are resolved and put in the prefix tree once each.
Tier (c): a 64-bit hash per row from one vectorised pass over the elements, groups by that
hash, then an exact element-by-element check of every row against its group's first row, so
the result never depends on the hash being free of collisions.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .hashing import group_by_hash
from .segments import decode_ragged_ranges

_MIX = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
_POSITION = np.uint64(0x9E3779B97F4A7C15)


def _splitmix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(_MIX[0])
    x ^= x >> np.uint64(27)
    x *= np.uint64(_MIX[1])
    x ^= x >> np.uint64(31)
    return x


def hash_rows(offsets: npt.NDArray[np.int64], values: npt.NDArray) -> npt.NDArray[np.uint64]:
    """Vectorised: a 64-bit hash of each row (its length, and each value with its place)."""
    offsets = np.asarray(offsets, np.int64)
    lengths = np.diff(offsets)
    place = np.arange(values.size, dtype=np.uint64)
    place -= np.repeat(offsets[:-1], lengths).astype(np.uint64)
    element = _splitmix(np.asarray(values).astype(np.uint64) + place * _POSITION)
    running = np.zeros(values.size + 1, np.uint64)
    np.cumsum(element, out=running[1:])
    h = running[offsets[1:]] - running[offsets[:-1]]
    h ^= _splitmix(lengths.astype(np.uint64))
    return h


def unique_rows(
    offsets: npt.ArrayLike, values: npt.NDArray
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Vectorised: ``(first, inverse)``: the first row of each group of equal rows, in order
    of first appearance, and each row's group."""
    offsets = np.asarray(offsets, np.int64)
    n = offsets.size - 1
    if n == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    h = hash_rows(offsets, values)
    order, head = group_by_hash(h, exact=True)
    group_of_sorted = np.cumsum(head) - 1
    first_of_group = np.minimum.reduceat(order, np.flatnonzero(head))
    rep = np.empty(n, np.intp)
    rep[order] = first_of_group[group_of_sorted]
    if not _rows_equal(offsets, values, np.arange(n), rep):
        return _unique_rows_exact(offsets, values)
    first = np.flatnonzero(rep == np.arange(n))
    number = np.full(n, -1, np.intp)
    number[first] = np.arange(first.size)
    return first, number[rep]


def _rows_equal(offsets, values, a, b) -> bool:
    lengths = np.diff(offsets)
    differ = a != b
    a, b = a[differ], b[differ]
    if not (lengths[a] == lengths[b]).all():
        return False
    ia = decode_ragged_ranges(offsets[a], lengths[a])
    ib = decode_ragged_ranges(offsets[b], lengths[b])
    return bool((values[ia] == values[ib]).all())


def _unique_rows_exact(offsets, values):
    """The same by a dict of each row's bytes: only after a hash collision."""
    seen: dict[bytes, int] = {}
    inverse = np.empty(offsets.size - 1, np.intp)
    first = []
    for i in range(offsets.size - 1):
        key = values[offsets[i]:offsets[i + 1]].tobytes()
        number = seen.setdefault(key, len(seen))
        if number == len(first):
            first.append(i)
        inverse[i] = number
    return np.asarray(first, np.intp), inverse
