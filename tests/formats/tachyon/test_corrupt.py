"""Corrupted and truncated input: read() and validate() give FormatError / a problem list,
never another exception, a hang or a huge allocation."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tests.helpers.paths import DATA_DIR

DATA = DATA_DIR
SOURCES = {p.name: p.read_bytes() for p in sorted(DATA.glob("*.bin"))}
NAMES = sorted(SOURCES)


def read_or_format_error(data: bytes) -> None:
    """Any other exception fails the test."""
    with contextlib.suppress(FormatError):
        tachyon_format.read(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                   min_size=1, max_size=6),
)
def test_byte_edits_give_format_error_or_a_profile(name, edits):
    data = bytearray(SOURCES[name])
    for where, value in edits:
        data[int(where * len(data))] = value
    read_or_format_error(bytes(data))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), cut=st.floats(0, 1, exclude_max=True),
       region_edit=st.tuples(st.integers(0, 10_000), st.integers(0, 255)))
def test_region_edits_and_truncation(name, cut, region_edit):
    data = bytearray(SOURCES[name])
    offset, value = region_edit
    string_table = int.from_bytes(data[40:48], "little")
    if string_table > 64:
        data[64 + offset % (string_table - 64)] = value
    read_or_format_error(bytes(data))
    read_or_format_error(bytes(data[: int(cut * len(data))]))


@pytest.mark.parametrize("name", [n for n in NAMES if len(SOURCES[n]) <= 3000])
def test_every_truncation_point_of_a_small_file(name):
    data = SOURCES[name]
    for cut in range(len(data)):
        # a cut file can still be valid (CPython reads the footer from the last 32 bytes,
        # wherever they come from): only the kind of failure is asserted
        read_or_format_error(data[:cut])
        assert isinstance(tachyon_format.validate(data[:cut]), list)


def test_huge_declared_counts_do_not_allocate():
    data = bytearray(SOURCES["synthetic_edges_raw.bin"])
    data[28:36] = (2**63).to_bytes(8, "little")  # sample count
    data[36:40] = (2**32 - 1).to_bytes(4, "little")  # thread count
    with pytest.raises(FormatError, match="Sample count mismatch"):
        tachyon_format.read(bytes(data))
