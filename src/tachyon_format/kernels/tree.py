"""Whole-tree passes over a prefix tree (``parent[i]``: the node above node ``i``, -1 for a
root), for outputs that can be computed once per node instead of once per frame of every
stack: the stacks of a profile share their outer frames, so a tree has far fewer nodes than
its distinct stacks have frames (about 14 times fewer in a synthetic million-sample profile).

Tier (c): each pass is vectorised, one round per tree level (:class:`Levels`) or per doubling
of the deepest chain (pointer jumping), never a Python step per node. Parents may be numbered
before or after their children.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


class Levels:
    """A tree's nodes level by level, found breadth first from the roots (one sort of the
    parent pointers), for passes that go a level at a time: :meth:`subtree_reduce` deepest
    first, :meth:`path_sums` from the roots down. Within a level, nodes come grouped by
    parent, so a parent's children are one run (reduced with ``ufunc.reduceat``). Each
    level is a few gathers over its nodes, so a pass touches every node once. Nodes no root
    reaches (only in a malformed tree: a cycle) are in no level, with depth 0."""

    def __init__(self, parent: npt.NDArray[np.integer]) -> None:
        self.parent = np.asarray(parent, np.int64)
        n = self.parent.size
        by_parent = np.argsort(self.parent, kind="stable")
        children = np.bincount(self.parent + 1, minlength=n + 1)
        first_child = np.zeros(n + 2, np.int64)
        np.cumsum(children, out=first_child[1:])
        self.depth = np.zeros(n, np.int64)
        self.levels: list[npt.NDArray[np.int64]] = []
        """Node ids per depth, the roots first."""
        self.parents: list[npt.NDArray[np.int64]] = []
        self._runs: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = []
        level = by_parent[:children[0]]
        while level.size:
            self.depth[level] = len(self.levels) + 1
            self.levels.append(level)
            self.parents.append(self.parent[level])
            count = children[level + 1]
            has = np.flatnonzero(count)
            if not has.size:
                break
            count = count[has]
            starts = np.zeros(has.size, np.int64)
            np.cumsum(count[:-1], out=starts[1:])
            self._runs.append((level[has], starts))  # (each parent, where its run starts)
            total = int(starts[-1] + count[-1])
            level = by_parent[np.repeat(first_child[level[has] + 1] - starts, count)
                              + np.arange(total)]

    def subtree_reduce(self, values: npt.NDArray, ufunc: np.ufunc = np.add) -> npt.NDArray:
        """Per node, *ufunc* (``np.add``, ``np.minimum``, ...) reduced over the *values* of
        the node and all the nodes below it."""
        out = np.array(values, copy=True)
        for level, (up, starts) in zip(self.levels[:0:-1], self._runs[::-1], strict=True):
            out[up] = ufunc(out[up], ufunc.reduceat(out[level], starts))
        return out

    def path_sums(self, values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Per node, the sum of *values* over the node and every node above it."""
        out = np.array(values, np.int64, copy=True)
        for level, up in zip(self.levels[1:], self.parents[1:], strict=True):
            out[level] += out[up]
        return out

    def nearest_above(self, marked: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """Per node, the nearest node strictly above it where *marked* is true (-1: none)."""
        out = np.full(self.parent.size, -1, np.int64)
        for level, up in zip(self.levels[1:], self.parents[1:], strict=True):
            out[level] = np.where(marked[up], up, out[up])
        return out

    def preorder(self, key_self: npt.NDArray[np.integer], key_below: npt.NDArray[np.integer]
                 ) -> npt.NDArray[np.int64]:
        """Per node, its place in a depth-first walk of the tree, where below each parent
        (and among the roots) every child ``c`` is met twice: once itself, at
        ``key_self[c]``, and once as the way into its own children, at ``key_below[c]``; a
        parent's entries are visited in key order (ties: selves first, then node order).
        Node ``n`` gets the number of nodes met before it. With text ranks as keys this
        sorts paths of text as strings sort (see
        :mod:`tachyon_format.formats.collapsed.assemble`). Keys must be non-negative."""
        n = self.parent.size
        if not n:
            return np.zeros(0, np.int64)
        below = self.subtree_reduce(np.ones(n, np.int64)) - 1
        key = np.concatenate([key_self, key_below]).astype(np.int64)
        group = np.concatenate([self.parent, self.parent]) + 1
        key += group * (int(key.max()) + 1)
        order = np.argsort(key, kind="stable")
        size = np.concatenate([np.ones(n, np.int64), below])[order]
        running = np.cumsum(size)
        starts = np.flatnonzero(np.diff(group[order], prepend=-1))
        base = np.repeat(running[starts] - size[starts], np.diff(starts, append=2 * n))
        before = np.empty(2 * n, np.int64)
        before[order] = running - size - base
        # the entry "below n" starts after everything its ancestors' entries put before it
        start_below = self.path_sums(before[n:])
        return np.where(self.parent >= 0, start_below[np.maximum(self.parent, 0)], 0) + (
            before[:n])

    def intervals(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(start, end)`` per node: the nodes of its subtree are those whose start is in
        ``[start, end)`` (a depth-first preorder, children in node order)."""
        n = self.parent.size
        size = self.subtree_reduce(np.ones(n, np.int64))
        order = np.argsort(self.parent, kind="stable")
        sorted_size = size[order]
        running = np.cumsum(sorted_size)
        starts = np.flatnonzero(np.diff(self.parent[order], prepend=-2))
        base = np.repeat(running[starts] - sorted_size[starts], np.diff(starts, append=n))
        before = np.empty(n, np.int64)
        before[order] = running - sorted_size - base
        start = self.path_sums(before + 1) - 1
        return start, start + size


def nearest_kept(parent: npt.NDArray[np.integer], kept: npt.NDArray[np.bool_]
                 ) -> npt.NDArray[np.int64]:
    """Per node, the nearest node at or above it where *kept* is true (-1: none): the node
    a stack of that node ends at once the other nodes are taken out. Pointer jumping."""
    ptr = np.where(kept, np.arange(parent.size), np.asarray(parent, np.int64))
    live = np.flatnonzero((ptr >= 0) & ~kept[np.maximum(ptr, 0)])
    while live.size:
        ptr[live] = ptr[ptr[live]]
        live = live[ptr[live] >= 0]
        live = live[~kept[ptr[live]]]
    return ptr
