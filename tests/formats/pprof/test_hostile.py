"""pprof input built to hurt the reader (issue 21): a huge string, millions of empty strings,
deep stacks repeated. Each class ends with a result or a FormatError (the LimitError naming
its keyword), never a MemoryError, in memory bounded by the message and a constant; CI
sizes here, the issue's own sizes as slow tests. docs/format/limits.md lists the limits."""

from __future__ import annotations

import gzip

import pytest

import tachyon_format
from tachyon_format.errors import LimitError
from tachyon_format.formats.pprof.wire import MAX_STRINGS
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
