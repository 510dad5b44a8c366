"""The top-level fields but the tables (:func:`decode_head`) against protobuf's own parse of
the same bytes (the classes built from the same declarations, test-only): merged singular
messages, last-wins scalars, packed and unpacked comments, unknown fields skipped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format import FormatError
from tachyon_format.formats.pprof.wire import ValueTypeIds, decode_head
from tachyon_format.schema.leb128 import encode_uleb128
from tests.helpers.pprof import message_classes

Profile = message_classes()["Profile"]
i64 = st.integers(-(2**63), 2**63 - 1)
small = st.integers(0, 300)
SCALARS = ("period", "time_nanos", "duration_nanos", "drop_frames", "keep_frames",
           "default_sample_type", "doc_url")
NUMBERS = {"drop_frames": 7, "keep_frames": 8, "time_nanos": 9, "duration_nanos": 10,
           "period": 12, "default_sample_type": 14, "doc_url": 15}


def key(number: int, wire: int) -> bytes:
    return encode_uleb128(number << 3 | wire)


def varint_field(number: int, value: int) -> bytes:
    return key(number, 0) + encode_uleb128(value & (2**64 - 1))


def len_field(number: int, payload: bytes) -> bytes:
    return key(number, 2) + encode_uleb128(len(payload)) + payload


def value_type(t: int | None, u: int | None) -> bytes:
    return (b"" if t is None else varint_field(1, t)) + (b"" if u is None else varint_field(2, u))


field = st.one_of(
    st.tuples(st.just("scalar"), st.sampled_from(SCALARS), i64),
    st.tuples(st.just("sample_type"), st.none() | small, st.none() | small),
    st.tuples(st.just("period_type"), st.none() | small, st.none() | small),
    st.tuples(st.just("comment"), st.lists(small, max_size=4), st.booleans()),
    st.tuples(st.just("unknown"), st.integers(16, 40), small),
)


def encode(item) -> bytes:
    kind, a, b = item
    if kind == "scalar":
        return varint_field(NUMBERS[a], b)
    if kind in ("sample_type", "period_type"):
        return len_field(1 if kind == "sample_type" else 11, value_type(a, b))
    if kind == "comment":
        if b:
            return len_field(13, b"".join(encode_uleb128(v) for v in a))
        return b"".join(varint_field(13, v) for v in a)
    return varint_field(a, b)


@settings(max_examples=200)
@given(st.lists(field, max_size=12))
def test_decode_head_agrees_with_protobuf(items):
    rest = b"".join(encode(item) for item in items)
    expected = Profile.FromString(rest)
    head = decode_head(rest)
    assert head.sample_type == tuple(ValueTypeIds(v.type, v.unit) for v in expected.sample_type)
    assert head.period_type == (ValueTypeIds(expected.period_type.type,
                                             expected.period_type.unit)
                                if expected.HasField("period_type") else None)
    assert head.comment == tuple(expected.comment)
    for name in SCALARS:
        assert getattr(head, name) == getattr(expected, name), name


def test_a_scalar_of_the_wrong_wire_type_names_the_field():
    with pytest.raises(FormatError) as info:
        decode_head(len_field(12, b"\x01"))
    assert info.value.path == "Profile -> period"


def test_a_cut_field_is_malformed():
    with pytest.raises(FormatError, match="malformed profile fields"):
        decode_head(key(12, 0))
