"""Walks up a tree's pointers from its nodes: the one stack walk of the package.

A tree is given by ``up[i]``, the node above node ``i`` (-1: none); in a prefix tree of
stacks that is the parent, and a node's *path* (itself, its parent, ... up to a root) is
its stack, innermost frame first. Passes over the whole tree at once live in :mod:`.tree`;
these start from chosen nodes.

* :func:`gather_paths`, :func:`node_above` and :func:`mark_paths` are vectorised over the
  walks, one round per level over the walks still going.
* :func:`scan_path` is the walk of one node, a plain Python step per level: for a single
  stack a numpy round per level would cost more than the whole walk.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .segments import count_longer_than


def gather_paths(values: npt.NDArray, up: npt.NDArray[np.integer],
                 nodes: npt.ArrayLike, steps: npt.ArrayLike, *, innermost_first: bool = True
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray]:
    """Vectorised: ``(offsets, out)``, the CSR list of ``values`` over the first
    ``steps[k]`` nodes of the path of each ``nodes[k]`` (``out[offsets[k]:offsets[k + 1]]``,
    from the node up, or the other way round with ``innermost_first=False``). A step count
    is at most the length of its path (a node's depth, for a whole stack)."""
    nodes = np.asarray(nodes, np.int64)
    steps = np.asarray(steps, np.int64)
    offsets = np.zeros(nodes.size + 1, np.int64)
    np.cumsum(steps, out=offsets[1:])
    out = np.empty(int(offsets[-1]), values.dtype)
    step = 1 if innermost_first else -1
    # in input order, the finished walks dropped each round: each round writes its values
    # in increasing places (walks sorted by length, as node_above does, write all over the
    # output: 15 % slower for 13.5 million values)
    if up.dtype != np.intp and offsets[-1] > up.size:
        up = up.astype(np.intp)  # (an int32 index costs a conversion at every gather)
    going = np.flatnonzero(steps > 0)
    at = (offsets[:-1] if innermost_first else offsets[1:] - 1)[going]
    node, left = nodes[going], steps[going]
    while at.size:
        out[at] = values[node]
        more = np.flatnonzero(left > 1)
        at, left, node = at[more] + step, left[more] - 1, up[node[more]]
    return offsets, out


def node_above(up: npt.NDArray[np.integer], nodes: npt.ArrayLike, steps: npt.ArrayLike
               ) -> npt.NDArray[np.intp]:
    """Vectorised: the node ``steps[k]`` levels above each ``nodes[k]`` (-1: past the
    root by one). A step count is at most the node's depth."""
    nodes = np.asarray(nodes, np.intp)
    steps = np.asarray(steps, np.int64)
    out = nodes.copy()
    if not nodes.size:
        return out
    order = np.argsort(-steps, kind="stable")
    node = nodes[order]
    for n in count_longer_than(steps[order]).tolist():
        node[:n] = up[node[:n]]
    out[order] = node
    return out


def mark_paths(up: npt.NDArray[np.integer], nodes: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Vectorised: per node of the tree, whether it is on the path of one of *nodes* (-1s
    are ignored). A walk stops at a node already marked, so each node is visited once."""
    marked = np.zeros(up.size, bool)
    node = np.asarray(nodes, np.intp)
    node = node[node >= 0]
    while node.size:
        node = node[~marked[node]]
        marked[node] = True
        node = up[node]
        node = node[node >= 0]
    return marked


def scan_path(values: npt.NDArray, up: npt.NDArray[np.integer], node: int) -> list:
    """Scan: ``values`` over the path of one *node*, from it up (empty for -1)."""
    out = []
    node = int(node)
    while node >= 0:
        out.append(values[node])
        node = int(up[node])
    return out
