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


@given(st.lists(st.integers(0, 5), max_size=40))
def test_last_per_group(keys):
    k = np.array(keys, np.int64)
    got = segments.last_per_group(k, np.argsort(k, kind="stable"))
    last = {key: i for i, key in enumerate(keys)}
    assert got.tolist() == [last[key] for key in sorted(last)]


@given(st.lists(st.booleans(), max_size=20))
def test_first_false(values):
    expected = values.index(False) if False in values else len(values)
    assert segments.first_false(np.array(values, bool)) == expected


@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 20))
def test_group_blocks_partition_the_groups(counts, block):
    c = np.array(counts, np.int64)
    group = item = 0
    for ga, gb, ia, ib in segments.group_blocks(c, block):
        assert (ga, ia) == (group, item) and gb > ga or not counts
        assert ib - ia == c[ga:gb].sum()
        assert gb - ga <= 1 or ib - ia <= block + c[gb - 1]  # about `block` items
        group, item = gb, ib
    assert (group, item) == (len(counts), sum(counts))


@given(st.data())
def test_chain_from_first_matches_walking(data):
    size = data.draw(st.integers(2, 60))
    positions = sorted(data.draw(st.sets(st.integers(1, size - 1), max_size=size)) | {0})
    targets = [data.draw(st.one_of(st.sampled_from(positions), st.integers(0, size + 1)))
               for _ in positions]
    walk, i = [0], 0
    while True:  # a pointer that is no position, or one backwards (no real chain has one)
        t = targets[i]
        if t not in positions or positions.index(t) <= i:
            break
        i = positions.index(t)
        walk.append(i)
    forward = [t if t not in positions or positions.index(t) > j else size + 1
               for j, t in enumerate(targets)]
    got = segments.chain_from_first(np.array(positions), np.array(forward), size)
    assert got.tolist() == walk


def test_chain_from_first_walks_long_false_runs():
    """A run of false positions each pointing to the next outlasts the pruning rounds."""
    positions = np.arange(0, 40)
    targets = positions + 1
    targets[0] = 20  # the chain: 0, 20, 21, ..., 39 (39 points to 40: no position)
    got = segments.chain_from_first(positions, targets, 41)
    assert got.tolist() == [0, *range(20, 40)]


@given(st.integers(1, 40), st.integers(1, 3000), st.integers(0, 3000))
def test_chain_from_first_follows_interleaved_chains(stride, size, end):
    """Every position pointing *stride* on (a region of one repeated byte: 17 interleaved
    chains), one of them cut at *end*: the pruning never settles; the chain from 0 goes on
    to the cut or past the last position, for any length (not only powers of 2)."""
    positions = np.arange(size)
    targets = positions + stride
    targets[min(end, size - 1)] = size + 1
    walk = [0]
    while walk[-1] != min(end, size - 1) and walk[-1] + stride < size:
        walk.append(walk[-1] + stride)
    got = segments.chain_from_first(positions, np.minimum(targets, size + 1), size)
    assert got.tolist() == walk


def check_max_plus(steps, carry):
    """decode_group_max_plus against a loop over (key, add, floor, reset) steps."""
    keys = np.array([s[0] for s in steps], np.uint8)
    add = np.array([s[1] for s in steps], np.int64)
    floor = np.array([s[2] for s in steps], np.int64)
    reset = np.array([s[3] for s in steps], bool)
    value = list(carry)
    before, after = [], []
    for k, a, b, r in steps:
        before.append(value[k])
        value[k] = b if r else max(value[k] + a, b)
        after.append(value[k])
    got = segments.decode_group_max_plus(keys, np.argsort(keys, kind="stable"), add, floor,
                                         reset, np.array(carry, np.int64))
    assert (got[0].tolist(), got[1].tolist()) == (before, after)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-300, 300), st.integers(0, 600),
                          st.booleans()), max_size=60),
       st.lists(st.integers(0, 300), min_size=4, max_size=4))
def test_group_max_plus_matches_a_loop(steps, carry):
    check_max_plus(steps, carry)


@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([-(2**58), 0, 5, 2**58]),
                          st.sampled_from([-(2**61), 0, 7, 2**61]), st.booleans()),
                max_size=12))
def test_group_max_plus_values_far_apart(steps):
    """Values too far apart for one pass in int64 are done by halves."""
    check_max_plus(steps, [0, 1, 2**60])


@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.integers(0, 99)), max_size=40),
       st.lists(st.integers(-1, 99), min_size=4, max_size=4))
def test_group_forward_fill_matches_a_loop(rows, carry):
    keys = np.array([r[0] for r in rows], np.uint8)
    has = np.array([r[1] for r in rows], bool)
    values = np.array([r[2] for r in rows], np.int32)
    current = list(carry)
    expected = []
    for k, h, v in rows:
        if h:
            current[k] = v
        expected.append(current[k])
    got = segments.group_forward_fill(keys, np.argsort(keys, kind="stable"), has, values,
                                      np.array(carry, np.int32))
    assert got.dtype == np.int32 and got.tolist() == expected


@given(st.lists(st.integers(0, 9), max_size=20))
def test_count_longer_than(lengths):
    lengths = sorted(lengths, reverse=True)
    got = segments.count_longer_than(np.array(lengths, np.int64))
    top = lengths[0] if lengths else 0
    assert got.tolist() == [sum(n > i for n in lengths) for i in range(top)]


@given(st.lists(st.integers(0, 2), min_size=1, max_size=30), st.data(), st.integers(1, 5))
def test_ranges_equal(values, data, block):
    n = len(values)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n),
                                         st.integers(0, n)), max_size=10))
    pairs = [(a, b, min(c, n - a, n - b)) for a, b, c in pairs]
    a, b, c = (np.array([p[i] for p in pairs], np.int64) for i in range(3))
    got = segments.ranges_equal(np.array(values), a, b, c, block)
    assert got.tolist() == [values[x:x + k] == values[y:y + k] for x, y, k in pairs]


@given(st.lists(st.integers(0, 20), max_size=20, unique=True),
       st.lists(st.integers(0, 25), max_size=20))
def test_find_sorted(haystack, needles):
    haystack = sorted(haystack)
    got = segments.find_sorted(np.array(haystack, np.int64), np.array(needles, np.int64))
    assert got.tolist() == [haystack.index(x) if x in haystack else -1 for x in needles]


def test_grown_keeps_the_used_part():
    a = np.arange(5, dtype=np.int16)
    g = segments.grown(a, 12, 3)
    assert g.dtype == np.int16 and g.size == 12 and g[:3].tolist() == [0, 1, 2]
