"""Vectorised hashing helpers: a seeded 64-bit mix per index, and grouping by hash."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def hash_table(count: int, seed: int, first: int = 0) -> npt.NDArray[np.uint64]:
    """Vectorised: a random-looking 64-bit value for each of ``first .. first + count - 1``
    under a 64-bit *seed* (splitmix64's finaliser of index + seed: one-to-one)."""
    return mix(np.arange(first, first + count, dtype=np.uint64), seed)


def mix(values: npt.NDArray[np.uint64], seed: int) -> npt.NDArray[np.uint64]:
    """Vectorised, in place: what :func:`hash_table` gives for each of *values* (uint64),
    without a table as long as the largest of them; returns *values*."""
    x = values
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


def geometric(ratio: int, count: int) -> npt.NDArray[np.uint64]:
    """Vectorised: ``ratio**g`` mod 2**64 for g below *count* (as an outer product of two
    short running products: one long running product costs about 5 ns per value)."""
    side = max(1, int(count**0.5) + 1)
    small, big = (np.full(side, r, np.uint64) for r in (ratio, pow(ratio, side, 1 << 64)))
    small[0] = big[0] = 1
    for part in (small, big):
        np.multiply.accumulate(part, out=part)  # (wraps mod 2**64)
    return np.multiply.outer(big, small).reshape(-1)[:count].copy()


class PowerTable:
    """``base**e`` mod 2**64 for whole arrays of exponents below 2**33, as a product of three
    lookups in tables of 2**11 entries (the exponent's three 11-bit digits)."""

    BITS = 11  # 3 tables of 2**11 uint64 (48 KB): small enough to stay in cache

    def __init__(self, base: int) -> None:
        size = 1 << self.BITS
        self.base = base
        self.tables = tuple(geometric(pow(base, 1 << (k * self.BITS), 1 << 64), size)
                            for k in range(3))

    def __call__(self, exponent: npt.ArrayLike) -> npt.NDArray[np.uint64]:
        """Vectorised: ``base**exponent`` mod 2**64 (a new array)."""
        e = np.asarray(exponent, np.int64)
        mask = (1 << self.BITS) - 1
        out = self.tables[0][e & mask]
        out *= self.tables[1][(e >> self.BITS) & mask]
        out *= self.tables[2][e >> (2 * self.BITS)]
        return out
