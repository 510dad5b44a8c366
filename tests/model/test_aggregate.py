"""group_count against collections.Counter."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.model.aggregate import group_count

wide = st.integers(-(2**62), 2**62)
rows = st.lists(st.tuples(st.integers(-1, 3), st.integers(-1, 40) | wide, st.integers(0, 255)),
                max_size=60)


@given(rows, st.booleans())
def test_counts_equal_a_counter(data, weighted):
    a, b, c = (np.array(col, dtype=dtype) for col, dtype in zip(
        zip(*data, strict=True) if data else ([], [], []), (np.int32, np.int64, np.uint8),
        strict=True))
    weights = np.arange(len(data), dtype=np.int64) + 1 if weighted else None
    keys, counts = group_count({"a": a, "b": b, "c": c}, weights)
    expected = Counter()
    for i, row in enumerate(data):
        expected[row] += int(weights[i]) if weighted else 1
    got = dict(zip(zip(keys["a"].tolist(), keys["b"].tolist(), keys["c"].tolist(),
                       strict=True), counts.tolist(), strict=True))
    assert got == dict(expected)
    assert list(got) == sorted(got)  # sorted by the columns, first column first
    assert keys["a"].dtype == np.int32 and keys["c"].dtype == np.uint8


def test_uint64_columns_near_the_top():
    big = np.array([2**64 - 1, 5, 2**64 - 1, 2**63], dtype=np.uint64)
    keys, counts = group_count({"t": big})
    assert keys["t"].tolist() == [5, 2**63, 2**64 - 1] and counts.tolist() == [1, 1, 2]


def test_aggregate_samples_keeps_every_weight_per_stack_and_thread():
    import tachyon_format
    from tachyon_format.model.aggregate import aggregate_samples
    from tests.helpers.paths import DATA_DIR

    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    grouped = aggregate_samples(profile)
    expected = Counter(zip(profile.samples.thread.tolist(), profile.samples.stack.tolist(),
                           profile.samples.status.tolist(), strict=True))
    got = Counter()
    for key, weight in zip(zip(grouped.samples.thread.tolist(), grouped.samples.stack.tolist(),
                               grouped.samples.status.tolist(), strict=True),
                           grouped.weights().tolist(), strict=True):
        got[key] += weight
    assert got == expected and len(grouped.samples) == len(expected)
    assert grouped.samples.timestamp_us is None and grouped.stacks is profile.stacks
    without_status = aggregate_samples(profile, keep_status=False)
    assert without_status.samples.status is None
    assert int(without_status.weights().sum()) == len(profile.samples)
