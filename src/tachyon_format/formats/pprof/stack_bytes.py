"""The packed ``location_id`` field of pprof samples, made from the profile's stack prefix
tree: the writer's hot loop.

1. Once per profile, per tree node: the ULEB128 bytes of its frame's location id (none for
   a frame that is not its location's first line), their count, and the byte length of
   the node's whole stack (:func:`~tachyon_format.kernels.segments.decode_chain_sums`).
2. Per chunk of stacks: each stack gets its byte length plus a few bytes of slack; the
   stacks are sorted by depth, deepest first, so that the walks still under way at each
   level are a prefix of them (no compaction).
3. One round per level, from the innermost frame outward: every byte of the node's id is
   written at the stack's write position, whatever the id's length (a byte past the id
   falls where the next id, or the slack, goes, and is overwritten or never read); the
   position moves on by the id's length and the walk to the parent.

(Writing an id's bytes as one unaligned 32-bit word, two to four ids per round, measured no
faster: numpy copies unaligned items byte by byte, and the gathers dominate.)

Five array operations per level and id byte, where a frame list, its head flags and a
varint encoding each cost passes of their own.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.segments import count_longer_than, decode_chain_sums
from tachyon_format.kernels.varint import encode_varints_at, varint_sizes
from tachyon_format.model import Stacks

__all__ = ["StackBytes"]


class StackBytes:
    """Packed location ids of the stacks of one prefix tree (see the module docs)."""

    def __init__(self, tree: Stacks, location_of_frame: npt.NDArray[np.uint64],
                 is_head: npt.NDArray[np.bool_]) -> None:
        n = len(tree)
        self.parent = tree.parent.astype(np.int64)
        frame = tree.frame.astype(np.int64)
        ids = np.asarray(location_of_frame, np.uint64)[frame]
        head = np.asarray(is_head, bool)[frame]
        self.size = np.where(head, varint_sizes(ids), 0)  # 1.
        self.width = max(int(self.size.max()) if n else 1, 1)
        encoded = np.zeros((n, self.width), np.uint8)
        flat = encoded.reshape(-1)
        encode_varints_at(flat, np.arange(n, dtype=np.int64) * self.width, ids,
                          np.maximum(self.size, 1))
        self.id_bytes = [np.ascontiguousarray(encoded[:, j]) for j in range(self.width)]
        if n * self.width < 1 << 32:  # depth and byte length in one pointer-jumping pass
            sums = decode_chain_sums(self.size.astype(np.uint64) + np.uint64(1 << 32),
                                     self.parent.copy())
            self.depth = (sums >> np.uint64(32)).astype(np.int64)
            self.stack_length = (sums & np.uint64(0xFFFFFFFF)).astype(np.int64)
        else:
            self.depth = tree.depth()
            self.stack_length = decode_chain_sums(self.size.astype(np.uint64),
                                                  self.parent.copy()).astype(np.int64)

    @property
    def spill(self) -> int:
        """Bytes :meth:`write_at` may write past a stack's end (all of an id's width, at the
        end, when the outermost frame is not its location's first line)."""
        return self.width

    def lengths(self, stacks: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
        """Bytes of the packed location ids of each of *stacks* (-1: the empty stack)."""
        stacks = np.asarray(stacks, np.int64)
        if not self.stack_length.size:
            return np.zeros(stacks.size, np.int64)
        return np.where(stacks >= 0, self.stack_length[np.maximum(stacks, 0)], 0)

    def write_at(self, out: npt.NDArray[np.uint8], at: npt.NDArray[np.int64],
                 stacks: npt.NDArray[np.integer]) -> None:
        """3. The packed location ids of each of *stacks* at ``out[at[i]:]``, and up to
        :attr:`spill` bytes of no meaning after each."""
        stacks = np.asarray(stacks, np.int64)
        if not self.depth.size:
            return
        depth = np.where(stacks >= 0, self.depth[np.maximum(stacks, 0)], 0)
        order = np.argsort(-depth, kind="stable")  # 2. deepest first
        walking = count_longer_than(depth[order])
        node = stacks[order]
        at = np.asarray(at, np.int64)[order]
        for m in walking.tolist():
            nd = node[:m]
            p = at[:m]
            for j, column in enumerate(self.id_bytes):
                out[p + j if j else p] = column[nd]
            at[:m] += self.size[nd]
            node[:m] = self.parent[nd]

    def of(self, stacks: npt.NDArray[np.integer]
           ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(bytes, starts, lengths)``: the packed location ids of each of *stacks* (node
        ids, -1 for the empty stack) at ``bytes[starts[i]:starts[i] + lengths[i]]``."""
        lengths = self.lengths(stacks)
        room = lengths + self.width  # 2. the slack takes the bytes past the last id
        starts = np.zeros(room.size, np.int64)
        np.cumsum(room[:-1], out=starts[1:])
        out = np.empty(int(room.sum()), np.uint8)
        self.write_at(out, starts, stacks)
        return out, starts, lengths
