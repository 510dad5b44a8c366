"""Segment and group kernels against plain Python loops."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels import segments
from tests.helpers.models import U64


@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 6)), max_size=20),
       st.integers(1, 3))
def test_ragged_ranges(pairs, step):
    starts = [s for s, _ in pairs]
    lengths = [n for _, n in pairs]
    expected = [s + step * i for s, n in pairs for i in range(n)]
    assert segments.decode_ragged_ranges(starts, lengths, step).tolist() == expected


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, U64)), max_size=60),
       st.lists(st.integers(0, U64), min_size=5, max_size=5))
def test_group_cumsum_wraps_per_group(rows, carry):
    keys = np.array([k for k, _ in rows], np.uint8)
    values = np.array([v for _, v in rows], np.uint64)
    clock = list(carry)
    expected = []
    for k, v in rows:
        clock[k] = (clock[k] + v) & U64
        expected.append(clock[k])
    got = segments.decode_group_cumsum(keys, values, np.array(carry, np.uint64))
    assert got.tolist() == expected


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, U64)), max_size=60),
       st.lists(st.integers(0, U64), min_size=5, max_size=5))
def test_group_cumsum_with_given_order(rows, carry):
    keys = np.array([k for k, _ in rows], np.uint8)
    values = np.array([v for _, v in rows], np.uint64)
    order = np.argsort(keys, kind="stable")
    plain = segments.decode_group_cumsum(keys, values, np.array(carry, np.uint64))
    given_order = segments.decode_group_cumsum(keys, values, np.array(carry, np.uint64),
                                              order=order)
    assert given_order.tolist() == plain.tolist()


@given(st.lists(st.integers(0, 6), max_size=60))
def test_unique_inverse_matches_numpy(values):
    keys = np.array(values, np.int64)
    uniq, first, inv = segments.unique_inverse(keys)
    u, f, i = np.unique(keys, return_index=True, return_inverse=True)
    assert (uniq.tolist(), first.tolist(), inv.tolist()) == (u.tolist(), f.tolist(),
                                                             i.reshape(-1).tolist())


@given(st.lists(st.integers(0, 300), max_size=70), st.data())
def test_previous_below_matches_scan(values, data):
    """Against a backward scan, with wide values (no narrow tables) now and then."""
    n = len(values)
    queries = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, 70_000)),
                                 max_size=30))
    at = np.array([q[0] for q in queries], np.int64)
    limit = np.array([q[1] % 301 if i % 3 else q[1] for i, q in enumerate(queries)], np.int64)
    got = segments.previous_below(np.array(values, np.int64), at, limit)
    expected = [max((j for j in range(a) if values[j] < lim), default=-1)
                for a, lim in zip(at.tolist(), limit.tolist(), strict=True)]
    assert got.tolist() == expected


@given(st.lists(st.integers(-1, 30), max_size=40), st.lists(st.integers(0, U64), max_size=40))
def test_chain_sums(ptr, values):
    n = min(len(ptr), len(values))
    ptr = [p if p < i else -1 for i, p in enumerate(ptr[:n])]  # no cycles: point back
    got = segments.decode_chain_sums(np.array(values[:n], np.uint64), np.array(ptr, np.int64))
    for i in range(n):
        total, j = 0, i
        while j >= 0:
            total += values[j]
            j = ptr[j]
        assert got[i] == total & U64
