"""kernels.paths against plain Python walks of the same trees, numbered in any order."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels.paths import gather_paths, mark_paths, node_above, scan_path

from .test_tree import chain, trees


@given(trees(), st.data())
def test_walks_agree_with_a_plain_walk(parent, data):
    n = len(parent)
    up = np.array(parent, np.int64)
    values = np.arange(100, 100 + n, dtype=np.int32)
    nodes = data.draw(st.lists(st.integers(-1, n - 1), max_size=12)) if n else []
    paths = [chain(parent, v) for v in nodes]
    steps = [data.draw(st.integers(0, len(p))) for p in paths]
    for innermost_first in (True, False):
        offsets, out = gather_paths(values, up, nodes, steps, innermost_first=innermost_first)
        assert out.dtype == values.dtype
        got = [out[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
        want = [[100 + v for v in p[:s]] for p, s in zip(paths, steps, strict=True)]
        assert got == (want if innermost_first else [w[::-1] for w in want])
    above = [(p + [-1])[s] if s else v for v, p, s in zip(nodes, paths, steps, strict=True)]
    assert node_above(up, nodes, steps).tolist() == above
    on_a_path = {v for p in paths for v in p}
    assert np.flatnonzero(mark_paths(up, nodes)).tolist() == sorted(on_a_path)
    for v, p in zip(nodes, paths, strict=True):
        assert scan_path(values, up, v) == [100 + u for u in p]


def test_a_deep_chain_from_many_nodes():
    depth = 5000
    up = np.arange(-1, depth - 1, dtype=np.int64)  # node i is called from node i - 1
    nodes = np.full(300, depth - 1)
    offsets, out = gather_paths(up + 1, up, nodes, np.full(300, depth))
    assert offsets[-1] == 300 * depth
    assert out[:depth].tolist() == list(range(depth - 1, -1, -1))
    assert (node_above(up, nodes, np.full(300, depth - 1)) == 0).all()
