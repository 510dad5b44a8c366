"""Kernels against scalar references (§0.1 varint rules)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.codec import kernels

U64 = (1 << 64) - 1


def scalar_uleb128(data: bytes, pos: int = 0) -> tuple[int, int]:
    """CPython's reader loop: 10 bytes at most, only bit 0 of a 10th byte kept."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("incomplete")
        byte = data[pos]
        pos += 1
        result |= ((byte & 0x7F) << shift) & U64
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise ValueError("malformed")


def canonical(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


# a varint: its canonical form, optionally padded with 0x80 groups (non-canonical), or any
# 1..10 raw bytes ending with a terminator (exercises the 10th-byte rule)
varint_bytes = st.one_of(
    st.integers(0, U64).map(canonical),
    st.tuples(st.integers(0, (1 << 21) - 1), st.integers(0, 3)).map(
        lambda t: canonical(t[0])[:-1] + bytes([canonical(t[0])[-1] | 0x80]) + b"\x80" * t[1]
        + b"\x00" if len(canonical(t[0])) + t[1] < 10 else canonical(t[0])),
    st.lists(st.integers(0x80, 0xFF), max_size=9).flatmap(
        lambda head: st.integers(0, 0x7F).map(lambda last: bytes(head) + bytes([last]))),
)


@given(st.lists(varint_bytes, max_size=40))
def test_decode_uleb128_matches_scalar(parts):
    run = b"".join(parts)
    expected = []
    pos = 0
    while pos < len(run):
        value, pos = scalar_uleb128(run, pos)
        expected.append(value)
    assert kernels.decode_uleb128(run).tolist() == expected


@given(st.binary(max_size=200))
def test_terminator_values_match_scalar_at_every_terminator(data):
    ends, values, lengths = kernels.decode_uleb128_ends(np.frombuffer(data, np.uint8))
    prev = -1
    for e, v, n in zip(ends.tolist(), values.tolist(), lengths.tolist(), strict=True):
        assert n == e - prev
        if n <= 10:
            assert scalar_uleb128(data, prev + 1) == (v, e + 1)
        else:
            with pytest.raises(ValueError):
                scalar_uleb128(data, prev + 1)
        prev = e


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b"\x00", 0),
        (b"\x80\x00", 0),
        (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", U64),
        (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", U64),
        (b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x7e", 0),
        (b"\xe8\x07", 1000),
    ],
)
def test_uleb128_edge_cases(raw, value):
    assert kernels.decode_uleb128(raw).tolist() == [value]


def test_uleb128_rejects_11_bytes_and_truncation():
    with pytest.raises(ValueError):
        kernels.decode_uleb128(b"\x80" * 10 + b"\x00")
    with pytest.raises(ValueError):
        kernels.decode_uleb128(b"\x80")


@given(st.lists(st.integers(0, U64), max_size=50))
def test_encode_uleb128_roundtrip_and_canonical(values):
    raw = kernels.encode_uleb128(values)
    assert raw == b"".join(canonical(v) for v in values)
    assert kernels.decode_uleb128(raw).tolist() == values


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_zigzag_roundtrip(values):
    z = kernels.encode_zigzag(values)
    assert z.tolist() == [((v << 1) ^ (v >> 63)) & U64 for v in values]
    assert kernels.decode_zigzag(z).tolist() == values


@given(st.lists(st.tuples(st.integers(-50, 50), st.integers(0, 6)), max_size=20),
       st.integers(1, 3))
def test_ragged_ranges(pairs, step):
    starts = [s for s, _ in pairs]
    lengths = [n for _, n in pairs]
    expected = [s + step * i for s, n in pairs for i in range(n)]
    assert kernels.decode_ragged_ranges(starts, lengths, step).tolist() == expected


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
    got = kernels.decode_group_cumsum(keys, values, np.array(carry, np.uint64))
    assert got.tolist() == expected


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, U64)), max_size=60),
       st.lists(st.integers(0, U64), min_size=5, max_size=5))
def test_group_cumsum_with_given_order(rows, carry):
    keys = np.array([k for k, _ in rows], np.uint8)
    values = np.array([v for _, v in rows], np.uint64)
    order = np.argsort(keys, kind="stable")
    plain = kernels.decode_group_cumsum(keys, values, np.array(carry, np.uint64))
    given_order = kernels.decode_group_cumsum(keys, values, np.array(carry, np.uint64),
                                              order=order)
    assert given_order.tolist() == plain.tolist()


@given(st.binary(max_size=120), st.data())
def test_uleb128_ending_at_matches_scalar(data, draw):
    buf = np.frombuffer(data, np.uint8)
    ends = [i for i, b in enumerate(data) if b < 0x80]
    pos = draw.draw(st.lists(st.sampled_from(ends), max_size=20)) if ends else []
    # start of each varint: after the previous terminator, or a given first byte
    firsts = []
    for p in pos:
        start = max([e + 1 for e in ends if e < p], default=0)
        firsts.append(draw.draw(st.integers(start, p)))
    for first in (None, np.array(firsts, np.intp)):
        got = kernels.decode_uleb128_ending_at(buf, np.array(pos, np.intp), first)
        for i, p in enumerate(pos):
            start = firsts[i] if first is not None else max(
                [e + 1 for e in ends if e < p], default=0)
            if p - start + 1 <= kernels.ULEB128_MAX_BYTES:
                assert got[i] == scalar_uleb128(data, start)[0]


def _varint_bytes():
    """Byte strings rich in continuation bytes (multi-byte and over-long varints)."""
    return st.lists(st.one_of(st.integers(0, 0x7F), st.integers(0x80, 0xFF)), max_size=300)


INDEX_LAYOUTS = pytest.mark.parametrize(
    "layout", [kernels.SparseTerminatorIndex, kernels.DenseTerminatorIndex])


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
        if p - start + 1 <= kernels.ULEB128_MAX_BYTES:
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


@given(st.lists(st.integers(0, 6), max_size=60))
def test_unique_inverse_matches_numpy(values):
    keys = np.array(values, np.int64)
    uniq, first, inv = kernels.unique_inverse(keys)
    u, f, i = np.unique(keys, return_index=True, return_inverse=True)
    assert (uniq.tolist(), first.tolist(), inv.tolist()) == (u.tolist(), f.tolist(),
                                                             i.reshape(-1).tolist())


def test_terminator_index_layout_follows_continuation_density():
    one_byte = np.full(1000, 5, np.uint8)
    two_byte = np.tile(np.array([0x85, 5], np.uint8), 500)
    assert isinstance(kernels.TerminatorIndex.of(one_byte), kernels.SparseTerminatorIndex)
    assert isinstance(kernels.TerminatorIndex.of(two_byte), kernels.DenseTerminatorIndex)


@given(st.lists(st.integers(0, 300), max_size=70), st.data())
def test_previous_below_matches_scan(values, data):
    """Against a backward scan, with wide values (no narrow tables) now and then."""
    n = len(values)
    queries = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, 70_000)),
                                 max_size=30))
    at = np.array([q[0] for q in queries], np.int64)
    limit = np.array([q[1] % 301 if i % 3 else q[1] for i, q in enumerate(queries)], np.int64)
    got = kernels.previous_below(np.array(values, np.int64), at, limit)
    expected = [max((j for j in range(a) if values[j] < lim), default=-1)
                for a, lim in zip(at.tolist(), limit.tolist(), strict=True)]
    assert got.tolist() == expected
