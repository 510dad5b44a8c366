"""build_prefix_tree against a dict-based trie built stack by stack."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels.prefix_tree import build_prefix_tree


def trie(stacks: list[list[int]]) -> tuple[set, list[tuple]]:
    """(parent path, frame) pairs and each stack's path, outermost first."""
    nodes = set()
    paths = []
    for stack in stacks:
        path: tuple = ()
        for frame in reversed(stack):
            nodes.add((path, frame))
            path = (*path, frame)
        paths.append(path)
    return nodes, paths


@given(st.lists(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 3), max_size=6),
                max_size=30))
def test_same_tree_as_a_trie(stacks):
    offsets = np.cumsum([0] + [len(s) for s in stacks])
    flat = np.array([f for s in stacks for f in s], dtype=np.uint64)
    frame, parent, node_of = build_prefix_tree(offsets, flat)
    nodes, paths = trie(stacks)
    assert len(frame) == len(nodes)

    def path(node: int) -> tuple:
        out = []
        while node >= 0:
            out.append(int(frame[node]) & 0xFFFFFFFF)
            node = int(parent[node])
        return tuple(reversed(out))

    assert [path(int(n)) for n in node_of] == paths
    assert all(p < i for i, p in enumerate(parent.tolist()))
