"""Slices against plain-Python filters over the samples (hypothesis), and every writer on a
slice of a real profile; a sliced Tachyon profile reads back as the chosen samples."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import ThreadStatus
from tachyon_format.analysis import function_table, slicing
from tests.helpers.made_up_profiles import profiles
from tests.helpers.paths import DATA_DIR


def rows_of(profile):
    """The samples as tuples, to compare slices with; a sample's thread as its (interpreter,
    thread id), since a slice keeps only the threads its samples have."""
    columns = {name: column.tolist() for name, column in profile.samples.columns().items()}
    ids = list(zip(profile.threads.interpreter_id.tolist(), profile.threads.thread_id.tolist(),
                   strict=True))
    columns["thread"] = [ids[t] if t >= 0 else t for t in columns["thread"]]
    return list(zip(*columns.values(), strict=True))


def test_a_slice_keeps_the_threads_of_its_samples_in_order():
    from tachyon_format.testing import ProfileBuilder

    profile = (ProfileBuilder().sample(thread=5, t=1, stack=["a.py:1 f"])
               .sample(thread=6, t=2, stack=["a.py:1 f"]).sample(thread=7, t=3, stack=["a.py:1 f"])
               .sample(thread=5, t=4, stack=["a.py:1 f"]).profile())
    got = slicing.threads(profile, [7, 5])
    assert got.threads.thread_id.tolist() == [5, 7]
    assert got.samples.thread.tolist() == [0, 1, 0]


def expected_rows(profile, keep):
    return [row for row, k in zip(rows_of(profile), keep, strict=True) if k]


def stack_matches(profile, stack, regex):
    strings = profile.strings
    for r in profile.stacks.tuples()[int(stack)]:
        for column in (profile.frames.funcname, profile.frames.filename):
            index = int(column[r])
            if index < len(strings) and regex.search(strings[index]):
                return True
    return False


@settings(max_examples=60)
@given(profiles(), st.sampled_from(["a", r"\.py$", "^f$", "<", "zzz", "coordinator"]))
def test_focus_and_ignore_equal_a_per_sample_filter(profile, pattern):
    regex = re.compile(pattern)
    match = [stack_matches(profile, s, regex) for s in profile.samples.stack.tolist()]
    assert rows_of(slicing.focus(profile, pattern)) == expected_rows(profile, match)
    assert rows_of(slicing.ignore(profile, pattern)) == expected_rows(
        profile, [not m for m in match])


@settings(max_examples=60)
@given(profiles(), st.integers(-100, 5000), st.integers(-100, 9000), st.booleans())
def test_time_window_equals_a_per_sample_filter(profile, start, end, relative):
    stamps = profile.samples.timestamp_us.tolist()
    zero = min(stamps, default=0) if relative else 0
    keep = [start <= t - zero < end for t in stamps]
    got = slicing.time_window(profile, start + (0 if relative else 10**6), end + (
        0 if relative else 10**6), relative=relative)
    if not relative:
        keep = [start + 10**6 <= t < end + 10**6 for t in stamps]
    assert rows_of(got) == expected_rows(profile, keep)


@settings(max_examples=60)
@given(profiles(), st.integers(0, 63), st.integers(0, 63), st.sets(st.integers(6, 10)))
def test_status_and_threads_equal_per_sample_filters(profile, all_of, none_of, tids):
    statuses = profile.samples.status.tolist()
    keep = [(s & all_of) == all_of and not s & none_of for s in statuses]
    assert rows_of(slicing.status(profile, all_of=all_of, none_of=none_of)) == expected_rows(
        profile, keep)
    ids = profile.threads.thread_id.tolist()
    keep = [ids[t] in tids for t in profile.samples.thread.tolist()]
    assert rows_of(slicing.threads(profile, tids)) == expected_rows(profile, keep)
    interpreters = profile.threads.interpreter_id.tolist()
    for wanted in ([0], [1]):
        keep = [interpreters[t] in wanted for t in profile.samples.thread.tolist()]
        assert rows_of(slicing.threads(profile, interpreter_ids=wanted)) == expected_rows(
            profile, keep)


WRITERS = [name for name, fmt in tachyon_format.FORMATS.items() if "write" in fmt.verbs]


@pytest.mark.parametrize("name", WRITERS)
def test_every_writer_writes_a_slice(tmp_path, name):
    profile = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    sliced = slicing.time_window(slicing.ignore(profile, "fib"), 0, 600_000)
    sliced = slicing.status(sliced, none_of=ThreadStatus.HAS_EXCEPTION)
    assert 0 < len(sliced.samples) < len(profile.samples)
    target = tmp_path / f"out.{name}"
    tachyon_format.write(sliced, target, format=name)
    assert target.stat().st_size > 0
    if name == "tachyon":  # (the record table of the whole file is dropped, not reused)
        back = tachyon_format.read(target)
        for column in ("timestamp_us", "thread_id", "status"):
            assert np.array_equal(back.sample_columns()[column],
                                  sliced.sample_columns()[column])
        assert function_table(back, "opcode").rows() == function_table(sliced, "opcode").rows()


def test_missing_columns_are_refused():
    aggregated = tachyon_format.read(DATA_DIR / "threads_gil_blocking.bin", aggregate=True)
    with pytest.raises(ValueError, match="no timestamps"):
        slicing.time_window(aggregated, 0, 10)
