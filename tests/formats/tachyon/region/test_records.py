"""Record batches (the interface between discovery and commit) and the counters."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region.records import ReadStats, RecordBatch, RegionFacts


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=12), st.data())
def test_split_keeps_each_record_with_its_samples_and_frames(shape, data):
    """Each record: (samples, frames); a sample's delta is wide when its index is odd."""
    nsamp = np.array([s for s, _ in shape], np.int64)
    npush = np.array([f for _, f in shape], np.int64)
    ns = int(nsamp.sum())
    wide = np.arange(1, ns, 2)
    batch = RecordBatch(
        offset=np.arange(nsamp.size) * 10, encoding=np.zeros(nsamp.size, np.uint8),
        thread_id=np.arange(nsamp.size, dtype=np.uint64),
        interpreter_id=np.zeros(nsamp.size, np.uint32), nsamp=nsamp, arg=npush.copy(),
        npush=npush, delta=np.arange(ns, dtype=np.uint8), status=np.arange(ns, dtype=np.uint8),
        frames=np.arange(int(npush.sum())), wide=wide, wide_delta=wide.astype(np.uint64) << 40)
    k = data.draw(st.integers(0, nsamp.size))
    head, tail = batch.split(k)
    assert (head.size, tail.size) == (k, nsamp.size - k)
    for name in ("offset", "nsamp", "npush", "delta", "status", "frames", "wide_delta"):
        joined = np.concatenate([getattr(head, name), getattr(tail, name)])
        assert joined.tolist() == getattr(batch, name).tolist(), name
    assert np.concatenate([head.wide, tail.wide + head.status.size]).tolist() == wide.tolist()
    assert (tail.wide < tail.status.size).all() and (head.wide < head.status.size).all()


def test_counts_are_cpythons_get_stats():
    counts = ReadStats()
    counts.add([2, 1, 0, 3], samples=10)  # REPEATs hold 10 - 4 samples
    assert counts.as_stats() == {
        "repeat_records": 2, "repeat_samples": 6, "full_records": 1, "suffix_records": 0,
        "pop_push_records": 3, "total_records": 6, "total_samples": 10,
        "stack_reconstructions": 4}


def test_region_facts_check_the_byte_order():
    facts = RegionFacts.of(order=">", start_time_us=-1, thread_count=2, frame_count=3)
    assert (facts.endian, facts.start_time_us, facts.frame_string_ok) == ("big", 2**64 - 1,
                                                                          None)
    with pytest.raises(ValueError):
        RegionFacts.of(order="=", start_time_us=0, thread_count=1, frame_count=1)
