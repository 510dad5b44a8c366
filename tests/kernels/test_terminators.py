"""Rank and select over terminator bytes, both index layouts, against plain scans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels import terminators, varint
from tests.helpers.models import scalar_uleb128


@given(st.binary(max_size=200))
def test_terminator_values_match_scalar_at_every_terminator(data):
    ends, values, lengths = varint.decode_uleb128_ends(np.frombuffer(data, np.uint8))
    prev = -1
    for e, v, n in zip(ends.tolist(), values.tolist(), lengths.tolist(), strict=True):
        assert n == e - prev
        if n <= 10:
            assert scalar_uleb128(data, prev + 1) == (v, e + 1)
        else:
            with pytest.raises(ValueError):
                scalar_uleb128(data, prev + 1)
        prev = e


def _varint_bytes():
    """Byte strings rich in continuation bytes (multi-byte and over-long varints)."""
    return st.lists(st.one_of(st.integers(0, 0x7F), st.integers(0x80, 0xFF)), max_size=300)


INDEX_LAYOUTS = pytest.mark.parametrize(
    "layout", [terminators.SparseTerminatorIndex, terminators.DenseTerminatorIndex])


@INDEX_LAYOUTS
@given(_varint_bytes(), st.data())
def test_terminator_index_rank_and_select(layout, data, draw):
    buf = np.array(data, np.uint8)
    ti = layout(buf)
    terms = [i for i, b in enumerate(data) if b < 0x80]
    assert ti.count == len(terms)
    pos = sorted(draw.draw(st.lists(st.integers(0, len(data)), max_size=30)))
    expected = [sum(b < 0x80 for b in data[:p]) for p in pos]
    for ordered in (False, True):
        assert ti.rank(np.array(pos, np.intp), ordered=ordered).tolist() == expected
    if terms:
        ks = sorted(draw.draw(st.lists(st.integers(0, len(terms) - 1), max_size=30)))
        for ordered in (False, True):
            got = ti.select(np.array(ks, np.intp), ordered=ordered)
            assert got.tolist() == [terms[k] for k in ks]


@INDEX_LAYOUTS
@pytest.mark.parametrize("stepped_above", [0.0, 0.25, 2.0])  # (sparse: how runs are fixed)
@given(_varint_bytes(), st.integers(1, 3), st.data())
def test_terminator_index_select_runs(layout, stepped_above, data, step, draw):
    buf = np.array(data, np.uint8)
    ti = layout(buf)
    ti.STEPPED_ABOVE = stepped_above
    firsts, counts, k = [], [], draw.draw(st.integers(0, 3))
    while k < ti.count:  # increasing, non-overlapping runs of ranks k, k + step, ...
        count = draw.draw(st.integers(0, (ti.count - 1 - k) // step + 1))
        firsts.append(k)
        counts.append(count)
        k += step * count + draw.draw(st.integers(1, 4))
    pos, multi = ti.select_runs(np.array(firsts, np.intp), np.array(counts, np.intp), step)
    terms = [i for i, b in enumerate(data) if b < 0x80]
    ranks = [f + step * i for f, c in zip(firsts, counts, strict=True) for i in range(c)]
    assert pos.tolist() == [terms[r] for r in ranks]
    assert multi.tolist() == [j for j, p in enumerate(pos.tolist()) if p and data[p - 1] >= 0x80]
    values = ti.varints_at(pos, multi)
    assert (ti.varints_ending_at(pos) == values).all()
    for p, v in zip(pos.tolist(), values.tolist(), strict=True):
        start = max([t + 1 for t in terms if t < p], default=0)
        if p - start + 1 <= varint.ULEB128_MAX_BYTES:
            assert v == scalar_uleb128(data, start)[0]


@INDEX_LAYOUTS
@given(_varint_bytes(), st.integers(1, 12))
def test_terminator_index_long_varint_ends(layout, data, length):
    ti = layout(np.array(data, np.uint8))
    expected, run = [], 0
    for i, b in enumerate(data):
        if b >= 0x80:
            run += 1
        else:
            if run >= length:
                expected.append(i)
            run = 0
    assert ti.long_varint_ends(length).tolist() == expected


def test_terminator_index_layout_follows_continuation_density():
    one_byte = np.full(1000, 5, np.uint8)
    two_byte = np.tile(np.array([0x85, 5], np.uint8), 500)
    assert isinstance(terminators.TerminatorIndex.of(one_byte), terminators.SparseTerminatorIndex)
    assert isinstance(terminators.TerminatorIndex.of(two_byte), terminators.DenseTerminatorIndex)
