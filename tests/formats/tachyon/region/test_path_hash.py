"""Path hashes: a listed stack hashes like the path of nodes it names."""

from __future__ import annotations

import tracemalloc

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region.path_hash import TABLE_MAX, PathHash
from tachyon_format.kernels import hashing

U64 = 2**64 - 1


@given(st.lists(st.lists(st.integers(0, 50), min_size=1, max_size=40), min_size=1,
                max_size=8), st.integers(0, U64))
def test_listing_hashes_are_the_sums_of_their_terms(listings, seed):
    """H(stack) = sum of term(frame) * R**level, level 1 the outermost frame."""
    hasher = PathHash(seed)
    hasher.cover(50)
    frames = np.array([f for listing in listings for f in listing], np.int64)
    npush = np.array([len(listing) for listing in listings], np.int64)
    src = np.cumsum(npush) - npush
    got = hasher.listings(frames, src, npush).tolist()
    for listing, h in zip(listings, got, strict=True):
        levels = np.arange(len(listing), 0, -1)  # innermost first: the deepest level first
        assert h == int(hasher.terms(np.array(listing), levels).sum(dtype=np.uint64))


@given(st.integers(0, U64))
def test_node_hashes_follow_the_parents(seed):
    hasher = PathHash(seed)
    hasher.cover(9)
    frame = np.array([3, 4, 5, 3, 9])
    parent = np.array([-1, 0, 1, -1, 3])
    level = np.array([1, 2, 3, 1, 2])
    h = hasher.nodes(frame, parent, level)
    t = [int(x) for x in hasher.terms(frame, level)]
    assert h.tolist() == [t[0], (t[0] + t[1]) & U64, (t[0] + t[1] + t[2]) & U64, t[3],
                          (t[3] + t[4]) & U64]
    # the stack [5, 4, 3] listed innermost first is node 2's path
    assert hasher.listings(np.array([5, 4, 3]), np.array([0]), np.array([3]))[0] == h[2]


@given(st.integers(0, U64), st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=20))
def test_terms_beyond_the_table_are_computed_as_the_table_has_them(seed, big):
    """A frame index past TABLE_MAX (a salvaged file's, up to 2**31 - 1) costs no table of
    that size, and every term stays what the table gives."""
    tabled, computed = PathHash(seed), PathHash(seed)
    tabled.cover(999)
    tracemalloc.start()
    computed.cover(TABLE_MAX + max(big))
    grown = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert grown < 1 << 20  # (no table grown to the index)
    frames = np.array([*range(1000)] * 2, np.int64)
    levels = np.arange(frames.size) % 200
    np.testing.assert_array_equal(computed.terms(frames, levels), tabled.terms(frames, levels))
    npush = np.array([600, 1400], np.int64)
    src = np.array([0, 600], np.int64)
    np.testing.assert_array_equal(computed.listings(frames, src, npush),
                                  tabled.listings(frames, src, npush))
    values = np.array(big, np.int64) + TABLE_MAX
    assert computed.terms(values, np.ones(values.size, np.int64)).tolist() == [
        int(hashing.hash_table(1, seed, first=int(v))[0]) * computed.root % 2**64
        for v in values]
