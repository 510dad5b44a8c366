"""The vectorised varint kernels against a scalar model of CPython's reader loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels import varint
from tachyon_format.schema import leb128
from tests.helpers.models import U64, canonical, scalar_uleb128

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
    assert varint.decode_uleb128(run).tolist() == expected


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
    assert varint.decode_uleb128(raw).tolist() == [value]


def test_uleb128_rejects_11_bytes_and_truncation():
    with pytest.raises(ValueError):
        varint.decode_uleb128(b"\x80" * 10 + b"\x00")
    with pytest.raises(ValueError):
        varint.decode_uleb128(b"\x80")


@given(st.lists(st.integers(0, U64), max_size=50))
def test_encode_uleb128_roundtrip_and_canonical(values):
    raw = varint.encode_uleb128(values)
    assert raw == b"".join(canonical(v) for v in values)
    assert varint.decode_uleb128(raw).tolist() == values


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_zigzag_roundtrip(values):
    z = varint.encode_zigzag(values)
    assert z.tolist() == [((v << 1) ^ (v >> 63)) & U64 for v in values]
    assert z.tolist() == [leb128.encode_zigzag(v, 64) for v in values]  # the scalar twin
    assert varint.decode_zigzag(z).tolist() == values
    assert [leb128.decode_zigzag(int(u)) for u in z] == values


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50))
def test_zigzag_keeps_the_width_of_u32_values(values):
    """Tachyon's svarints: uint32 zigzag values decode to int32 columns, not int64."""
    z = np.array([leb128.encode_zigzag(v, 32) for v in values], np.uint32)
    decoded = varint.decode_zigzag(z)
    assert decoded.dtype == np.int32 and decoded.tolist() == values


@given(st.lists(st.integers(0, U64), max_size=50), st.data())
def test_decoding_from_the_first_byte_matches_the_scalar(values, draw):
    """:func:`decode_uleb128_from` (by a varint's first byte) against ``scan_uleb128``, with
    limits that cut some of them."""
    raw = b"".join(canonical(v) for v in values)
    buf = np.frombuffer(raw, np.uint8)
    starts = np.cumsum([0] + [len(canonical(v)) for v in values])[:-1].astype(np.int64)
    limits = np.array([draw.draw(st.integers(int(s), len(raw))) for s in starts], np.int64)
    got, lengths, ok = varint.decode_uleb128_from(buf, starts, limits)
    for i, (start, limit) in enumerate(zip(starts.tolist(), limits.tolist(), strict=True)):
        try:
            value, after = leb128.scan_uleb128(raw, start, limit)
        except leb128.LEB128Error:
            assert not ok[i]
            continue
        assert ok[i] and (int(got[i]), start + int(lengths[i])) == (value, after)


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
        got = varint.decode_uleb128_ending_at(buf, np.array(pos, np.intp), first)
        for i, p in enumerate(pos):
            start = firsts[i] if first is not None else max(
                [e + 1 for e in ends if e < p], default=0)
            if p - start + 1 <= varint.ULEB128_MAX_BYTES:
                assert got[i] == scalar_uleb128(data, start)[0]
