"""read() / iter_batches() / dump against CPython's own decode."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.region import decoder as sample_codec
from tachyon_format.render.canonical import write_canonical
from tests.helpers.golden import reference_text
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import reference_decode, reference_write, requires_reference

DATA = DATA_DIR
SHARED = CPYTHON_FIXTURES
GOLDEN = sorted(DATA.glob("*.bin")) + (sorted(SHARED.glob("*.bin")) if SHARED.is_dir() else [])
IDS = [f"{p.parent.name}/{p.name}" for p in GOLDEN]


def canonical(source) -> str:
    out = io.StringIO()
    profile = tachyon_format.read(source)
    write_canonical(profile, tachyon_format.info(profile), out)
    return out.getvalue()


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_equals_cpython_decode(path):
    assert canonical(path) == reference_text(path)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_big_endian_copy_equals_cpython_decode(path):
    assert canonical(swap_byte_order(path.read_bytes())) == reference_text(path)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_in_small_chunks_equals_one_shot(path):
    whole = tachyon_format.read(path)
    chunked = tachyon_format.read(path, chunk_size=97)
    for name, column in whole.samples.columns().items():
        if name != "stack":
            np.testing.assert_array_equal(column, chunked.samples.columns()[name], err_msg=name)
    assert stack_tuples(chunked) == stack_tuples(whole)
    assert len(chunked.stacks) == len(whole.stacks)  # one node per distinct (parent, frame)
    np.testing.assert_array_equal(records(whole).offset, records(chunked).offset)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_read_with_and_without_helper_thread_are_identical(path, monkeypatch):
    """Small windows, so that discovery runs ahead in the helper thread many times."""
    monkeypatch.setattr(sample_codec, "WINDOW", 1024)
    alone = tachyon_format.read(path, threads=False)
    helped = tachyon_format.read(path, threads=True)
    for name, column in alone.samples.columns().items():
        np.testing.assert_array_equal(column, helped.samples.columns()[name], err_msg=name)
    np.testing.assert_array_equal(alone.stacks.frame, helped.stacks.frame)
    np.testing.assert_array_equal(alone.stacks.parent, helped.stacks.parent)
    np.testing.assert_array_equal(records(alone).offset, records(helped).offset)


def records(profile):
    """The record table of the Tachyon file a profile came from."""
    return profile.extras["tachyon"].records


def stack_tuples(profile) -> list[tuple[int, ...]]:
    return [tuple(profile.stack_frames(s)) for s in profile.samples.stack]


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_stack_tree_is_deduplicated(path):
    stacks = tachyon_format.read(path, chunk_size=113).stacks
    pairs = set(zip(stacks.parent.tolist(), stacks.frame.tolist(), strict=True))
    assert len(pairs) == len(stacks)
    assert ((stacks.parent >= -1) & (stacks.parent < len(stacks))).all()


@pytest.mark.parametrize("batch", [1, 7, 1000])
@pytest.mark.parametrize("path", GOLDEN[:6], ids=IDS[:6])
def test_iter_batches_concatenate_to_read(path, batch):
    whole = tachyon_format.read(path)
    batches = list(tachyon_format.iter_batches(path, samples_per_batch=batch))
    assert all(len(b.samples) <= batch for b in batches)
    assert sum(len(b.samples) for b in batches) == len(whole.samples)
    last = batches[-1] if batches else None
    for name, column in whole.samples.columns().items():
        parts = [b.samples.columns()[name] for b in batches] or [column[:0]]
        joined = np.concatenate(parts)
        if name == "stack":  # ids are stable, but the tree may be numbered differently
            assert [tuple(last.stack_frames(s)) for s in joined] == [
                tuple(whole.stack_frames(s)) for s in column
            ]
        else:
            np.testing.assert_array_equal(joined, column, err_msg=name)
    starts = np.concatenate(
        [records(b).first_sample + sum(len(p.samples) for p in batches[:i])
         for i, b in enumerate(batches)] or [np.zeros(0, np.int64)]
    )
    assert starts.tolist() == records(whole).first_sample.tolist()[: len(starts)]


def test_iter_batches_rejects_nonpositive_size():
    with pytest.raises(ValueError):
        next(tachyon_format.iter_batches(GOLDEN[0], samples_per_batch=0))


def test_profile_columns_are_consistent():
    profile = tachyon_format.read(DATA / "threads_wall_zstd.bin")
    facts = tachyon_format.info(profile)
    n = facts["sample_count"]
    assert len(profile.samples) == n
    assert profile.samples.timestamp_us.dtype == np.uint64
    assert profile.samples.stack.max() < len(profile.stacks)
    assert profile.samples.thread.max() < len(profile.threads) <= facts["thread_count"]
    depth = profile.stacks.depth()
    for stack in np.unique(profile.samples.stack[profile.samples.stack >= 0])[:50]:
        assert depth[stack] == len(profile.stack_frames(stack))
    assert profile.nbytes > 0


# -- CPython-written files from hypothesis workloads ---------------------------------------

_names = st.sampled_from(["a.py", "b.py", "<native>", "~", "ünï.py", ""])
_location = st.one_of(
    st.none(),
    st.tuples(
        st.integers(-1, 2**31 - 1), st.integers(-1, 2**31 - 1), st.integers(-1, 500),
        st.integers(-1, 500),
    ).map(list),
)
_frame = st.tuples(_names, _location, _names, st.one_of(st.none(), st.integers(0, 300))).map(list)
_pool = st.lists(_frame, min_size=1, max_size=6)


@st.composite
def workloads(draw):
    pool = draw(_pool)
    stacks = [[]] + [
        draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8)) for _ in range(3)
    ]
    deep = draw(st.booleans())
    if deep:
        stacks.append([pool[0]] * 300)
    threads = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2**64 - 1)),
                            min_size=1, max_size=4, unique=True))
    calls = []
    timestamp = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(0, 30))):
        timestamp = max(0, timestamp + draw(st.integers(-5000, 5000)))
        by_interp: dict[int, list] = {}
        for iid, tid in threads:
            if draw(st.booleans()):
                repeat = draw(st.integers(1, 3))
                for _ in range(repeat):
                    by_interp.setdefault(iid, []).append(
                        [tid, draw(st.integers(0, 255)), draw(st.sampled_from(stacks))]
                    )
        calls.append([timestamp, [[iid, t] for iid, t in by_interp.items()]])
    return calls, draw(st.sampled_from([0, 1])), draw(st.integers(0, 2**40))


@requires_reference
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_read_equals_cpython_on_cpython_written_files(tmp_path_factory, workload):
    calls, compression, start = workload
    path = tmp_path_factory.mktemp("hyp") / "w.bin"
    reference_write(calls, path, start_time_us=start, compression=compression)
    assert canonical(path) == reference_decode(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_read_in_a_forked_child_after_the_parent_used_the_helper_thread():
    """A forked child inherits the helper executor but not its thread: it must start its
    own instead of waiting forever on work nobody runs."""
    import time

    path = GOLDEN[0]
    expected = canonical(path)
    tachyon_format.read(path, threads=True)
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if it read the same profile
        try:
            profile = tachyon_format.read(path, threads=True)
            out = io.StringIO()
            write_canonical(profile, tachyon_format.info(profile), out)
            os._exit(0 if out.getvalue() == expected else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the child's read() hung")


def test_a_run_longer_than_a_float_of_nanoseconds_keeps_its_exact_duration(tmp_path):
    """Found by fuzzing: a statistics block's duration is any finite float, and 1e300 s
    overflowed ``duration * 1e9``. The model keeps the exact nanoseconds; pprof, whose
    duration is an int64, refuses it by name rather than cut it."""
    import struct
    from fractions import Fraction

    data = bytearray((DATA / "threads_wall_zstd.bin").read_bytes())
    at = len(data) - 32 - 56  # the statistics block: duration_sec first
    assert data[at + 40 : at + 48] == b"TACHSTAT"
    data[at : at + 8] = struct.pack("<d", 1e300)
    exact = round(Fraction(1e300) * 10**9)
    assert tachyon_format.info(bytes(data))["duration_sec"] == 1e300
    assert tachyon_format.read(bytes(data)).meta.duration_ns == exact
    assert tachyon_format.read(bytes(data), aggregate=True).meta.duration_ns == exact
    assert all(b.meta.duration_ns == exact for b in tachyon_format.iter_batches(bytes(data)))
    profile = tachyon_format.read(bytes(data))
    with pytest.raises(ValueError, match="duration_nanos"):
        tachyon_format.write(profile, tmp_path / "out.pb.gz")
    tachyon_format.write(profile, tmp_path / "out.collapsed")  # formats without a duration
