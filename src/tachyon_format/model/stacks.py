"""Call stacks as one prefix tree: the model's only stack type.

Node ``i`` is frame ``frame[i]`` called from node ``parent[i]`` (-1: an outermost frame). A
stack id is the node of its innermost frame, so one int names a whole call stack and shared
outer parts are stored once (as in the Firefox Profiler's stack table). Readers build it
directly (Tachyon) or from lists of frames (:meth:`Stacks.from_csr`); writers and renderers
that walk many stacks one by one use :meth:`Stacks.tuples`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.paths import gather_paths, scan_path
from tachyon_format.kernels.prefix_tree import build_prefix_tree
from tachyon_format.kernels.segments import decode_chain_sums


@dataclass(frozen=True)
class Stacks:
    """The prefix tree: ``frame`` (int32, a row of the frame table) and ``parent`` (int32,
    a node, -1 for none) per node. A parent may come before or after its children; trees built
    by this package always number parents first."""

    frame: npt.NDArray[np.int32]
    parent: npt.NDArray[np.int32]

    @classmethod
    def empty(cls) -> Stacks:
        """A tree of no stacks."""
        return cls(np.zeros(0, np.int32), np.zeros(0, np.int32))

    @classmethod
    def from_csr(
        cls, offsets: npt.ArrayLike, frame_ids: npt.ArrayLike, *, innermost_first: bool = True
    ) -> tuple[Stacks, npt.NDArray[np.int32]]:
        """The tree of stacks listed in CSR form (stack ``i`` is
        ``frame_ids[offsets[i]:offsets[i + 1]]``), and the stack id of each listed stack."""
        frame, parent, ids = build_prefix_tree(offsets, frame_ids,
                                               innermost_first=innermost_first)
        return cls(frame, parent), ids

    @classmethod
    def from_lists(
        cls, stacks: Sequence[Sequence[int]], *, innermost_first: bool = True
    ) -> tuple[Stacks, npt.NDArray[np.int32]]:
        """The tree of stacks given as sequences of frame rows; see :meth:`from_csr`."""
        lengths = np.fromiter((len(s) for s in stacks), np.int64, len(stacks))
        offsets = np.zeros(len(stacks) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((f for s in stacks for f in s), np.int64, int(offsets[-1]))
        return cls.from_csr(offsets, flat, innermost_first=innermost_first)

    def __len__(self) -> int:
        return int(self.frame.size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the two columns."""
        return int(self.frame.nbytes + self.parent.nbytes)

    def frames_of(self, stack: int) -> npt.NDArray[np.int32]:
        """Frame rows of one stack, innermost first (empty for stack -1)."""
        return np.array(scan_path(self.frame, self.parent, stack), dtype=np.int32)

    def depth(self) -> npt.NDArray[np.int64]:
        """Number of frames of every node's stack (pointer jumping: one round per doubling
        of the deepest stack)."""
        return decode_chain_sums(np.ones(len(self), np.uint64),
                                 self.parent.astype(np.int64)).astype(np.int64)

    def to_csr(
        self, stacks: npt.ArrayLike | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        """``(offsets, frame_ids)`` of the given stack ids (all nodes by default), innermost
        frame first: the inverse of :meth:`from_csr`. Vectorised, one pass per level."""
        ids = np.arange(len(self)) if stacks is None else np.asarray(stacks, dtype=np.int64)
        depth = np.zeros(ids.size, np.int64)
        live = ids >= 0
        depth[live] = self.depth()[ids[live]]
        offsets, frame_ids = gather_paths(self.frame, self.parent, ids, depth)
        return offsets, frame_ids.astype(np.int32, copy=False)

    def without_frames(
        self, drop: npt.NDArray[np.bool_], stacks: npt.ArrayLike
    ) -> tuple[Stacks, npt.NDArray[np.int32]]:
        """The given stack ids with every frame row where *drop* is true taken out (a stack
        left empty becomes -1): a new, minimal tree, and the new id of each given stack.
        Vectorised over the distinct stacks given."""
        ids = np.asarray(stacks, dtype=np.int64)
        distinct, inverse = np.unique(ids, return_inverse=True)
        offsets, frame_ids = self.to_csr(distinct)
        keep = ~np.asarray(drop, dtype=bool)[frame_ids]
        kept_before = np.zeros(keep.size + 1, np.int64)
        np.cumsum(keep, out=kept_before[1:])
        tree, new_ids = Stacks.from_csr(kept_before[offsets], frame_ids[keep])
        return tree, new_ids[inverse.reshape(-1)]

    def tuples(self, limit: int | None = None) -> StackTuples:
        """A memoised ``stack id -> tuple of frame rows`` (innermost first, at most *limit*
        innermost frames), for code that handles stacks one at a time."""
        return StackTuples(self, limit)


class StackTuples:
    """``stack id -> tuple[int, ...]`` of frame rows, innermost first, each built once.

    A memoised walk (the vectorised ones are :mod:`tachyon_format.kernels.paths`): a stack
    is read by walking up the parents until a stack already built, whose tuple then ends
    the new one."""

    __slots__ = ("_frame", "_parent", "_limit", "_done")

    def __init__(self, stacks: Stacks, limit: int | None = None) -> None:
        self._frame = stacks.frame.tolist()
        self._parent = stacks.parent.tolist()
        self._limit = limit
        self._done: dict[int, tuple[int, ...]] = {-1: ()}

    def __getitem__(self, stack: int) -> tuple[int, ...]:
        found = self._done.get(stack)
        if found is not None:
            return found
        frame, parent, done, limit = self._frame, self._parent, self._done, self._limit
        walked = []
        node = stack
        while node not in done and (limit is None or len(walked) < limit):
            walked.append(frame[node])
            node = parent[node]
        tail = done.get(node, ())
        out = tuple(walked) + tail
        if limit is not None and len(out) > limit:
            out = out[:limit]
        done[stack] = out
        return out
