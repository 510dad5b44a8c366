"""assert_profiles_equal: equal across formats where the samples are the same (CPython's own
collapsed output as the other side), and failure messages that show the first difference."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.testing import Frame, ProfileBuilder, assert_profiles_equal
from tachyon_format.testing.strategies import profiles
from tests.helpers.paths import DATA_DIR


def example(status: str = "has_gil", extra: bool = False, main_line: int = 10) -> ProfileBuilder:
    builder = ProfileBuilder(mode="wall", interval_us=1000, start_time_us=1000)
    builder.sample(thread=1, stack=[f"app.py:{main_line} main", "app.py:20 work"],
                   status="has_gil|on_cpu", repeat=3)
    builder.sample(thread=2, stack=["app.py:10 main", "<GC>"], status=status)
    if extra:
        builder.sample(thread=2, stack=["app.py:10 main"])
    return builder


@pytest.mark.parametrize("fmt", ["tachyon", "pprof", "collapsed", "speedscope", "gperftools"])
def test_a_profile_equals_its_conversions(fmt):
    builder = example()
    assert_profiles_equal(builder.profile(), builder.to_bytes(fmt))
    assert_profiles_equal(builder.to_bytes(fmt), builder.to_bytes())


@pytest.mark.parametrize("name", ["threads_cpu_opcodes_raw", "deep_recursion_wall",
                                  "exceptions_gc_gil_native"])
def test_a_recording_equals_cpythons_collapsed_output(name):
    """CPython's ``replay --collapsed`` keeps base names, drops its own frames and writes a
    frame without a location at line 0 (which the comparison of lines takes as none)."""
    assert_profiles_equal(DATA_DIR / f"{name}.bin", DATA_DIR / f"{name}.collapsed.txt",
                          basenames=True, drop_internal=True)


def test_line_0_is_no_line_but_where_positions_are_compared():
    no_line = ProfileBuilder().sample(stack=["a.py f", Frame("a.py", "g", 3, 4, 0, 9)])
    line_0 = ProfileBuilder().sample(stack=["a.py:0 f", Frame("a.py", "g", 3, 4, 0, 9)])
    assert_profiles_equal(no_line.profile(), line_0.profile())
    with pytest.raises(AssertionError) as caught:
        assert_profiles_equal(no_line.profile(), line_0.profile(), frames="position")
    assert "       a.py f\n       a.py:3 g [3:0-4:9]\n" in str(caught.value)
    assert "       a.py:0 f [0:-1-0:-1]\n       a.py:3 g [3:0-4:9]\n" in str(caught.value)


def test_the_first_differing_sample_is_shown_with_both_stacks():
    with pytest.raises(AssertionError) as caught:
        assert_profiles_equal(example().to_bytes(), example(status="on_cpu").to_bytes())
    assert str(caught.value).splitlines() == [
        "profiles differ: 1 sample only in a, 1 only in b (a has 4, b has 4)",
        "compared: each sample's time, thread, stack, status; frames as file:line func, "
        "stacks outermost first (innermost last)",
        "first difference (the earliest):",
        "  a: thread 2 (interpreter 0), t=4000 us, status has_gil, stack:",
        "       app.py:10 main",
        "       <GC>",
        "  b: thread 2 (interpreter 0), t=4000 us, status on_cpu, stack:",
        "       app.py:10 main",
        "       <GC>",
        "and 1 more differing (time, thread, stack, status) row",
    ]


def test_a_missing_sample_and_the_earliest_of_several_differences():
    with pytest.raises(AssertionError) as caught:
        assert_profiles_equal(example(main_line=11, extra=True).profile(), example().profile())
    lines = str(caught.value).splitlines()
    assert lines[0] == "profiles differ: 4 samples only in a, 3 only in b (a has 5, b has 4)"
    assert lines[3:7] == ["  a: thread 1 (interpreter 0), t=1000 us, status has_gil|on_cpu, "
                          "stack:", "       app.py:11 main", "       app.py:20 work",
                          "  b: thread 1 (interpreter 0), t=1000 us, status has_gil|on_cpu, "
                          "stack:"]
    assert lines[-1] == "and 6 more differing (time, thread, stack, status) rows"
    with pytest.raises(AssertionError, match=r"  a \(no sample at t=5000 us on thread 2 "
                                             r"\(interpreter 0\); the nearest\): thread 2 "
                                             r"\(interpreter 0\), t=4000 us, status has_gil"):
        assert_profiles_equal(example().profile(), example(extra=True).profile())


def test_without_a_timeline_counts_are_compared_and_the_message_says_so():
    with pytest.raises(AssertionError) as caught:
        assert_profiles_equal(example().to_bytes("collapsed"),
                              example(main_line=11).to_bytes())
    assert str(caught.value).splitlines() == [
        "profiles differ: 3 samples only in a, 3 only in b (a has 4, b has 4)",
        "compared: sample counts per (thread, stack); frames as file:line func, stacks "
        "outermost first (innermost last); not compared: times (a has no timeline: compared "
        "as counts per thread, stack and status); status (a has none)",
        "largest differences:",
        "  thread 1 (interpreter 0), stack:",
        "       app.py:10 main",
        "       app.py:20 work",
        "  a: 3 samples, b: 0 samples",
        "  thread 1 (interpreter 0), stack:",
        "       app.py:11 main",
        "       app.py:20 work",
        "  a: 0 samples, b: 3 samples",
    ]


def test_empty_stacks_and_empty_profiles():
    empty = ProfileBuilder().sample(stack=[], repeat=2)
    assert_profiles_equal(empty.profile(), empty.to_bytes("pprof"))
    assert_profiles_equal(ProfileBuilder().profile(), ProfileBuilder().to_bytes())
    with pytest.raises(AssertionError, match=r"not compared: threads \(b has none\)\n.*\n"
                                             r"  a: t=0 us, status 0, stack:\n"
                                             r"       \(empty stack\)\n  b: no sample\n"):
        assert_profiles_equal(empty.profile(), ProfileBuilder().profile())


def test_what_is_compared_can_be_chosen():
    a, b = example().profile(), example(status="on_cpu").profile()
    assert_profiles_equal(a, b, check_status=False)
    assert_profiles_equal(example().profile(), example(main_line=11).profile(),
                          frames="function")
    moved = replace(a, samples=replace(a.samples, timestamp_us=a.samples.timestamp_us + 1))
    assert_profiles_equal(a, moved, check_timestamps=False)
    with pytest.raises(AssertionError, match=r"b \(no sample at t=1000 us on thread 1 "
                                             r"\(interpreter 0\); the nearest\): thread 1 "
                                             r"\(interpreter 0\), t=1001 us"):
        assert_profiles_equal(a, moved)


def test_order_is_checked_only_when_asked():
    a = example().profile()
    order = np.arange(len(a.samples))[::-1]
    reversed_ = replace(a, samples=replace(a.samples, **{
        name: column[order] for name, column in a.samples.columns().items()}))
    assert_profiles_equal(a, reversed_)
    with pytest.raises(AssertionError) as caught:
        assert_profiles_equal(a, reversed_, check_order=True)
    lines = str(caught.value).splitlines()
    assert lines[0] == "profiles hold the same samples in a different order (4 positions differ)"
    assert lines[2] == "first difference, sample 0 in file order:"
    assert lines[3].startswith("  a: thread 1 (interpreter 0), t=1000 us")
    with pytest.raises(ValueError, match=r"check_order=True needs both profiles' timelines"):
        assert_profiles_equal(a, example().to_bytes("pprof"), check_order=True)


def test_a_million_samples_compare_in_seconds():
    golden = tachyon_format.read(DATA_DIR / "threads_cpu_opcodes_raw.bin")
    n = 1_000_000
    pick = np.random.default_rng(1).integers(0, len(golden.samples), n)
    samples = golden.samples
    big = replace(golden, samples=replace(
        samples, stack=samples.stack[pick], thread=samples.thread[pick],
        status=samples.status[pick],
        timestamp_us=np.sort(samples.timestamp_us[pick]) + np.arange(n, dtype=np.uint64)))
    status = big.samples.status.copy()
    status[n // 2] ^= 1
    changed = replace(big, samples=replace(big.samples, status=status))
    started = time.perf_counter()
    assert_profiles_equal(big, big)
    with pytest.raises(AssertionError, match="1 sample only in a, 1 only in b"):
        assert_profiles_equal(big, changed)
    assert time.perf_counter() - started < 10


@settings(max_examples=15, deadline=None)
@given(profiles(samples=(0, 20)), st.sampled_from(["pprof", "speedscope"]))
def test_made_up_profiles_equal_their_conversions(builder, fmt):
    """The strategies, the builder and the comparison together (and the converters)."""
    assert_profiles_equal(builder.profile(), builder.to_bytes(fmt))


@pytest.mark.parametrize("path", sorted(DATA_DIR.glob("*.bin")), ids=lambda p: p.stem)
def test_a_recording_equals_its_aggregated_read(path):
    """Counts per (thread, stack, status) on one side, every sample on the other."""
    assert_profiles_equal(path, tachyon_format.read(path, aggregate=True))
    assert_profiles_equal(path, tachyon_format.read(path, aggregate=True), frames="position")
