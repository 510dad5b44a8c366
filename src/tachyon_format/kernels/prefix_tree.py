"""Lists of stacks into the nodes of one prefix tree, for every reader whose format lists stacks.

A format that stores each stack as a list of frames (pprof's location ids, gperftools' program
counters, collapsed lines, speedscope samples) becomes the model's single stack type, a prefix
tree (node = frame + parent node), through :func:`build_prefix_tree`. Equal lists get the same
node; lists sharing their outer frames share those nodes.

Tier (c): one pass per stack *level*, each over the stacks still that deep, so the work is
proportional to the total number of frames listed (plus one sort per level), never to
``stacks x deepest``.

A level is numbered by :func:`number_pairs`, the one level-by-level tree builder of the
package: it also numbers the nodes of trees built from other trees (the Tachyon decoder's
exact fallback, shared stack numbers across profiles).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .segments import find_sorted, unique_inverse

_FRAME_BITS = 32
"""A (parent, frame) pair is keyed as one uint64: parent + 1 above, the frame below."""
FEW_ROWS = 64
"""Below this many stacks still going deeper, the remaining levels are walked in plain
Python (:func:`_finish_few`): a numpy pass has a fixed cost of a few hundred microseconds,
which a deep stack (thousands of levels, one or two stacks each) would pay at every level;
about this many dict look-ups cost the same."""


def build_prefix_tree(
    offsets: npt.ArrayLike,
    frames: npt.ArrayLike,
    *,
    innermost_first: bool = True,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Vectorised: the prefix tree of stacks given in CSR form.

    Stack ``i`` is ``frames[offsets[i]:offsets[i + 1]]``, innermost frame first (or outermost
    first with ``innermost_first=False``); frames are non-negative ints below 2**32.

    Returns ``(node_frame, node_parent, stack_node)``: node ``j`` is frame ``node_frame[j]``
    called from node ``node_parent[j]`` (-1: an outermost frame), and ``stack_node[i]`` is the
    node of stack ``i``'s innermost frame (-1 for an empty stack). Nodes are numbered level by
    level from the outermost, within a level in order of the first stack that reaches them, so
    every parent id is below its children's and the result depends on the input only.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    frames = np.asarray(frames)
    if offsets.ndim != 1 or offsets.size == 0:
        raise ValueError("offsets must be a 1-d array with one more entry than stacks")
    lengths = np.diff(offsets)
    if lengths.size and lengths.min() < 0:
        raise ValueError("offsets must be non-decreasing")
    if frames.size and (frames.min() < 0 or frames.max() >= 1 << _FRAME_BITS):
        raise ValueError(f"frames must be in 0..2**{_FRAME_BITS} - 1")
    stack_node = np.full(lengths.size, -1, dtype=np.int32)
    node_frame: list[np.ndarray] = []
    node_parent: list[np.ndarray] = []
    num_nodes = 0
    rows = np.flatnonzero(lengths > 0)  # the stacks at least `level + 1` deep, in input order
    at = offsets[rows] + (lengths[rows] - 1 if innermost_first else 0)
    step = -1 if innermost_first else 1
    node = np.full(rows.size, -1, dtype=np.int64)  # each row's node at the level above
    level = 0
    while rows.size:
        if rows.size < FEW_ROWS:
            tail_frame, tail_parent = _finish_few(frames, rows, node, at, step, lengths, level,
                                                  num_nodes, stack_node)
            node_frame.append(tail_frame)
            node_parent.append(tail_parent)
            break
        frame = frames[at]
        ids, new = number_pairs(node, frame, num_nodes)
        node_frame.append(frame[new].astype(np.int32))
        node_parent.append(node[new].astype(np.int32))
        num_nodes += new.size
        node = ids
        level += 1
        done = lengths[rows] == level
        stack_node[rows[done]] = node[done]
        deeper = np.flatnonzero(~done)
        rows, node, at = rows[deeper], node[deeper], at[deeper] + step
    if not node_frame:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), stack_node
    return np.concatenate(node_frame), np.concatenate(node_parent), stack_node


class KnownPairs:
    """The (parent, frame) pairs of a tree's nodes, sorted for look-ups: node ``i`` is the
    pair ``(parent[i], frame[i])``."""

    def __init__(self, parent: npt.ArrayLike, frame: npt.ArrayLike) -> None:
        keys = pair_keys(parent, frame)
        self._order = np.argsort(keys)
        self._keys = keys[self._order]

    def find(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """Vectorised: the node of each key of :func:`pair_keys`, -1 where none."""
        at = find_sorted(self._keys, keys)
        if not self._keys.size:
            return at.astype(np.int64)
        return np.where(at >= 0, self._order[np.maximum(at, 0)], -1)


def pair_keys(parent: npt.ArrayLike, frame: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Vectorised: one exact uint64 key per (parent node or -1, frame) pair: the parent + 1
    above, the frame (below 2**32) below."""
    keys = (np.asarray(parent, np.int64) + 1).view(np.uint64)
    keys <<= np.uint64(_FRAME_BITS)
    keys |= np.asarray(frame, np.int64).view(np.uint64)
    return keys


def number_pairs(parent: npt.ArrayLike, frame: npt.ArrayLike, first_id: int,
                 known: KnownPairs | None = None
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
    """Vectorised: one level of a prefix tree. The node of each (*parent*, *frame*) pair:
    equal pairs share a node; a pair of a *known* node is that node, and the other distinct
    pairs are new nodes, numbered from *first_id* in order of first appearance. Returns the
    node of each pair and, per new node in id order, the index of its first pair (where its
    parent and frame are)."""
    unique_keys, first, inverse = unique_inverse(pair_keys(parent, frame))
    # ids follow the input, not key values (first indexes are distinct: any sort will do)
    if known is None:
        node = np.empty(unique_keys.size, np.int64)
        new = np.argsort(first)
    else:
        node = known.find(unique_keys)
        new = np.flatnonzero(node < 0)
        new = new[np.argsort(first[new])]
    node[new] = np.arange(first_id, first_id + new.size)
    return node[inverse], first[new]


def _finish_few(frames: np.ndarray, rows: np.ndarray, node: np.ndarray, at: np.ndarray,
                step: int, lengths: np.ndarray, level: int, num_nodes: int,
                stack_node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The levels from *level* down for the few stacks *rows* still that deep, numbered as
    the vectorised loop numbers them (level by level, in order of first appearance); fills
    their ``stack_node``. Each row's remaining frames are one Python list, so the cost is
    one dict look-up per remaining frame."""
    remaining = lengths[rows] - level
    tails = [frames[a:a + step * r:step].tolist() if step > 0 or a - r >= 0 else
             frames[a::-1][:r].tolist()
             for a, r in zip(at.tolist(), remaining.tolist(), strict=True)]
    parents = node.tolist()
    new_frame: list[int] = []
    new_parent: list[int] = []
    active = list(range(len(tails)))
    depth = 0
    while active:
        if len(active) == 1:  # one stack left: the rest of it is a chain of new nodes
            i = active[0]
            rest = tails[i][depth:]
            first = num_nodes + len(new_frame)
            new_frame.extend(rest)
            new_parent.append(parents[i])
            new_parent.extend(range(first, first + len(rest) - 1))
            stack_node[rows[i]] = first + len(rest) - 1
            break
        ids: dict[tuple[int, int], int] = {}
        still = []
        for i in active:
            key = (parents[i], tails[i][depth])
            found = ids.get(key)
            if found is None:
                found = ids[key] = num_nodes + len(new_frame)
                new_frame.append(key[1])
                new_parent.append(key[0])
            parents[i] = found
            if depth + 1 < len(tails[i]):
                still.append(i)
            else:
                stack_node[rows[i]] = found
        active = still
        depth += 1
    # (frames up to 2**32 wrap into int32 as in the vectorised loop)
    return (np.array(new_frame, np.int64).astype(np.int32),
            np.array(new_parent, np.int64).astype(np.int32))
