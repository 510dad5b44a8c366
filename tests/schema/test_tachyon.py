"""Every declaration of ``schema/tachyon.py`` against real bytes, in both byte orders.

``roundtrip()`` is construct's ``common()`` idiom: parse gives the object, build gives the bytes
back, and the ``.compile()``d twin agrees. Sources of bytes:

* the hand-decoded 275-byte example of the spec (§11.2), written out below as hex;
* the spec's own examples (§1.1 config words, §3.2 frame entries, §0.1 encodings);
* real files written by CPython 3.15.2: ``tests/data/*.bin`` and, when present, the shared
  fixture directory (see ``fixture_dirs()``); each is cut into its sections and every header,
  footer, stats block, string, frame and record is round-tripped.

Big-endian twins are built from the little-endian bytes by reversing each fixed-width field
(``swap()``), independently of the schema, and must round-trip through the ``">"`` layouts.
"""

from __future__ import annotations

import functools
import inspect
import io
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import construct as cs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.schema import primitives
from tachyon_format.schema import tachyon as T
from tachyon_format.schema.primitives import ULEB128_U32
from tests.helpers.construct_checks import compiled, parse_both, roundtrip
from tests.helpers.paths import REPO

try:
    from compression import zstd
except ImportError:  # Python < 3.14
    from backports import zstd

ORDERS = ("<", ">")

def swap(data: bytes, widths: list[int]) -> bytes:
    """Reverse the bytes of each consecutive field of *widths*; the rest is copied unchanged."""
    out, pos = bytearray(), 0
    for width in widths:
        out += data[pos : pos + width][::-1]
        pos += width
    return bytes(out + data[pos:])


HEADER_WIDTHS = [4, 4, 1, 1, 1, 1, 8, 8, 8, 4, 8, 8, 4, 4]
LEGACY_HEADER_WIDTHS = [4, 4, 1, 1, 1, 1, 8, 8, 4, 4, 8, 8, 4]  # then 8 reserved bytes
FOOTER_WIDTHS = [4, 4, 8]  # then 16 checksum bytes
TRAILER_WIDTHS = [1] * 8 + [4, 4]  # the ASCII magic is never swapped
STATS_WIDTHS = [8, 8, 8, 8, 4, 4, *TRAILER_WIDTHS]
LEGACY_STATS_WIDTHS = [8, 8, *TRAILER_WIDTHS]
PREFIX_WIDTHS = [8, 4, 1]  # then the body: varints and bytes only


def hexbytes(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


# --- the spec's hand-decoded example (§11.2) ----------------------------------------------------

EXAMPLE = hexbytes(
    """
    4843 4154 0100 0000 030f 0200 404b 4c00 0000 0000 e803 0000 0000 0000 0500 0000
    0000 0000 0100 0000 8c00 0000 0000 0000 a600 0000 0000 0000 0000 0000 9a00 0000
    0100 0000 0000 0000 0000 0000 01e8 0721 0100 0100 0000 0000 0000 0000 0000 0002
    e807 21e8 0723 0100 0000 0000 0000 0000 0000 02e8 0721 0101 0101 0000 0000 0000
    0000 0000 0003 e807 2101 0102 046d 2e70 7904 6d61 696e 0477 6f72 6b01 7e08 3c6e
    6174 6976 653e 0001 0600 080c ff00 020e 0200 0a5a 0304 0100 0100 ff7b 14ae 47e1
    7a74 3f00 0000 0000 408f 4000 0000 0000 0000 0000 0000 0000 0000 0001 0000 0000
    0000 0054 4143 4853 5441 5401 0000 0038 0000 0005 0000 0003 0000 0013 0100 0000
    0000 0000 0000 0000 0000 0000 0000 0000 0000 00
    """
)

EXAMPLE_CONFIG = {"reserved": 0, "capture_features": 9, "features_known": True, "mode_plus_one": 2}
EXAMPLE_HEADER = {
    "magic": T.MAGIC,
    "format_version": 1,
    "py_major": 3,
    "py_minor": 15,
    "py_micro": 2,
    "reserved": 0,
    "start_time_us": 5_000_000,
    "sample_interval_us": 1000,
    "sample_count": 5,
    "thread_count": 1,
    "string_table_offset": 140,
    "frame_table_offset": 166,
    "compression": 0,
    "profiling_config": EXAMPLE_CONFIG,
}
EXAMPLE_PREFIX = {"thread_id": 1, "interpreter_id": 0}
EXAMPLE_RECORDS = [  # (bytes, encoding, body)
    (
        "0100000000000000 00000000 01 e807 21 01 00",
        "FULL",
        {"delta_us": 1000, "status": 0x21, "depth": 1, "frames": [0]},
    ),
    (
        "0100000000000000 00000000 00 02 e807 21 e807 23",
        "REPEAT",
        {
            "count": 2,
            "samples": [{"delta_us": 1000, "status": 0x21}, {"delta_us": 1000, "status": 0x23}],
        },
    ),
    (
        "0100000000000000 00000000 02 e807 21 01 01 01",
        "SUFFIX",
        {"delta_us": 1000, "status": 0x21, "shared": 1, "new": 1, "frames": [1]},
    ),
    (
        "0100000000000000 00000000 03 e807 21 01 01 02",
        "POP_PUSH",
        {"delta_us": 1000, "status": 0x21, "pop": 1, "push": 1, "frames": [2]},
    ),
]
EXAMPLE_STRINGS = [("046d2e7079", "m.py"), ("046d61696e", "main"), ("04776f726b", "work"),
                   ("017e", "~"), ("083c6e61746976653e", "<native>")]
EXAMPLE_FRAMES = [
    ("00 01 06 00 08 0c ff", (0, 1, 3, 0, 4, 6, None)),
    ("00 02 0e 02 00 0a 5a", (0, 2, 7, 1, 0, 5, 90)),
    ("03 04 01 00 01 00 ff", (3, 4, -1, 0, -1, 0, None)),
]
FRAME_FIELDS = ("filename_idx", "funcname_idx", "lineno", "end_lineno_delta", "column",
                "end_column_delta", "opcode")
EXAMPLE_STATS = {
    "duration_sec": 0.005,
    "sample_rate": 1000.0,
    "error_rate": 0.0,
    "missed_samples": 0.0,
    "present": {"error_rate": True, "missed_samples": False},
    "reserved": 0,
    "trailer": {"magic": b"TACHSTAT", "version": 1, "size": 56},
}
EXAMPLE_FOOTER = {"string_count": 5, "frame_count": 3, "file_size": 275, "checksum": bytes(16)}


def test_example_is_the_spec_file():
    assert len(EXAMPLE) == 275
    assert EXAMPLE[:4] == b"HCAT"
    assert EXAMPLE[-48:-40] == b"TACHSTAT"


@pytest.mark.parametrize("order", ORDERS)
def test_example_header(order):
    data = EXAMPLE[:64] if order == "<" else swap(EXAMPLE[:64], HEADER_WIDTHS)
    roundtrip(T.header(order), data, EXAMPLE_HEADER, size=T.HEADER_SIZE)


def test_big_endian_header_bytes():
    data = T.header(">").build(EXAMPLE_HEADER)
    assert data[:12] == hexbytes("54 41 43 48 00 00 00 01 03 0f 02 00")
    assert data[:4] == b"TACH"
    assert data[12:20] == (5_000_000).to_bytes(8, "big")
    assert data[28:36] == (5).to_bytes(8, "big")
    assert data[40:48] == (140).to_bytes(8, "big")
    assert data[60:64] == hexbytes("00 00 00 9a")


@pytest.mark.parametrize("order", ORDERS)
def test_header_rejects_the_other_byte_order(order):
    other = ">" if order == "<" else "<"
    with pytest.raises(cs.ConstError):
        T.header(order).parse(T.header(other).build(EXAMPLE_HEADER))
    with pytest.raises(cs.ConstError):
        compiled(T.header(order)).parse(T.header(other).build(EXAMPLE_HEADER))


def test_byte_order_sniffing():
    assert T.byte_order(EXAMPLE) == "<"
    assert T.byte_order(T.header(">").build(EXAMPLE_HEADER)) == ">"
    assert T.byte_order(b"\x28\xb5\x2f\xfd") is None


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("raw", "encoding", "body"), [
    (hexbytes(h), e, b) for h, e, b in EXAMPLE_RECORDS
], ids=[e for _, e, _ in EXAMPLE_RECORDS])
def test_example_records(order, raw, encoding, body):
    assert EXAMPLE.find(raw, 64, 140) >= 64  # the records really are the example's bytes
    data = raw if order == "<" else swap(raw, PREFIX_WIDTHS)
    prefix = {**EXAMPLE_PREFIX, "encoding": encoding}
    roundtrip(T.record(order), data, {"prefix": prefix, "body": body})
    roundtrip(T.record_prefix(order), data[:13], prefix, size=T.RECORD_PREFIX_SIZE)
    roundtrip(T.BODIES[encoding], data[13:], body)


def test_example_records_fill_the_region():
    assert b"".join(hexbytes(h) for h, _, _ in EXAMPLE_RECORDS) == (
        EXAMPLE[64:140]
    )


@pytest.mark.parametrize(("entry", "obj"), [
    ("e807 21", {"delta_us": 1000, "status": 0x21}),
    ("00 ff", {"delta_us": 0, "status": 0xFF}),
    ("ffffffffffffffffff01 22", {"delta_us": 2**64 - 1, "status": 0x22}),  # clock went back
    ("98f8ffffffffffffff01 00", {"delta_us": 2**64 - 1000, "status": 0}),
])
def test_repeat_entry(entry, obj):
    roundtrip(T.REPEAT_ENTRY, hexbytes(entry), obj)


def test_example_strings():
    table = EXAMPLE[140:166]
    assert b"".join(bytes.fromhex(h) for h, _ in EXAMPLE_STRINGS) == table
    for hex_, text in EXAMPLE_STRINGS:
        roundtrip(T.STRING, bytes.fromhex(hex_), {"text": text.encode()})


def test_example_frames():
    assert b"".join(hexbytes(h) for h, _ in EXAMPLE_FRAMES) == EXAMPLE[166:187]
    for hex_, values in EXAMPLE_FRAMES:
        roundtrip(T.FRAME, hexbytes(hex_), dict(zip(FRAME_FIELDS, values, strict=True)))


@pytest.mark.parametrize("order", ORDERS)
def test_example_stats(order):
    block = EXAMPLE[-88:-32]
    data = block if order == "<" else swap(block, STATS_WIDTHS)
    roundtrip(T.stats(order), data, EXAMPLE_STATS, size=T.STATS_SIZE)
    roundtrip(T.stats_trailer(order), data[-16:], EXAMPLE_STATS["trailer"], size=16)
    if order == ">":
        assert data[-16:] == b"TACHSTAT" + hexbytes("00000001 00000038")


@pytest.mark.parametrize("order", ORDERS)
def test_legacy_stats(order):
    """The 32-byte block: the example's two f64s and a trailer saying size 32."""
    block = EXAMPLE[-88:-72] + b"TACHSTAT" + hexbytes("01000000 20000000")
    data = block if order == "<" else swap(block, LEGACY_STATS_WIDTHS)
    obj = {"duration_sec": 0.005, "sample_rate": 1000.0,
           "trailer": {"magic": b"TACHSTAT", "version": 1, "size": 32}}
    roundtrip(T.legacy_stats(order), data, obj, size=T.LEGACY_STATS_SIZE)


@pytest.mark.parametrize("order", ORDERS)
def test_stats_trailer_magic_is_checked(order):
    with pytest.raises(cs.ConstError):
        T.stats_trailer(order).parse(b"TACHSTAX" + bytes(8))


@pytest.mark.parametrize("order", ORDERS)
def test_example_footer(order):
    data = EXAMPLE[-32:] if order == "<" else swap(EXAMPLE[-32:], FOOTER_WIDTHS)
    roundtrip(T.footer(order), data, EXAMPLE_FOOTER, size=T.FOOTER_SIZE)


# --- profiling_config (§1.1) --------------------------------------------------------------------


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("word", "mode_plus_one", "known", "features", "reserved"), [
    (0x00000000, 0, False, 0, 0),
    (0x00000059, 1, True, 0b00101, 0),  # wall, all_threads + gc
    (0x000000FA, 2, True, 0b01111, 0),  # cpu, all_threads + native + gc + opcodes
    (0x0000000B, 3, True, 0, 0),  # gil, features known, all clear
    (0x00000010, 0, False, 1, 0),  # features not known: bits 4..8 stored but meaningless
    (0x0000009A, 2, True, 9, 0),  # the §11.2 example
    (0xFFFFFFF8, 0, True, 31, 2**23 - 1),  # bits 9..31 are kept as `reserved`
])
def test_profiling_config(order, word, mode_plus_one, known, features, reserved):
    data = struct.pack(order + "I", word)
    obj = {"reserved": reserved, "capture_features": features, "features_known": known,
           "mode_plus_one": mode_plus_one}
    roundtrip(T.profiling_config(order), data, obj, size=4)


def test_profiling_config_features_are_capture_feature_bits():
    cfg = T.profiling_config("<").parse(struct.pack("<I", 0xFA))
    flags = T.CaptureFeature(cfg.capture_features)
    assert flags == (T.CaptureFeature.ALL_THREADS | T.CaptureFeature.NATIVE
                     | T.CaptureFeature.GC | T.CaptureFeature.OPCODES)
    assert T.ProfilingMode(cfg.mode_plus_one - 1) is T.ProfilingMode.CPU


# --- frame and string tables (§3) ---------------------------------------------------------------


@pytest.mark.parametrize(("hex_", "values"), [
    # ("~", None, "<native>", None): location None -> four -1s, deltas 0; opcode None
    ("04 05 01 00 01 00 ff", (4, 5, -1, 0, -1, 0, None)),
    # the first frame of real_none.bin: line 97, col 16, end col +25, opcode 50
    ("00 01 c2 01 00 20 32 32", (0, 1, 97, 0, 16, 25, 50)),
    ("00 00 00 00 00 00 00", (0, 0, 0, 0, 0, 0, 0)),
    ("00 00 00 00 00 00 fe", (0, 0, 0, 0, 0, 0, 254)),
    ("0a 0b 0a 13 64 13 00", (10, 11, 5, -10, 50, -10, 0)),  # negative deltas are legal
    ("ffffffff0f ffffffff0f feffffff0f ffffffff0f 00 00 ff",
     (2**32 - 1, 2**32 - 1, 2**31 - 1, -(2**31), 0, 0, None)),
])
def test_frame(hex_, values):
    roundtrip(T.FRAME, hexbytes(hex_), dict(zip(FRAME_FIELDS, values, strict=True)))
    assert T.FRAME_COMPILED.parse(hexbytes(hex_)) == dict(zip(FRAME_FIELDS, values, strict=True))
    assert T.FRAME_COMPILED.build(dict(zip(FRAME_FIELDS, values, strict=True))) == hexbytes(hex_)


def test_frame_rejects_oversized_index():
    with pytest.raises(cs.ConstructError):
        T.FRAME.parse(hexbytes("8080808010 00 00 00 00 00 ff"))
    with pytest.raises(cs.StreamError):  # minimum 7 bytes
        T.FRAME.parse(hexbytes("00 00 00 00 00 00"))


@pytest.mark.parametrize(("hex_", "text"), [
    ("00", ""),
    ("05 61 00 62 00 63", "a\0b\0c"),  # embedded NUL bytes are allowed
    ("01 00", "\0"),
    ("02 c3 a9", "é"),
    ("04 f0 9f 90 8d", "\U0001f40d"),
    ("08 3c 6e 61 74 69 76 65 3e", "<native>"),
])
def test_string(hex_, text):
    raw = text.encode()
    roundtrip(T.STRING, hexbytes(hex_), {"text": raw})
    assert T.STRING_COMPILED.parse(hexbytes(hex_)) == {"text": raw}
    assert T.STRING_COMPILED.build({"text": raw}) == hexbytes(hex_)


def test_long_string_has_a_multibyte_length():
    raw = b"x" * 300
    roundtrip(T.STRING, b"\xac\x02" + raw, {"text": raw})


@pytest.mark.parametrize("fmt", [T.STRING, T.STRING_COMPILED], ids=["interpreted", "compiled"])
@pytest.mark.parametrize(("hex_", "text"), [
    ("02 ff 61", "\ufffda"),
    ("01 c3", "\ufffd"),  # truncated sequence
    ("03 ed a0 80", "\ufffd\ufffd\ufffd"),  # encoded surrogate
])
def test_string_invalid_utf8_keeps_its_bytes(fmt, hex_, text):
    """The declaration holds the bytes (so they build back exactly); CPython's reader shows
    them decoded with errors='replace', as Strings does."""
    parsed = fmt.parse(hexbytes(hex_))
    assert fmt.build(parsed) == hexbytes(hex_)
    assert parsed.text.decode("utf-8", "replace") == text


def test_string_errors():
    with pytest.raises(cs.StreamError):  # length says 5, 2 bytes follow
        T.STRING.parse(hexbytes("05 61 62"))
    with pytest.raises(cs.ConstructError, match="exceeds"):  # length above u32
        T.STRING.parse(hexbytes("8080808010"))


# --- record bodies: edge values and errors ------------------------------------------------------


@pytest.mark.parametrize(("fmt", "hex_", "obj"), [
    (T.FULL, "00 00 00", {"delta_us": 0, "status": 0, "depth": 0, "frames": []}),  # empty stack
    (T.REPEAT, "00", {"count": 0, "samples": []}),
    (T.SUFFIX, "05 ff 03 00", {"delta_us": 5, "status": 0xFF, "shared": 3, "new": 0,
                               "frames": []}),
    (T.POP_PUSH, "05 20 ffffffff0f 00",  # a pop larger than any depth is legal (clamped)
     {"delta_us": 5, "status": 0x20, "pop": 2**32 - 1, "push": 0, "frames": []}),
    (T.FULL, "e807 22 03 8202 ffffffff0f 00",
     {"delta_us": 1000, "status": 0x22, "depth": 3, "frames": [258, 2**32 - 1, 0]}),
])
def test_body_edges(fmt, hex_, obj):
    roundtrip(fmt, hexbytes(hex_), obj)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("encoding", [4, 5, 0xFF])
def test_unknown_record_encoding_is_an_error(order, encoding):
    data = struct.pack(order + "QIB", 1, 0, encoding) + bytes(8)
    for variant in (T.record(order), compiled(T.record(order))):
        with pytest.raises(cs.ConstructError):
            variant.parse(data)


@pytest.mark.parametrize("order", ORDERS)
def test_record_builds_from_the_encoding_value_too(order):
    name_built = T.record(order).build(
        {"prefix": {**EXAMPLE_PREFIX, "encoding": "FULL"}, "body": EXAMPLE_RECORDS[0][2]})
    for variant in (T.record(order), compiled(T.record(order))):
        value_built = variant.build(
            {"prefix": {**EXAMPLE_PREFIX, "encoding": 1}, "body": EXAMPLE_RECORDS[0][2]})
        assert value_built == name_built


def test_body_count_must_match_its_array():
    with pytest.raises(cs.ConstructError):
        T.FULL.build({"delta_us": 0, "status": 0, "depth": 2, "frames": [1]})


# --- legacy layouts (§10) -----------------------------------------------------------------------

# The §11.2 example's header as layout L1/L2 would store it: u32 sample count at 28, the fields
# after it 4 bytes earlier, no profiling_config, bytes 56..63 zero.
LEGACY_HEADER = hexbytes(
    """
    4843 4154 0100 0000 030f 0200 404b 4c00 0000 0000 e803 0000 0000 0000 0500 0000
    0100 0000 8c00 0000 0000 0000 a600 0000 0000 0000 0000 0000 0000 0000 0000 0000
    """
)
LEGACY_HEADER_OBJ = {
    **{k: v for k, v in EXAMPLE_HEADER.items() if k != "profiling_config"},
    "reserved_tail": bytes(8),
}


@pytest.mark.parametrize("order", ORDERS)
def test_legacy_header(order):
    data = LEGACY_HEADER if order == "<" else swap(LEGACY_HEADER, LEGACY_HEADER_WIDTHS)
    roundtrip(T.legacy_header(order), data, LEGACY_HEADER_OBJ, size=64)


def test_l3_header_misreads_a_legacy_file():
    """§10: 3.15.2 reads offset 40 of an L1/L2 file, which is not the string table offset."""
    misread = T.header("<").parse(LEGACY_HEADER)
    assert misread.string_table_offset != 140
    assert misread.sample_count == 5 + (1 << 32)


@pytest.mark.parametrize(("hex_", "values"), [
    ("00 01 06", (0, 1, 3)),
    ("03 04 00", (3, 4, 0)),  # a missing location was written as lineno 0
    ("02 03 c2 01", (2, 3, 97)),
    ("ffffffff0f 00 01", (2**32 - 1, 0, -1)),
])
def test_legacy_frame(hex_, values):
    obj = dict(zip(FRAME_FIELDS[:3], values, strict=True))
    roundtrip(T.LEGACY_FRAME, hexbytes(hex_), obj)
    assert T.LEGACY_FRAME_COMPILED.parse(hexbytes(hex_)) == obj
    assert T.LEGACY_FRAME_COMPILED.build(obj) == hexbytes(hex_)


# --- property: the big-endian layout is the little-endian one with every field reversed ---------

HEADER_VALUES = st.fixed_dictionaries({
    "magic": st.just(T.MAGIC),
    "format_version": st.integers(0, 2**32 - 1),
    "py_major": st.integers(0, 255),
    "py_minor": st.integers(0, 255),
    "py_micro": st.integers(0, 255),
    "reserved": st.integers(0, 255),
    "start_time_us": st.integers(0, 2**64 - 1),
    "sample_interval_us": st.integers(0, 2**64 - 1),
    "sample_count": st.integers(0, 2**64 - 1),
    "thread_count": st.integers(0, 2**32 - 1),
    "string_table_offset": st.integers(0, 2**64 - 1),
    "frame_table_offset": st.integers(0, 2**64 - 1),
    "compression": st.integers(0, 2**32 - 1),
    "profiling_config": st.fixed_dictionaries({
        "reserved": st.integers(0, 2**23 - 1),
        "capture_features": st.integers(0, 31),
        "features_known": st.booleans(),
        "mode_plus_one": st.integers(0, 7),
    }),
})


@given(HEADER_VALUES)
def test_header_orders_are_field_swaps(obj):
    little = T.header("<").build(obj)
    roundtrip(T.header("<"), little, obj, size=64)
    roundtrip(T.header(">"), swap(little, HEADER_WIDTHS), obj, size=64)
    config = obj["profiling_config"]
    word = (config["reserved"] << 9 | config["capture_features"] << 4
            | config["features_known"] << 3 | config["mode_plus_one"])
    assert little[60:64] == struct.pack("<I", word)


@given(
    st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1),
    st.integers(0, 255), st.lists(st.integers(0, 2**32 - 1), max_size=8),
)
def test_full_record_orders_are_prefix_swaps(thread_id, interpreter_id, delta, status, frames):
    obj = {
        "prefix": {"thread_id": thread_id, "interpreter_id": interpreter_id, "encoding": "FULL"},
        "body": {"delta_us": delta, "status": status, "depth": len(frames), "frames": frames},
    }
    little = T.record("<").build(obj)
    assert little[:13] == struct.pack("<QIB", thread_id, interpreter_id, 1)
    roundtrip(T.record("<"), little, obj)
    roundtrip(T.record(">"), swap(little, PREFIX_WIDTHS), obj)


# --- real files ---------------------------------------------------------------------------------


def fixture_dirs() -> list[Path]:
    """Directories of real Tachyon files: ``$TACHYON_FIXTURES`` (os.pathsep-separated) if set;
    else the repository's ``tests/data`` and the shared fixture tree next to the checkout
    (``../shared/fixtures/tachyon/<version>/``), where present."""
    explicit = os.environ.get("TACHYON_FIXTURES")
    if explicit:
        return [Path(p) for p in explicit.split(os.pathsep) if p]
    shared = REPO.parent / "shared" / "fixtures" / "tachyon"
    return [REPO / "tests" / "data", *sorted(p for p in shared.glob("*") if p.is_dir())]


REAL_FILES = sorted(p for d in fixture_dirs() for p in d.glob("*.bin"))
REAL_IDS = [f"{p.parent.name}/{p.name}" for p in REAL_FILES]


@dataclass(frozen=True)
class Sections:
    """A real file cut into its sections with the interpreted little-endian schema."""

    data: bytes
    header: Any
    stats: bytes | None
    strings: list[bytes]
    frames: list[bytes]
    records: list[bytes]


def entries(fmt: cs.Construct, data: bytes, start: int, count: int) -> tuple[list[bytes], int]:
    """The raw bytes of *count* consecutive entries from *start*, and where they end."""
    stream = io.BytesIO(data)
    stream.seek(start)
    out = []
    for _ in range(count):
        begin = stream.tell()
        fmt.parse_stream(stream)
        out.append(data[begin : stream.tell()])
    return out, stream.tell()


@functools.cache
def sections(path: Path) -> Sections:
    data = path.read_bytes()
    assert T.byte_order(data) == "<", "the shared fixtures come from x86-64"
    header = T.header("<").parse(data)
    footer = T.footer("<").parse(data[-32:])
    has_stats = data[-48:-40] == T.STATS_MAGIC
    stats = data[-32 - T.STATS_SIZE : -32] if has_stats else None
    strings, end = entries(T.STRING, data, header.string_table_offset, footer.string_count)
    assert end == header.frame_table_offset, "strings must end where the frame table starts"
    frames, end = entries(T.FRAME, data, header.frame_table_offset, footer.frame_count)
    assert end == len(data) - 32 - (T.STATS_SIZE if has_stats else 0)
    region = data[T.HEADER_SIZE : header.string_table_offset]
    if header.compression == T.Compression.ZSTD:
        region = zstd.decompress(region)
    records = []
    stream = io.BytesIO(region)
    while stream.tell() < len(region):
        begin = stream.tell()
        T.record("<").parse_stream(stream)
        records.append(region[begin : stream.tell()])
    return Sections(data, header, stats, strings, frames, records)


real = pytest.mark.parametrize("path", REAL_FILES, ids=REAL_IDS)


def test_real_files_are_found():
    if not REAL_FILES:
        pytest.skip("no real Tachyon files (tests/data or $TACHYON_FIXTURES)")
    assert all(p.stat().st_size >= T.HEADER_SIZE + T.FOOTER_SIZE for p in REAL_FILES)


@real
@pytest.mark.parametrize("order", ORDERS)
def test_real_header_and_footer(path, order):
    s = sections(path)
    head, foot = s.data[:64], s.data[-32:]
    header = parse_both(T.header("<"), head)
    assert (header.format_version, header.py_major, header.py_minor) == (1, 3, 15)
    assert header.profiling_config.mode_plus_one <= 5
    footer = parse_both(T.footer("<"), foot)
    assert footer.file_size == len(s.data)
    assert footer.checksum == bytes(16)
    if order == ">":
        head, foot = swap(head, HEADER_WIDTHS), swap(foot, FOOTER_WIDTHS)
        assert head[:4] == b"TACH"
    roundtrip(T.header(order), head, header, size=64)
    roundtrip(T.footer(order), foot, footer, size=32)


@real
@pytest.mark.parametrize("order", ORDERS)
def test_real_stats(path, order):
    s = sections(path)
    if s.stats is None:
        pytest.skip("no TACHSTAT block")
    stats = parse_both(T.stats("<"), s.stats)
    assert stats.trailer.size == T.STATS_SIZE and stats.trailer.version == 1
    assert stats.duration_sec >= 0 and stats.sample_rate >= 0
    data = s.stats if order == "<" else swap(s.stats, STATS_WIDTHS)
    roundtrip(T.stats(order), data, stats, size=T.STATS_SIZE)
    roundtrip(T.stats_trailer(order), data[-16:], stats.trailer, size=16)


@real
def test_real_tables(path):
    s = sections(path)
    assert s.strings or not s.frames
    for raw in s.strings:
        roundtrip(T.STRING, raw, parse_both(T.STRING, raw))
    for raw in s.frames:
        frame = parse_both(T.FRAME, raw)
        assert frame.filename_idx < len(s.strings) and frame.funcname_idx < len(s.strings)
        roundtrip(T.FRAME, raw, frame)


@real
@pytest.mark.parametrize("order", ORDERS)
def test_real_records(path, order):
    s = sections(path)
    samples = 0
    for raw in s.records:
        samples += T.REPEAT.parse(raw[13:]).count if raw[12] == T.Encoding.REPEAT else 1
    assert samples == s.header.sample_count
    for raw in dict.fromkeys(s.records):  # each distinct record once
        rec = parse_both(T.record("<"), raw)
        if rec.prefix.encoding != "REPEAT":
            assert all(f < len(s.frames) for f in rec.body.frames)
        data = raw if order == "<" else swap(raw, PREFIX_WIDTHS)
        roundtrip(T.record(order), data, rec)
        roundtrip(T.record_prefix(order), data[:13], rec.prefix, size=13)
        if order == "<":  # bodies have no byte order
            roundtrip(T.BODIES[rec.prefix.encoding], data[13:], rec.body)


@real
def test_real_repeat_entries(path):
    seen: set[bytes] = set()
    for raw in sections(path).records:
        if raw[12] != T.Encoding.REPEAT:
            continue
        body = T.REPEAT.parse(raw[13:])
        rest = raw[13 + len(ULEB128_U32.build(body.count)) :]
        for sample in body.samples:
            size = len(T.REPEAT_ENTRY.build(sample))
            entry, rest = rest[:size], rest[size:]
            if entry not in seen:
                seen.add(entry)
                roundtrip(T.REPEAT_ENTRY, entry, sample)
        assert rest == b""
    if not seen:
        pytest.skip("no REPEAT records")


# --- coverage of the module ---------------------------------------------------------------------

COVERED = {
    "header", "profiling_config", "footer", "stats_trailer", "stats", "legacy_stats",
    "record_prefix", "record", "legacy_header", "STRING", "FRAME", "REPEAT_ENTRY", "REPEAT",
    "FULL", "SUFFIX", "POP_PUSH", "LEGACY_FRAME", "STRING_COMPILED", "FRAME_COMPILED",
    "LEGACY_FRAME_COMPILED",
}


def test_every_declaration_is_tested():
    """A new declaration in the schema module must be added to these tests."""
    assert declarations() == COVERED


def declarations() -> set[str]:
    """Public constructs and cached construct factories defined in the schema module."""
    names = set()
    for name, value in vars(T).items():
        if name.startswith("_") or name in vars(primitives):
            continue
        factory = inspect.isfunction(getattr(value, "__wrapped__", None)) and (
            value.__module__ == T.__name__)
        if isinstance(value, cs.Construct) or factory:
            names.add(name)
    return names


def test_bodies_match_encodings():
    assert {T.Encoding[name] for name in T.BODIES} == set(T.Encoding)
    assert [e.value for e in T.Encoding] == [0, 1, 2, 3]
