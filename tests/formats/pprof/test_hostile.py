"""pprof input built to hurt the reader (issue 21): a huge string, millions of empty strings,
deep stacks repeated, millions of empty mappings, locations or functions, one location of
millions of lines, one sample of millions of location ids or values. Each class ends with a
result or a FormatError (the LimitError naming its keyword), never a MemoryError, in memory
bounded by the message and a constant; CI sizes here, the issue's own sizes (and ours) as
slow tests. docs/formats/pprof.md lists the limits."""

from __future__ import annotations

import gzip

import pytest

import tachyon_format
from tachyon_format.errors import FormatError, LimitError
from tachyon_format.formats.pprof.samples import LONG_SAMPLE
from tachyon_format.formats.pprof.wire import MAX_LOCATIONS, MAX_STRINGS
from tachyon_format.formats.sources import MAX_STACK_DEPTH
from tests.formats.pprof import hostile_files as hostile
from tests.helpers.bounds import Bounded

MIB = 1 << 20


def message_size(data: bytes) -> int:
    return len(gzip.decompress(data))


@pytest.mark.parametrize("num_bytes", [64 * MIB, pytest.param(900 * MIB, marks=pytest.mark.slow)])
def test_one_long_string_is_copied_without_an_index_per_byte(num_bytes):
    # 900 MiB asked numpy for a 7 GiB index (every byte's offset) and failed
    data = hostile.one_long_string(num_bytes)
    with Bounded() as bounds:
        profile = tachyon_format.read(data, format="pprof")
    assert len(profile.strings) == 4 and len(profile.strings.raw(3)) == num_bytes
    assert bounds.peak < 2 * num_bytes + 64 * MIB, bounds.peak  # the message and the table
    assert bounds.seconds < 10 * num_bytes / (64 * MIB), bounds.seconds


def test_more_strings_than_the_limit_name_the_keyword():
    data = hostile.many_empty_strings(1 << 21)
    with Bounded() as bounds, pytest.raises(LimitError) as info:
        tachyon_format.read(data, format="pprof", max_strings=1 << 20)
    error = info.value
    assert (error.limit, error.value, error.path) == ("max_strings", 1 << 20,
                                                      "Profile -> string_table")
    assert "max_strings=1048576" in error.message
    assert bounds.peak < 320 * MIB, bounds.peak  # a run search's window (8 MiB) at most
    assert tachyon_format.read(data, format="pprof", max_strings=1 << 22).strings[5] == ""
    problems = tachyon_format.validate(data, format="pprof", max_strings=1 << 20)
    assert any("max_strings" in str(p) for p in problems), problems


@pytest.mark.slow
def test_the_issues_268_million_empty_strings_stop_at_the_default_limit():
    # a 522 KB file: MemoryError after 36 s at 3.8 GB before the limit
    data = hostile.many_empty_strings(268_000_000)
    with Bounded() as bounds, pytest.raises(LimitError) as info:
        tachyon_format.read(data, format="pprof")
    assert info.value.limit == "max_strings" and info.value.value == MAX_STRINGS
    assert bounds.peak < 2 * message_size(data) + 1024 * MIB, bounds.peak
    assert bounds.seconds < 120, bounds.seconds


def test_more_samples_than_the_limit_name_the_keyword():
    data = hostile.deep_samples(100, 3)
    with pytest.raises(LimitError) as info:
        tachyon_format.read(data, format="pprof", max_samples=99)
    assert (info.value.limit, info.value.path) == ("max_samples", "Profile -> sample")
    assert len(tachyon_format.read(data, format="pprof", max_samples=100).samples) == 100


@pytest.mark.parametrize("num_samples", [1_000, pytest.param(40_000, marks=pytest.mark.slow)])
def test_deep_stacks_are_decoded_a_bounded_chunk_at_a_time(num_samples):
    # 40,000 samples 10**4 locations deep (5.9 MB): every location id of every sample was
    # decoded at once, MemoryError; 5,000 of them took 2.65 GB
    depth = 10_000
    data = hostile.deep_samples(num_samples, depth)
    with Bounded() as bounds:
        profile = tachyon_format.read(data, format="pprof")
    assert len(profile.samples) == num_samples
    assert profile.stack_frames(profile.samples.stack[-1]).size == depth
    assert bounds.peak < message_size(data) + 256 * MIB, bounds.peak
    assert bounds.seconds < 10 * 3 * num_samples / 1_000, bounds.seconds


TABLES = {3: ("max_mappings", "Profile -> mapping"), 4: ("max_locations", "Profile -> location"),
          5: ("max_functions", "Profile -> function")}


@pytest.mark.parametrize("number", sorted(TABLES))
def test_more_table_entries_than_the_limit_name_the_keyword(number):
    keyword, path = TABLES[number]
    data = hostile.many_empty_entries(number, (1 << 16) + 1)
    with Bounded() as bounds, pytest.raises(LimitError) as info:
        tachyon_format.read(data, format="pprof", **{keyword: 1 << 16})
    assert (info.value.limit, info.value.value, info.value.path) == (keyword, 1 << 16, path)
    assert f"{keyword}=65536" in info.value.message
    assert bounds.peak < 64 * MIB, bounds.peak
    # within the limit the entries are decoded, and refused for their id 0 (Go does so too)
    with pytest.raises(FormatError, match="id 0 is reserved"):
        tachyon_format.read(data, format="pprof", **{keyword: 1 << 17})
    problems = tachyon_format.validate(data, format="pprof", **{keyword: 1 << 16})
    assert any(keyword in str(p) for p in problems), problems


@pytest.mark.parametrize("count", [10**6, pytest.param(10**8, marks=pytest.mark.slow)])
def test_the_default_limits_refuse_millions_of_empty_locations_before_decoding(count):
    # 10**8 empty locations (a 194 KB file): 99 s and 4.9 GB before the limits
    data = hostile.many_empty_entries(4, count)
    if count > MAX_LOCATIONS:
        with Bounded() as bounds, pytest.raises(LimitError, match="max_locations"):
            tachyon_format.read(data, format="pprof")
    else:
        with Bounded() as bounds, pytest.raises(FormatError, match="id 0 is reserved"):
            tachyon_format.read(data, format="pprof")
    assert bounds.peak < message_size(data) + 80 * min(count, MAX_LOCATIONS) + 64 * MIB, \
        bounds.peak
    assert bounds.seconds < 10 * 2 * count / 10**7 + 10, bounds.seconds


def test_more_lines_than_the_limit_name_the_keyword():
    data = hostile.many_lines(50_000)
    with Bounded() as bounds, pytest.raises(LimitError) as info:
        tachyon_format.read(data, format="pprof", max_lines=10_000)
    assert (info.value.limit, info.value.value, info.value.path) == (
        "max_lines", 10_000, "Profile -> location -> line")
    assert bounds.peak < 32 * MIB, bounds.peak
    profile = tachyon_format.read(data, format="pprof", max_lines=50_000)
    assert profile.stack_frames(profile.samples.stack[0]).size == 50_000


@pytest.mark.parametrize("count", [10**6, pytest.param(10**8, marks=pytest.mark.slow)])
def test_one_location_of_millions_of_lines_stops_at_the_stack_depth(count):
    # 10**7 lines of one location (a 19 KB file) took 121 s and 3.1 GB, walked field by field
    data = hostile.many_lines(count)
    with Bounded() as bounds, pytest.raises(FormatError) as info:
        tachyon_format.read(data, format="pprof")
    assert info.value.path == "Profile -> location -> 0", info.value
    assert "MAX_STACK_DEPTH" in info.value.message
    assert bounds.peak < message_size(data) + 64 * MIB, bounds.peak
    assert bounds.seconds < 30, bounds.seconds


@pytest.mark.parametrize("num_ids", [10**6, pytest.param(10**7, marks=pytest.mark.slow)])
def test_one_giant_sample_is_counted_before_it_is_decoded(num_ids):
    # 10**7 ids in one sample (a 10 KB file): 5 s and 525 MB decoding it whole, then refused
    data = hostile.one_giant_sample(num_ids)
    with Bounded() as bounds, pytest.raises(FormatError) as info:
        tachyon_format.read(data, format="pprof")
    assert info.value.path == "Profile -> sample -> 0 -> location_id"
    assert f"a stack of {num_ids} frames, deeper than the limit" in info.value.message
    assert bounds.peak < message_size(data) + 32 * MIB, bounds.peak
    assert bounds.seconds < 10 + 10 * num_ids / 10**6, bounds.seconds


@pytest.mark.parametrize("num_values", [10**6, pytest.param(10**7, marks=pytest.mark.slow)])
def test_one_sample_of_millions_of_values_is_refused_before_it_is_decoded(num_values):
    data = hostile.one_giant_sample(1, num_values)
    with Bounded() as bounds, pytest.raises(FormatError) as info:
        tachyon_format.read(data, format="pprof")
    assert info.value.path == "Profile -> sample -> 0 -> value"
    assert f"{num_values} values for 1 sample types" in info.value.message
    assert bounds.peak < message_size(data) + 32 * MIB, bounds.peak


def test_a_long_sample_within_the_limits_reads():
    # two-byte ids: the sample is longer than LONG_SAMPLE and counted, then decoded
    data = hostile.one_giant_sample(MAX_STACK_DEPTH, location_id=300)
    assert message_size(data) > LONG_SAMPLE
    profile = tachyon_format.read(data, format="pprof")
    assert profile.stack_frames(profile.samples.stack[0]).size == MAX_STACK_DEPTH
    with pytest.raises(FormatError, match="a stack of 65537 frames, deeper than the limit"):
        tachyon_format.read(hostile.one_giant_sample(MAX_STACK_DEPTH + 1, location_id=300),
                            format="pprof")
