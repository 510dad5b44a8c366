"""Vectorised hashing helpers: a seeded 64-bit mix per index, and grouping by hash."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


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
