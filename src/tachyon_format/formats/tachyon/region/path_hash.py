"""The seeded path hash of prefix-tree nodes: a stack's hash from its frames, level by level.

``H(node) = H(parent) + term(frame) * R**level`` mod 2**64 (``H(root) = 0``; level 1 is a
stack's outermost frame), with a random 64-bit term per frame index and a random odd R,
both drawn from a seed. So:

* a node's hash is its parent's plus one term: a record's pushed frames hash with one cumsum;
* a stack listed innermost first in one array hashes with one cumsum over the whole array
  (:meth:`PathHash.listings`);
* a term tells frames apart at every level (R is odd, so ``* R**level`` is one-to-one).

The terms of frame indices below :data:`TABLE_MAX` come from a table; a larger index (only a
broken file being salvaged has one: no frame table limits it) switches to computing each
term from its index, the same value without a table as long as the largest index.

Hashes only propose nodes: :mod:`.stack_tree` proves every match exactly, so a collision
costs time, never correctness, and the seed (from OS entropy) keeps crafted input from
aiming at collisions.
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import hashing, segments
from tachyon_format.schema import tachyon_values as spec

MAX_DEPTH = spec.MAX_STACK_DEPTH
TABLE_MAX = 1 << 20
"""Frame indices the table of terms covers at most (8 MB); terms of larger ones are computed."""
_POWER_BLOCK = 1 << 16  # listing positions scaled by one table of R**-g (512 KB)
U64 = 1 << 64

__all__ = ["PathHash", "new_seed"]


def new_seed() -> int:
    """A 64-bit seed from OS entropy, so crafted input cannot aim at collisions."""
    return int.from_bytes(os.urandom(8), "little")


class PathHash:
    """The terms of one seed, and the hashes they give (all uint64, wrapping mod 2**64)."""

    def __init__(self, seed: int) -> None:
        self._frame_terms = np.zeros(0, np.uint64)
        self._computed = False  # some frame index is beyond the table: every term computed
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """New random terms: per frame index, and R (odd) for the levels."""
        self.seed = seed
        self.root = int(hashing.hash_table(1, seed ^ 0x5EED)[0]) | 1  # (salted: not frame 0's term)
        self._root_powers = hashing.PowerTable(self.root)
        self._inverse_root = pow(self.root, -1, U64)  # (R is odd, so invertible mod 2**64)
        self._inverse_block: np.ndarray | None = None  # R**-g for g below _POWER_BLOCK
        self._level_terms = self._root_powers.tables[0][: MAX_DEPTH + 1]  # R**level
        self._frame_terms = hashing.hash_table(self._frame_terms.size, seed)

    def cover(self, top: int) -> None:
        """Have terms for frame indices up to *top* (a table grown geometrically up to
        :data:`TABLE_MAX`, else computed)."""
        if top >= TABLE_MAX:
            self._computed = True
            return
        have = self._frame_terms.size
        if top >= have:
            more = max(top + 1, 2 * have, 1024) - have
            self._frame_terms = np.concatenate(
                [self._frame_terms, hashing.hash_table(more, self.seed, first=have)])

    def terms(self, frame: npt.NDArray[np.integer], level: npt.NDArray[np.integer]
              ) -> npt.NDArray[np.uint64]:
        """Vectorised: ``term(frame) * R**level`` of each (frame, level) pair (a new array;
        frames must be covered)."""
        terms = self._terms_of(frame)
        terms *= self._level_terms[level]
        return terms

    def listings(self, frames: npt.NDArray[np.integer], src: npt.NDArray[np.integer],
                 npush: npt.NDArray[np.integer]) -> npt.NDArray[np.uint64]:
        """Vectorised: the path hash of each stack listed innermost first in
        ``frames[src:src + npush]``. The frame at index g of *frames* is at level
        ``src + npush - g`` of its listing, so the hash is
        ``R**(src + npush) * sum(term(frame) * R**-g)`` over the listing: one cumsum for all
        listings."""
        acc = self._terms_of(frames)
        if self._inverse_block is None:
            self._inverse_block = hashing.geometric(self._inverse_root, _POWER_BLOCK)
        for lo in range(0, acc.size, _POWER_BLOCK):  # acc[g] *= R**-g, a block at a time
            part = acc[lo:lo + _POWER_BLOCK]
            part *= self._inverse_block[: part.size]
            part *= np.uint64(pow(self._inverse_root, lo, U64))
        np.cumsum(acc, out=acc)
        end = src + npush
        h = acc[end - 1]
        inner = np.flatnonzero(src)
        h[inner] -= acc[src[inner] - 1]
        h *= self._root_powers(end)
        return h

    def _terms_of(self, frame: npt.NDArray[np.integer]) -> npt.NDArray[np.uint64]:
        """``term(frame)`` of each frame index (a new array)."""
        if self._computed:
            return hashing.mix(np.asarray(frame).astype(np.uint64), self.seed)
        return self._frame_terms[frame]

    def nodes(self, frame: npt.NDArray[np.integer], parent: npt.NDArray[np.integer],
              level: npt.NDArray[np.integer]) -> npt.NDArray[np.uint64]:
        """Vectorised (pointer jumping): the path hash of every node of a tree given by
        each node's frame, parent (-1 for the root) and level."""
        return segments.decode_chain_sums(self.terms(frame, level), parent.astype(np.int64))
