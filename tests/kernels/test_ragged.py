"""Equal rows of ragged arrays, against a dict of tuples."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.kernels import ragged
from tachyon_format.kernels.ragged import unique_rows


def oracle(rows):
    seen, first, inverse = {}, [], []
    for i, row in enumerate(rows):
        if tuple(row) not in seen:
            seen[tuple(row)] = len(first)
            first.append(i)
        inverse.append(seen[tuple(row)])
    return first, inverse


def csr(rows):
    offsets = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    return offsets, np.array([v for r in rows for v in r], np.uint64)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=4), max_size=30))
def test_unique_rows(rows):
    first, inverse = unique_rows(*csr(rows))
    assert (first.tolist(), inverse.tolist()) == oracle(rows)


def test_a_hash_collision_falls_back_to_exact(monkeypatch):
    rows = [[1, 2], [2, 1], [1, 2], [], [3]]
    monkeypatch.setattr(ragged, "hash_rows", lambda offsets, values: np.zeros(
        offsets.size - 1, np.uint64))
    first, inverse = unique_rows(*csr(rows))
    assert (first.tolist(), inverse.tolist()) == oracle(rows)
