"""The LEB128 primitives against an independent scalar model of CPython's decoder
(docs/format/reader.md#varint-decoding).

Every rule is checked for the interpreted construct, its ``.compile()``d twin and the type
embedded in a compiled Struct (the way the frame table uses it).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import construct as cs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tachyon_format.schema.primitives import (
    ULEB128,
    ULEB128_U32,
    ZigZagLEB128,
    encode_uleb128,
)

U32 = 2**32 - 1
U64 = 2**64 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


# --- reference model ----------------------------------------------------------------------------
# Written from the spec's prose, not from the module: a C-style loop with a uint64 accumulator.


class RefError(Exception):
    """The reference rejects the input; ``kind`` is "truncated", "too long" or "range"."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def ref_decode(buf: bytes, max_value: int = U64) -> tuple[int, int]:
    """(value, bytes consumed), as CPython's reader decodes a uvarint at the start of *buf*."""
    result = shift = pos = 0
    while True:
        if shift >= 64:
            raise RefError("too long")
        if pos >= len(buf):
            raise RefError("truncated")
        byte = buf[pos]
        pos += 1
        result = (result | ((byte & 0x7F) << shift)) % 2**64  # uint64_t shift drops high bits
        if byte < 0x80:
            break
        shift += 7
    if result > max_value:
        raise RefError("range")
    return result, pos


def ref_encode(value: int) -> bytes:
    """Shortest LEB128: ceil(bit_length / 7) groups, at least one."""
    groups = max(1, -(-value.bit_length() // 7))
    return bytes(
        ((value >> (7 * i)) & 0x7F) | (0x80 if i < groups - 1 else 0) for i in range(groups)
    )


def ref_zigzag(value: int) -> int:
    return 2 * value if value >= 0 else -2 * value - 1


def ref_unzigzag(z: int) -> int:
    return z // 2 if z % 2 == 0 else -(z + 1) // 2


def ref_decode_zigzag(buf: bytes) -> tuple[int, int]:
    z, used = ref_decode(buf, U32)
    return ref_unzigzag(z), used


# --- the three ways a primitive is used ---------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    label: str
    fmt: cs.Construct
    in_struct: bool

    def parse(self, data: bytes) -> tuple[Any, int]:
        stream = io.BytesIO(data)
        obj = self.fmt.parse_stream(stream)
        return (obj.v if self.in_struct else obj), stream.tell()

    def build(self, value: Any) -> bytes:
        return self.fmt.build({"v": value} if self.in_struct else value)


def variants(prim: cs.Construct) -> list[Variant]:
    return [
        Variant("interpreted", prim, False),
        Variant("compiled", prim.compile(), False),
        Variant("compiled-struct", cs.Struct("v" / prim).compile(), True),
    ]


UNSIGNED = {"ULEB128": (ULEB128, U64), "ULEB128_U32": (ULEB128_U32, U32)}
ALL = {
    "ULEB128": variants(ULEB128),
    "ULEB128_U32": variants(ULEB128_U32),
    "ZigZagLEB128": variants(ZigZagLEB128),
}
U64_VARIANTS = ALL["ULEB128"]
U32_VARIANTS = ALL["ULEB128_U32"]
ZZ_VARIANTS = ALL["ZigZagLEB128"]


def labelled(vs: list[Variant]):
    return pytest.mark.parametrize("variant", vs, ids=[v.label for v in vs])


def check_against_reference(variant: Variant, data: bytes, reference) -> None:
    try:
        expected = reference(data)
    except RefError as exc:
        with pytest.raises(cs.ConstructError):
            variant.parse(data)
        if exc.kind == "truncated":  # running off the end is a stream error, not a value error
            with pytest.raises(cs.StreamError):
                variant.parse(data)
        return
    assert variant.parse(data) == expected


# --- the reference itself is pinned to the spec's examples ---------------------------------------


def test_reference_model_matches_spec_examples():
    assert ref_decode(bytes.fromhex("ff" * 9 + "7f")) == (U64, 10)
    assert ref_decode(bytes.fromhex("8000")) == (0, 2)
    assert ref_encode(1000) == bytes.fromhex("e807")
    assert [ref_encode(ref_zigzag(v)).hex() for v in (-1, 3, 97)] == ["01", "06", "c201"]
    with pytest.raises(RefError, match="too long"):
        ref_decode(bytes.fromhex("ff" * 10 + "01"))


# --- canonical build ----------------------------------------------------------------------------


@labelled(U64_VARIANTS)
@given(value=st.integers(0, U64))
@example(value=0)
@example(value=127)
@example(value=128)
@example(value=U64)
def test_uleb128_builds_canonical_and_parses_back(variant, value):
    data = variant.build(value)
    assert data == ref_encode(value)
    assert len(data) == max(1, -(-value.bit_length() // 7)) <= 10
    assert variant.parse(data + b"\xff") == (value, len(data))


@labelled(U32_VARIANTS)
@given(value=st.integers(0, U32))
@example(value=U32)
def test_uleb128_u32_builds_canonical_and_parses_back(variant, value):
    data = variant.build(value)
    assert data == ref_encode(value)
    assert len(data) <= 5
    assert variant.parse(data) == (value, len(data))


@given(value=st.integers(0, U64))
def test_encode_uleb128_helper_is_canonical(value):
    assert encode_uleb128(value) == ref_encode(value)


# --- decoding arbitrary bytes agrees with the reference -----------------------------------------


LEB_BYTES = st.one_of(
    st.binary(max_size=13),
    # long runs of continuation bytes, so the 10th/11th-byte rules are reached often
    st.builds(
        lambda n, last, tail: b"\xff" * n + bytes([last]) + tail,
        st.integers(0, 11),
        st.integers(0, 255),
        st.binary(max_size=2),
    ),
)


@labelled(U64_VARIANTS)
@given(data=LEB_BYTES)
def test_uleb128_decodes_like_reference(variant, data):
    check_against_reference(variant, data, ref_decode)


@labelled(U32_VARIANTS)
@given(data=LEB_BYTES)
def test_uleb128_u32_decodes_like_reference(variant, data):
    check_against_reference(variant, data, lambda b: ref_decode(b, U32))


@labelled(ZZ_VARIANTS)
@given(data=LEB_BYTES)
def test_zigzag_decodes_like_reference(variant, data):
    check_against_reference(variant, data, ref_decode_zigzag)


# --- the decoding rules of §0.1, one by one -----------------------------------------------------

MAX_10 = bytes.fromhex("ffffffffffffffffff01")


@labelled(U64_VARIANTS)
def test_ten_bytes_is_the_limit(variant):
    assert variant.parse(MAX_10) == (U64, 10)
    assert variant.build(U64) == MAX_10


@labelled(U64_VARIANTS)
def test_eleven_bytes_are_rejected(variant):
    with pytest.raises(cs.ConstructError):
        variant.parse(bytes.fromhex("ffffffffffffffffffff01"))
    with pytest.raises(cs.ConstructError):  # non-canonical zero, 11 bytes
        variant.parse(bytes.fromhex("8080808080808080808000"))


@labelled(U64_VARIANTS)
@pytest.mark.parametrize(
    ("hex_", "value"),
    [
        ("ffffffffffffffffff7f", U64),  # the spec's example: bits 1..6 of byte 10 dropped
        ("ffffffffffffffffff7e", 2**63 - 1),  # bit 0 clear: the top bit is 0
        ("8080808080808080807e", 0),  # every payload bit in the 10th byte except bit 0 lost
        ("80808080808080808001", 2**63),
    ],
)
def test_only_bit_0_of_the_tenth_byte_is_kept(variant, hex_, value):
    assert variant.parse(bytes.fromhex(hex_)) == (value, 10)


@labelled(U64_VARIANTS + U32_VARIANTS + ZZ_VARIANTS)
@pytest.mark.parametrize(("hex_", "used"), [("8000", 2), ("808000", 3), ("80" * 9 + "00", 10)])
def test_non_canonical_zero_is_accepted(variant, hex_, used):
    assert variant.parse(bytes.fromhex(hex_)) == (0, used)


@labelled(U64_VARIANTS + U32_VARIANTS)
def test_non_canonical_nonzero_is_accepted(variant):
    assert variant.parse(bytes.fromhex("e8878000")) == (1000, 4)


@labelled(U32_VARIANTS)
@pytest.mark.parametrize(
    "hex_",
    ["8080808010", "ffffffff1f", "ffffffffffffffffff7f", "ffffffffffffffffff01"],
)
def test_u32_range_is_enforced_on_parse(variant, hex_):
    with pytest.raises(cs.ConstructError, match="exceeds"):
        variant.parse(bytes.fromhex(hex_))


@labelled(U32_VARIANTS)
def test_u32_max_and_its_non_canonical_forms_are_accepted(variant):
    assert variant.parse(bytes.fromhex("ffffffff0f")) == (U32, 5)
    assert variant.parse(bytes.fromhex("ffffffff8f8000")) == (U32, 7)


@labelled(U64_VARIANTS + U32_VARIANTS + ZZ_VARIANTS)
@pytest.mark.parametrize("hex_", ["", "80", "ff", "e8", "ffff", "ffffffffffffffffff"])
def test_truncation_is_a_stream_error(variant, hex_):
    with pytest.raises(cs.StreamError):
        variant.parse(bytes.fromhex(hex_))


@labelled(U64_VARIANTS)
@pytest.mark.parametrize("bad", [-1, 2**64, 2**70, 1.5, "1", None])
def test_uleb128_build_rejects_out_of_range(variant, bad):
    with pytest.raises(cs.ConstructError):
        variant.build(bad)


@labelled(U32_VARIANTS)
@pytest.mark.parametrize("bad", [-1, 2**32, U64])
def test_uleb128_u32_build_rejects_out_of_range(variant, bad):
    with pytest.raises(cs.ConstructError):
        variant.build(bad)


@pytest.mark.parametrize("prim", [ULEB128, ULEB128_U32, ZigZagLEB128])
def test_varints_have_no_fixed_size(prim):
    with pytest.raises(cs.SizeofError):
        prim.sizeof()


# --- zigzag -------------------------------------------------------------------------------------


@labelled(ZZ_VARIANTS)
@pytest.mark.parametrize(
    ("value", "hex_"),
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (-2, "03"),
        (3, "06"),
        (97, "c201"),
        (-64, "7f"),
        (64, "8001"),
        (I32_MAX, "feffffff0f"),
        (I32_MIN, "ffffffff0f"),
    ],
)
def test_zigzag_examples(variant, value, hex_):
    assert variant.build(value).hex() == hex_
    assert variant.parse(bytes.fromhex(hex_)) == (value, len(hex_) // 2)


@labelled(ZZ_VARIANTS)
@given(value=st.integers(I32_MIN, I32_MAX))
@example(value=I32_MIN)
@example(value=I32_MAX)
def test_zigzag_roundtrips_int32(variant, value):
    data = variant.build(value)
    assert data == ref_encode(ref_zigzag(value))
    assert variant.parse(data) == (value, len(data))


@labelled(ZZ_VARIANTS)
@pytest.mark.parametrize("bad", [I32_MAX + 1, I32_MIN - 1, 2**40, None])
def test_zigzag_build_rejects_outside_int32(variant, bad):
    with pytest.raises(cs.ConstructError):
        variant.build(bad)


@labelled(ZZ_VARIANTS)
def test_zigzag_source_is_a_u32(variant):
    with pytest.raises(cs.ConstructError, match="exceeds"):
        variant.parse(bytes.fromhex("8080808010"))  # z = 2**32
