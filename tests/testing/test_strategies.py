"""The hypothesis strategies: ``profiles()`` examples are files CPython 3.15 reads as what
the builder was given (checked in one reference process for all examples), and
``corrupted()`` damages every copy, which the readers survive."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.testing.strategies import corrupted, profiles
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

from .cpython_reads import builder_rows, cpython_decodes, our_decode, sample_rows

EXAMPLES = 30


def drawn(strategy, count: int) -> list:
    """*count* examples of *strategy*, drawn by hypothesis (shrinking makes no sense here:
    the examples are checked together afterwards)."""
    found = []

    @settings(max_examples=count, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        found.append(example)

    collect()
    return found


@requires_reference
def test_profiles_are_read_back_by_cpython_as_given(tmp_path):
    builders = drawn(profiles(), EXAMPLES)
    builders += drawn(profiles(threads=(1, 1), depth=(250, 300), repeats=50, samples=(3, 5),
                               opcodes=False, compression="none"), 3)
    paths = [b.write(tmp_path / f"{i}.bin") for i, b in enumerate(builders)]
    for path, builder, decode in zip(paths, builders, cpython_decodes(paths), strict=True):
        assert isinstance(decode, str), (path, decode)
        assert sample_rows(decode) == builder_rows(builder), path
        assert our_decode(path) == decode, path


@settings(max_examples=20, deadline=None)
@given(profiles(threads=(2, 4), samples=(1, 10), statuses=st.just(3), compression="none",
                mode="gil", opcodes=False, monotonic=True))
def test_profiles_follow_the_controls(builder):
    assert builder.compression == "none" and builder.mode == 2
    times = [s.timestamp_us for s in builder.samples]
    assert times == sorted(times)
    assert {s.status for s in builder.samples} == {3}
    assert all(opcode is None for s in builder.samples for *_, opcode in s.frames)
    assert 1 <= len({s.thread for s in builder.samples}) <= 4


GOLDEN = DATA_DIR / "exceptions_mode_zstd.bin"


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_corrupted_copies_differ_and_readers_survive_them(data):
    original = GOLDEN.read_bytes()
    damaged = data.draw(corrupted(original))
    assert damaged != original
    assert isinstance(tachyon_format.validate(damaged, format="tachyon"), list)
    with contextlib.suppress(tachyon_format.FormatError):  # (anything else fails the test)
        tachyon_format.read(damaged, format="tachyon")


@pytest.mark.parametrize("data", [b"", b"x"])
@settings(max_examples=10, deadline=None)
@given(st.data())
def test_corrupted_handles_tiny_inputs(data, st_data):
    damaged = st_data.draw(corrupted(data, max_edits=1))
    assert isinstance(damaged, bytes) and (damaged != data or not data)
