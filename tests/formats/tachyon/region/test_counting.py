"""SampleCounts against a dictionary of counts, batch by batch."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region import counting
from tachyon_format.formats.tachyon.region.counting import SampleCounts

RECORD = st.tuples(st.integers(0, 3), st.integers(-1, 5), st.lists(st.sampled_from([0, 1, 0x20]),
                                                                   max_size=6))
BATCHES = st.lists(st.lists(RECORD, max_size=8), max_size=6)


@given(BATCHES, st.sampled_from([1, 4, 1 << 18]), st.sampled_from([0, 63]))
def test_counts_and_first_appearance_order(batches, compact_rows, key_bits):
    """Records of (thread, stack, statuses of its samples), REPEATs of many samples and
    records of none among them: every distinct row once, in order of its first sample,
    whether rows are grouped after every batch or at the end, packed or lexsorted."""
    original = counting.COMPACT_ROWS, counting.KEY_BITS
    counting.COMPACT_ROWS, counting.KEY_BITS = compact_rows, key_bits
    try:
        counts = SampleCounts()
        expected: dict[tuple[int, int, int], int] = {}
        for batch in batches:
            thread = np.array([r[0] for r in batch], np.int32)
            stack = np.array([r[1] for r in batch], np.int32)
            nsamp = np.array([len(r[2]) for r in batch], np.int64)
            status = np.array([s for r in batch for s in r[2]], np.uint8)
            counts.count(thread, stack, nsamp, status)
            for t, s, statuses in batch:
                for value in statuses:
                    expected[(t, s, value)] = expected.get((t, s, value), 0) + 1
        out = counts.finish()
    finally:
        counting.COMPACT_ROWS, counting.KEY_BITS = original
    got = list(zip(out["thread"].tolist(), out["stack"].tolist(), out["status"].tolist(),
                   strict=True))
    assert got == list(expected)
    assert out["values"].shape == (len(expected), 1)
    assert out["values"][:, 0].tolist() == list(expected.values())
    assert counts.size == sum(expected.values())
