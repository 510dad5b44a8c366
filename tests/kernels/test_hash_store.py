"""HashStore against a dict."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels.hash_store import HashStore


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), unique=True, max_size=30),
       st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=30),
       st.integers(1, 4))
def test_store_confirms_shared_high_bits(stored, asked, pieces):
    """Hashes sharing their high 32 bits (the store's keys) are told apart by the full
    hashes, across runs."""
    full_hash = np.array([(hi << 32) | lo for hi, lo in stored], np.uint64)
    store = HashStore()
    for part in np.array_split(np.arange(full_hash.size), pieces):
        store.add(full_hash[part], part)
    query = np.sort(np.array([(hi << 32) | lo for hi, lo in asked], np.uint64))
    got = store.lookup(query, full_hash).tolist()
    where = {h: i for i, h in enumerate(full_hash.tolist())}
    assert got == [where.get(h, -1) for h in query.tolist()]


def test_many_entries_grow_the_filter():
    """The filter regrows as entries come (under 8 bits each); every entry stays found."""
    rng = np.random.default_rng(1)
    full_hash = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64, endpoint=True)
    store = HashStore()
    for part in np.array_split(np.arange(full_hash.size), 7):
        store.add(full_hash[part], part)
    assert store.size == 5000
    order = np.argsort(full_hash)
    assert store.lookup(full_hash[order], full_hash).tolist() == order.tolist()
    absent = np.sort(full_hash ^ np.uint64(1 << 40))
    assert (store.lookup(absent, full_hash) == -1).all()
