"""Malformed input: ``read`` raises only :class:`FormatError`, naming offset and field;
``validate`` returns the problem and never raises.

Cases: every truncation of real files (at each word, and at each byte of the binary part of
a small one), wrong starts, counts and depths beyond the data, absurd depths, a missing
trailer, text that is not text, and hypothesis-driven corruption of real files.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.gperftools.reader import parse
from tachyon_format.formats.gperftools.validation import validate
from tests.helpers.libprofiler import COMMITTED

REAL = (COMMITTED / "libprofiler_mixed.prof").read_bytes()
TEXT_AT = REAL.index(b"\n") - REAL[: REAL.index(b"\n")][::-1].index(b"\0")  # after trailer


def small(*records: tuple[int, list[int]], text: bytes = b"m\n", trailer: bool = True) -> bytes:
    values = [0, 3, 0, 100, 0]
    for count, pcs in records:
        values += [count, len(pcs), *pcs]
    values += [0, 1, 0] if trailer else []
    return struct.pack(f"<{len(values)}Q", *values) + text


def read_error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(data)
    problems = validate(data)
    assert list(map(str, problems)) == [str(caught.value)]
    return caught.value


# --- named cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "offset", "path"), [
    (b"", 0, "header -> header_count"),
    (struct.pack("<3Q", 0, 3, 0), 24, "header -> period_us"),
    (struct.pack("<4Q", 0, 3, 0, 0) + b"\0" * 8, 24, "header -> period_us"),  # period 0
    (struct.pack("<5Q", 0, 3, 0, 100, 9), 32, "header -> padding"),
    (struct.pack("<5Q", 0, 7, 0, 100, 0), 8, "header -> num_header_slots"),
    (b"HCAT" + b"\1" * 60, 0, "header -> header_count"),
    (struct.pack(">5I", 0, 3, 5, 100, 0), 8, "header -> version"),
])
def test_header_problems(data, offset, path):
    error = read_error(data)
    assert (error.offset, error.path) == (offset, path)


def test_num_pcs_beyond_the_data_is_refused_before_allocating():
    records = [(1, [0x10])] * 12 + [(1, [0x20])]
    data = small(*records)
    at = 40 + 12 * 24 + 8  # record 12's num_pcs
    for absurd in (5, 10**6, 2**63, 2**64 - 1):
        corrupt = data[:at] + struct.pack("<Q", absurd) + data[at + 8 :]
        error = read_error(corrupt)
        assert (error.offset, error.path) == (at, "records -> 12 -> num_pcs")
        assert f"num_pcs {absurd} runs past the end" in str(error)


def test_cut_inside_a_record_head():
    data = small((1, [0x10]), trailer=False, text=b"")
    error = read_error(data + struct.pack("<Q", 4))
    assert (error.offset, error.path) == (len(data) + 8, "records -> 1 -> num_pcs")
    error = read_error(data + b"\1\2\3")  # a partial word is no count
    assert (error.offset, error.path) == (len(data), "records -> 1 -> count")


def test_a_missing_trailer_is_a_truncation():
    data = small((1, [0x10]), (2, [0x20, 0x30]), trailer=False, text=b"")
    error = read_error(data)
    assert (error.offset, error.path) == (len(data), "trailer")


def test_text_that_is_not_text():
    error = read_error(small((1, [0x10]), text=b"ok line\n\x00\x01binary"))
    assert error.path == "map_text -> line 2"


def test_java_symbols_with_a_pc_beyond_64_bits():
    values = [0, 3, 1, 100, 0, 1, 1, 5, 0, 1, 0]
    data = struct.pack("<11Q", *values) + b"0x5 f\n0x1ffffffffffffffff g\n"
    assert read_error(data).path == "java_symbols -> line 2 -> pc"


# --- every truncation -----------------------------------------------------------------------------


def test_every_truncation_of_a_real_file():
    """Cut at every word of the binary part: always a FormatError naming a field; cut in
    the text after the trailer: still a profile (the map text has no length)."""
    for end in range(0, TEXT_AT, 8):
        error = read_error(REAL[:end])
        assert error.path and error.offset is not None and error.offset <= end
    for end in (TEXT_AT, TEXT_AT + 1, len(REAL) - 1):
        assert validate(REAL[:end]) == []


def test_every_byte_truncation_of_a_small_file():
    data = small((3, [0x10, 0x20]), (1, [0x30]))
    for end in range(len(data) - 2):
        error = read_error(data[:end])
        assert error.offset <= max(end, 0) + 8


# --- fuzzing --------------------------------------------------------------------------------------


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_after_a_header(tail):
    for head in (struct.pack("<5Q", 0, 3, 0, 100, 0), struct.pack(">5I", 0, 3, 1, 100, 0)):
        data = head + tail
        try:
            parse(data)
        except FormatError as exc:
            assert exc.path and list(map(str, validate(data))) == [str(exc)]
        else:
            assert validate(data) == []


@settings(max_examples=300)
@given(st.lists(st.tuples(st.integers(0, len(REAL) // 8 - 1), st.integers(0, 2**64 - 1)),
                min_size=1, max_size=4))
def test_corrupted_words_of_a_real_file(changes):
    data = bytearray(REAL)
    for word, value in changes:
        data[word * 8 : word * 8 + 8] = struct.pack("<Q", value)
    try:
        parse(bytes(data))
    except FormatError as exc:
        assert list(map(str, validate(bytes(data)))) == [str(exc)]
    else:
        assert validate(bytes(data)) == []


def test_validate_never_raises_on_a_bad_path(tmp_path):
    assert validate(tmp_path / "missing.prof")[0].message.startswith("cannot read")
    assert tachyon_format.validate(tmp_path / "missing.prof")[0].message.startswith(
        "cannot read")


@pytest.mark.parametrize(("records", "where"), [
    ([(2**63, [0x1000])], "record 0 counts"),
    ([(6 * 10**13, [0x1000]), (6 * 10**13, [0x1000])], "add up to more than an int64"),
    ([(2**60, [0x1000])], "times the period"),
])
def test_counts_beyond_an_int64_are_refused_not_wrapped(records, where):
    """Found by the hostile-input attack (issue 21): counts of 2**63 and more became
    negative samples (Go's pprof wraps them too)."""
    with pytest.raises(FormatError, match=where):
        tachyon_format.read(small(*records), format="gperftools")
    assert validate(small(*records))
