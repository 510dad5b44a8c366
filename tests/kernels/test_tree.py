"""kernels.tree against plain Python walks of the same trees, numbered in any order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels.tree import Levels, nearest_kept


@st.composite
def trees(draw) -> list[int]:
    """A forest as parent pointers, nodes numbered in a random order (a parent may come
    after its children)."""
    n = draw(st.integers(0, 40))
    shape = [draw(st.integers(-1, i - 1)) for i in range(n)]  # parent numbered first
    perm = draw(st.permutations(range(n)))
    parent = [-1] * n
    for i, p in enumerate(shape):
        parent[perm[i]] = perm[p] if p >= 0 else -1
    return parent


def chain(parent: list[int], node: int) -> list[int]:
    """The node and its ancestors, innermost first."""
    out = []
    while node >= 0:
        out.append(node)
        node = parent[node]
    return out


@given(trees(), st.data())
def test_depths_sums_minima_and_nearest_nodes(parent, data):
    n = len(parent)
    values = data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n))
    kept = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    p = np.array(parent, np.int64)
    levels = Levels(p)
    assert levels.depth.tolist() == [len(chain(parent, i)) for i in range(n)]
    assert sorted(i for level in levels.levels for i in level.tolist()) == list(range(n))
    below = [[j for j in range(n) if i in chain(parent, j)] for i in range(n)]
    v = np.array(values, np.int64)
    assert levels.subtree_reduce(v).tolist() == [sum(values[j] for j in b) for b in below]
    assert levels.subtree_reduce(v, np.minimum).tolist() == [min(values[j] for j in b)
                                                             for b in below]
    assert levels.path_sums(v).tolist() == [sum(values[j] for j in chain(parent, i))
                                            for i in range(n)]
    start, end = levels.intervals()
    assert sorted(start.tolist()) == list(range(n))
    for i in range(n):
        assert [j for j in range(n) if start[i] <= start[j] < end[i]] == below[i]
    above = [next((j for j in chain(parent, i)[1:] if kept[j]), -1) for i in range(n)]
    assert levels.nearest_above(np.array(kept, bool)).tolist() == above
    nearest = [next((j for j in chain(parent, i) if kept[j]), -1) for i in range(n)]
    assert nearest_kept(p, np.array(kept, bool)).tolist() == nearest


def walk(parent: list[int], key_self: list[int], key_below: list[int]) -> list[int]:
    """The preorder of the docstring, by recursion over children lists."""
    children: dict[int, list[int]] = {}
    for node, p in enumerate(parent):
        children.setdefault(p, []).append(node)
    place = [-1] * len(parent)
    met = 0

    def visit(p: int) -> None:
        nonlocal met
        kids = children.get(p, [])
        entries = [(key_self[c], 0, c) for c in kids] + [(key_below[c], 1, c) for c in kids]
        for _, below, c in sorted(entries, key=lambda e: e[0]):  # (stable: ties keep order)
            if below:
                visit(c)
            else:
                place[c] = met
                met += 1

    visit(-1)
    return place


@given(trees(), st.data())
def test_preorder_is_the_recursive_walk(parent, data):
    n = len(parent)
    keys = st.lists(st.integers(0, 5), min_size=n, max_size=n)
    key_self, key_below = data.draw(keys), data.draw(keys)
    p = np.array(parent, np.int64)
    got = Levels(p).preorder(np.array(key_self, np.int64), np.array(key_below, np.int64))
    assert got.tolist() == walk(parent, key_self, key_below)
