"""Hash kernels: one-to-one seeded mixing, grouping by hash."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels import hashing
from tests.helpers.models import U64


# ---------------------------------------------------------------------- kernels
@given(st.lists(st.integers(0, 5), max_size=80), st.booleans(), st.booleans())
def test_group_by_hash(values, wide, exact):
    # narrow values share their high bits: the fast grouping may lump them together,
    # the exact one never does
    h = np.array(values, np.uint64) * np.uint64((1 << 61) if wide else 1)
    order, head = hashing.group_by_hash(h, exact)
    assert sorted(order.tolist()) == list(range(h.size))
    hs = h[order]
    groups = np.cumsum(head) - 1
    for i in range(1, h.size):
        if hs[i] == hs[i - 1]:
            assert not head[i]  # equal values always share a group
        if groups[i] == groups[i - 1]:
            assert order[i] > order[i - 1]  # by index within a group
    if exact or wide:
        assert head.sum() == len(set(values))
        assert (hs[1:] >= hs[:-1]).all()


@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, U64))
def test_hash_table_is_one_to_one_and_extends(count, first, seed):
    table = hashing.hash_table(count, seed, first=first)
    assert np.unique(table).size == count
    whole = hashing.hash_table(first + count, seed)
    assert (whole[first:] == table).all()


@given(st.integers(0, U64), st.integers(0, 300))
def test_geometric_matches_pow(ratio, count):
    got = hashing.geometric(ratio, count)
    assert got.tolist() == [pow(ratio, g, 1 << 64) for g in range(count)]


@given(st.integers(0, U64), st.lists(st.integers(0, 2**33 - 1), max_size=20))
def test_power_table_matches_pow(base, exponents):
    table = hashing.PowerTable(base)
    assert table(np.array(exponents, np.int64)).tolist() == [
        pow(base, e, 1 << 64) for e in exponents]
