"""The thread table: one row per (interpreter_id, thread_id), in first-appearance order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region.threads import ThreadCountError, ThreadTable

PAIRS = st.tuples(st.sampled_from([0, 1, 7]), st.sampled_from([0, 1, 5, 2**64 - 1]))


@given(st.lists(st.lists(PAIRS, max_size=12), max_size=5), st.integers(1, 13))
def test_batches_of_pairs_get_the_rows_of_pairs_one_by_one(batches, limit):
    one_by_one, batched = ThreadTable(limit, 5), ThreadTable(limit, 5)
    for batch in batches:
        expected, error = [], None
        for iid, tid in batch:
            try:
                expected.append(one_by_one.row(iid, tid))
            except ThreadCountError as exc:
                error = (str(exc), len(expected))
                break
        iids = np.array([p[0] for p in batch], np.uint32)
        tids = np.array([p[1] for p in batch], np.uint64)
        if error is None:
            assert batched.rows_of(iids, tids).tolist() == expected
        else:
            with pytest.raises(ThreadCountError) as info:
                batched.rows_of(iids, tids)
            assert (str(info.value), info.value.index) == error
            break
    assert [a.tolist() for a in batched.ids()] == [a.tolist() for a in one_by_one.ids()]
    assert batched.clock.tolist() == [5] * len(batched)
    assert batched.node.tolist() == [-1] * len(batched)
    assert batched.depth.tolist() == [0] * len(batched)
    tids, iids, rows = batched.sorted_ids()
    assert (np.diff(tids.astype(object)) >= 0).all()
    assert [(int(i), int(t)) for i, t in zip(iids, tids, strict=True)] == [
        tuple(int(x) for x in pair) for pair in zip(*(a[rows] for a in batched.ids()),
                                                       strict=True)]


def test_state_views_write_through():
    threads = ThreadTable(40, 0)
    for tid in range(20):  # past the first capacity (16 rows)
        threads.row(0, tid)
    threads.clock[3] = 99
    threads.depth[19] = 4
    assert threads.clock[3] == 99 and threads.depth[19] == 4 and len(threads.node) == 20
    assert threads.interpreters == [0]
