"""Stacks, the one prefix-tree type: built from lists, walked back to lists, depths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format import Stacks

stack_lists = st.lists(st.lists(st.integers(0, 6), max_size=8), max_size=40)


@given(stack_lists, st.booleans())
def test_from_lists_then_back(stacks, innermost_first):
    tree, ids = Stacks.from_lists(stacks, innermost_first=innermost_first)
    expected = [tuple(s if innermost_first else s[::-1]) for s in stacks]
    assert [tuple(tree.frames_of(i)) for i in ids] == expected
    walk = tree.tuples()
    assert [walk[int(i)] for i in ids] == expected
    offsets, frames = tree.to_csr(ids)
    assert [tuple(frames[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == expected
    depth = tree.depth()
    for i, stack in zip(ids.tolist(), expected, strict=True):
        assert (depth[i] if i >= 0 else 0) == len(stack)


@given(stack_lists)
def test_the_tree_is_minimal_and_parents_come_first(stacks):
    tree, ids = Stacks.from_lists(stacks)
    pairs = list(zip(tree.parent.tolist(), tree.frame.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs)  # one node per (parent, frame)
    assert all(p < i for i, p in enumerate(tree.parent.tolist()))
    # every node is the end of some listed stack's prefix
    prefixes = {tuple(s[len(s) - k:]) for s in stacks for k in range(1, len(s) + 1)}
    assert len(tree) == len(prefixes)
    # equal lists, equal ids; different lists, different ids
    for a, sa in zip(ids.tolist(), stacks, strict=True):
        for b, sb in zip(ids.tolist(), stacks, strict=True):
            assert (a == b) == (sa == sb)


def test_numbering_follows_the_input():
    tree, ids = Stacks.from_lists([[2, 1], [3, 1], [2, 1]])
    assert tree.frame.tolist() == [1, 2, 3]
    assert tree.parent.tolist() == [-1, 0, 0]
    assert ids.tolist() == [1, 2, 1]


def test_empty_inputs():
    tree, ids = Stacks.from_lists([])
    assert len(tree) == 0 and ids.size == 0
    tree, ids = Stacks.from_lists([[], []])
    assert ids.tolist() == [-1, -1]
    assert tree.tuples()[-1] == () and tree.frames_of(-1).size == 0
    assert len(Stacks.empty()) == 0


def test_tuples_keep_the_innermost_frames_up_to_a_limit():
    tree, ids = Stacks.from_lists([list(range(10)), list(range(3))])
    walk = tree.tuples(limit=4)
    assert walk[int(ids[0])] == (0, 1, 2, 3)
    assert walk[int(ids[1])] == (0, 1, 2)


def test_a_tree_whose_parents_come_after_children():
    tree = Stacks(np.array([5, 6], np.int32), np.array([1, -1], np.int32))
    assert tree.frames_of(0).tolist() == [5, 6]
    assert tree.depth().tolist() == [2, 1]


def test_bad_csr_is_refused():
    with pytest.raises(ValueError):
        Stacks.from_csr([0, 2, 1], [1, 2])
    with pytest.raises(ValueError):
        Stacks.from_csr([0, 1], [-1])


@given(stack_lists, st.lists(st.booleans(), min_size=7, max_size=7))
def test_without_frames(stacks, drop):
    tree, ids = Stacks.from_lists(stacks)
    new_tree, new_ids = tree.without_frames(np.array(drop), ids)
    expected = [tuple(f for f in s if not drop[f]) for s in stacks]
    assert [tuple(new_tree.frames_of(i)) for i in new_ids.tolist()] == expected
    assert all((i == -1) == (not e) for i, e in zip(new_ids.tolist(), expected, strict=True))
