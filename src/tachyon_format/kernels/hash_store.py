"""A compact store of 64-bit hashes -> ids, as sorted runs with a bit filter in front.

numpy only, nothing format-specific (the Tachyon stack tree keeps the path hash of every
prefix-tree node in one).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["HashStore"]


class HashStore:
    """64-bit hash -> id (below 2**32), for ids whose full hashes the caller keeps in an
    array indexed by id.

    The store holds sorted runs of uint64 keys (a hash's high 32 bits, the id in the low 32)
    merged geometrically (a sorted-array LSM; merging two runs is one timsort): 8 bytes per
    entry. A key only proposes an id; the caller's full hash of that id confirms it. A filter
    of 8 to 32 bits per entry, by the hash's high bits, answers most absent hashes without a
    search."""

    HIGH = np.uint64(0xFFFFFFFF00000000)

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []
        self.size = 0
        self._filter_bits = 13  # log2 of its size in bits: 1 KB to start with
        self._filter = np.zeros(1 << (self._filter_bits - 3), np.uint8)

    def lookup(
        self, hashes: npt.NDArray[np.uint64], full_hash: npt.NDArray[np.uint64]
    ) -> npt.NDArray[np.int32]:
        """Vectorised: ids of the sorted *hashes* (-1 where absent), given the full hash of
        every id (``full_hash[id]``)."""
        out = np.full(hashes.size, -1, dtype=np.int32)
        if not self.size:
            return out
        slot = self._slots(hashes)
        maybe = self._filter[slot >> 3] >> (slot & 7).astype(np.uint8)
        maybe = np.flatnonzero(maybe & 1)
        high = hashes[maybe] & self.HIGH
        for run in self.runs:
            pos = np.searchsorted(run, high)
            todo = np.arange(maybe.size)
            while todo.size:  # (more than one round only where high bits are shared)
                p = pos[todo]
                inside = p < run.size
                todo, p = todo[inside], p[inside]
                key = run[p]
                same_high = (key & self.HIGH) == high[todo]
                todo, p, key = todo[same_high], p[same_high], key[same_high]
                node = (key & ~self.HIGH).astype(np.intp)
                hit = full_hash[node] == hashes[maybe[todo]]
                out[maybe[todo[hit]]] = node[hit]
                todo = todo[~hit]
                pos[todo] = p[~hit] + 1
        return out

    def add(self, hashes: npt.NDArray[np.uint64], ids: npt.NDArray[np.integer]) -> None:
        """Vectorised: add *ids* (below 2**32) with their *hashes* as a sorted run, merging
        runs of similar size."""
        if not hashes.size:
            return
        run = hashes & self.HIGH
        run |= ids.astype(np.uint64)
        run.sort()
        self.runs.append(run)
        self.size += run.size
        while len(self.runs) > 1 and self.runs[-2].size <= 2 * self.runs[-1].size:
            merged = np.concatenate(self.runs[-2:])
            merged.sort(kind="stable")  # timsort: one merge of two sorted runs
            self.runs[-2:] = [merged]
        # under 8 filter bits per entry: regrow to 16 to 32 (at most 2**32 bits, 512 MB)
        if 8 * self.size > 1 << self._filter_bits and self._filter_bits < 32:
            self._filter_bits = min(32, (16 * self.size - 1).bit_length())
            self._filter = np.zeros(1 << (self._filter_bits - 3), np.uint8)
            for r in self.runs:
                self._set_bits(r)
        else:
            self._set_bits(run)

    def _set_bits(self, run: npt.NDArray[np.uint64]) -> None:
        """Vectorised: set the filter bits of a sorted run (its bytes in increasing order,
        so one OR per byte by ``reduceat``)."""
        slot = (run >> np.uint64(64 - self._filter_bits)).astype(np.uint32)
        bit = np.left_shift(np.uint8(1), (slot & np.uint32(7)).astype(np.uint8))
        slot >>= np.uint32(3)  # the byte
        starts = np.flatnonzero(slot[1:] != slot[:-1])
        starts += 1
        starts = np.r_[0, starts]
        self._filter[slot[starts]] |= np.bitwise_or.reduceat(bit, starts)

    def _slots(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
        """The filter slot of each hash (or key: the same high bits)."""
        return (keys >> np.uint64(64 - self._filter_bits)).astype(np.intp)
