"""build_prefix_tree against a dict-based trie built stack by stack; one level's numbering
against a dict."""

from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels import prefix_tree
from tachyon_format.kernels.prefix_tree import KnownPairs, build_prefix_tree, number_pairs


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


@contextmanager
def few_rows_below(threshold: int):
    """Switch to the plain-Python tail below *threshold* stacks (0: never, a huge value:
    from the first level)."""
    saved = prefix_tree.FEW_ROWS
    prefix_tree.FEW_ROWS = threshold
    try:
        yield
    finally:
        prefix_tree.FEW_ROWS = saved


@given(st.lists(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 3), max_size=8),
                max_size=40), st.booleans(), st.integers(0, 12))
def test_the_plain_python_tail_numbers_nodes_as_the_vectorised_levels(stacks, innermost_first,
                                                                       threshold):
    offsets = np.cumsum([0] + [len(s) for s in stacks])
    flat = np.array([f for s in stacks for f in s], dtype=np.uint64)
    with few_rows_below(0):
        vectorised = build_prefix_tree(offsets, flat, innermost_first=innermost_first)
    with few_rows_below(threshold):
        mixed = build_prefix_tree(offsets, flat, innermost_first=innermost_first)
    for expected, got in zip(vectorised, mixed, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_a_deep_stack_costs_time_by_its_frames_not_its_levels():
    # one stack 200,000 frames deep, and two that share half of it: a numpy pass per level
    # took minutes; the plain-Python tail takes well under a second
    deep = np.arange(200_000, dtype=np.uint64)
    flat = np.concatenate([deep, deep[:100_000], deep[:100_000] + 1])
    offsets = np.array([0, 200_000, 300_000, 400_000])
    started = time.monotonic()
    frame, parent, node_of = build_prefix_tree(offsets, flat, innermost_first=False)
    assert time.monotonic() - started < 5
    # the second is a prefix of the first; the third (frames 1, 2, ...) shares nothing
    assert frame.size == 300_000
    # level by level, in order of first appearance: two nodes per level down to 100,000
    # (the first two stacks', then the third's), then one
    assert node_of.tolist() == [299_999, 199_998, 199_999]
    assert parent[299_999] == 299_998 and parent[200_000] == 199_998
    assert frame[199_999] == 100_000 and parent[199_999] == 199_997


pair = st.tuples(st.integers(-1, 4) | st.integers(-1, 2**32 - 2),
                 st.integers(0, 3) | st.integers(0, 2**32 - 1))


@given(st.lists(pair, max_size=30, unique=True), st.lists(pair, max_size=30),
       st.integers(0, 100))
def test_a_level_is_numbered_as_a_dict_numbers_it(known, level, first_id):
    ids = {pair: i for i, pair in enumerate(known)}  # (a tree's nodes are distinct pairs)
    expected, firsts = [], []
    next_id = first_id
    for i, pair in enumerate(level):
        if pair not in ids:
            ids[pair] = next_id
            next_id += 1
            firsts.append(i)
        expected.append(ids[pair])
    index = KnownPairs(np.array([p for p, _ in known], np.int64),
                       np.array([f for _, f in known], np.int64))
    parent = np.array([p for p, _ in level], np.int64)
    frame = np.array([f for _, f in level], np.int64)
    node, new = number_pairs(parent, frame, first_id, index)
    assert node.tolist() == expected and new.tolist() == firsts
    if not known:
        node, new = number_pairs(parent, frame, first_id)
        assert node.tolist() == expected and new.tolist() == firsts
