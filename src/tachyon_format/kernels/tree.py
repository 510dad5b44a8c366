"""Whole-tree passes over a prefix tree (``parent[i]``: the node above node ``i``, -1 for a
root), for outputs that can be computed once per node instead of once per frame of every
stack: the stacks of a profile share their outer frames, so a tree has far fewer nodes than
its distinct stacks have frames (about 14 times fewer in a synthetic million-sample profile).

Tier (c): each pass is vectorised, one round per tree level (bottom-up sums) or per doubling
of the deepest chain (pointer jumping), never a Python step per node. Parents may be numbered
before or after their children; pointers must not form a cycle.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .segments import decode_chain_sums


def node_depths(parent: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Per node, the number of nodes on its chain to the root (a root has depth 1)."""
    return decode_chain_sums(np.ones(parent.size, np.uint64),
                             np.array(parent, np.int64)).astype(np.int64)


def subtree_reduce(parent: npt.NDArray[np.integer], depth: npt.NDArray[np.int64],
                   values: npt.NDArray, ufunc: np.ufunc = np.add) -> npt.NDArray:
    """Per node, *ufunc* (``np.add``, ``np.minimum``, ...) reduced over the *values* of the
    node and all the nodes below it; *depth* as :func:`node_depths` gives it. One round per
    level, deepest first."""
    out = np.array(values, copy=True)
    if not out.size:
        return out
    parent = np.asarray(parent, np.int64)
    small = np.uint16 if depth.max() < 1 << 16 else np.int64
    order = np.argsort(depth.astype(small), kind="stable")[::-1]  # (radix sort when small)
    sorted_depth = depth[order]
    cuts = np.flatnonzero(sorted_depth[1:] != sorted_depth[:-1]) + 1
    for level in np.split(order, cuts):
        up = parent[level]
        has = up >= 0
        if not has.all():
            level, up = level[has], up[has]
        ufunc.at(out, up, out[level])
    return out


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


def ancestor_above(parent: npt.NDArray[np.integer], steps: npt.NDArray[np.integer]
                   ) -> npt.NDArray[np.int64]:
    """Per node ``i``, the node ``steps[i]`` levels above it (-1 past a root). Binary
    lifting: one gather of the whole tree per bit of the largest step."""
    n = parent.size
    node = np.arange(n, dtype=np.int64)
    steps = np.asarray(steps, np.int64)
    if not n or steps.max() <= 0:
        return node
    jump = np.append(np.asarray(parent, np.int64), -1)  # (index -1: past a root stays -1)
    bit = 0
    while (steps >> bit).any():
        take = np.flatnonzero((steps >> bit) & 1)
        node[take] = jump[node[take]]
        bit += 1
        if (steps >> bit).any():
            jump = np.append(jump[jump[:-1]], -1)
    return node


def preorder(parent: npt.NDArray[np.integer], depth: npt.NDArray[np.int64],
             key_self: npt.NDArray[np.integer], key_below: npt.NDArray[np.integer]
             ) -> npt.NDArray[np.int64]:
    """Per node, its place in a depth-first walk of the tree, where below each parent (and
    among the roots) every child ``c`` is met twice: once itself, at ``key_self[c]``, and
    once as the way into its own children, at ``key_below[c]``; a parent's entries are
    visited in key order (ties in node order). Node ``n`` gets the number of nodes met
    before it. With text ranks as keys this sorts paths of text as strings sort (see
    :mod:`tachyon_format.formats.collapsed.order`); with ``key_self < key_below`` it is
    the usual preorder. Keys must be non-negative."""
    n = parent.size
    if not n:
        return np.zeros(0, np.int64)
    parent = np.asarray(parent, np.int64)
    below = subtree_reduce(parent, depth, np.ones(n, np.int64)) - 1
    key_self = np.asarray(key_self, np.int64)
    key_below = np.asarray(key_below, np.int64)
    span = int(max(key_self.max(), key_below.max())) + 1
    group = np.concatenate([parent, parent]) + 1
    key = group * span + np.concatenate([key_self, key_below])
    size = np.concatenate([np.ones(n, np.int64), below])
    order = np.argsort(key, kind="stable")
    running = np.cumsum(size[order])
    sorted_group = group[order]
    head = np.ones(2 * n, bool)
    head[1:] = sorted_group[1:] != sorted_group[:-1]
    starts = np.flatnonzero(head)
    base = np.repeat(running[starts] - size[order][starts],
                     np.diff(np.append(starts, 2 * n)))
    before = np.empty(2 * n, np.int64)
    before[order] = running - size[order] - base
    before_self, before_below = before[:n], before[n:]
    # the entry "below n" starts after everything its ancestors' entries put before it
    start_below = decode_chain_sums(before_below.astype(np.uint64),
                                    parent.copy()).astype(np.int64)
    inherited = np.where(parent >= 0, start_below[np.maximum(parent, 0)], 0)
    return inherited + before_self
