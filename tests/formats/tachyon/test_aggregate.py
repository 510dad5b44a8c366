"""read(aggregate=True) against CPython's replay counted per (thread, stack, status), and
against the aggregate of the full read."""

from __future__ import annotations

import json
import tracemalloc
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import Writer
from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.region import counting, decoder
from tachyon_format.model import SAMPLES_COUNT, Stacks
from tachyon_format.model.aggregate import aggregate_samples
from tests.formats.tachyon.region.helpers import (
    reference_or_error,
    region_file,
    regions,
    stored_rows,
    tachyon_file,
)
from tests.helpers.cpython_workloads import replay_with_cpython, workloads, write_with_cpython
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference

GOLDEN = sorted(DATA_DIR.glob("*.bin"))


def counted(rows: list) -> list:
    """Replayed rows ``[interpreter_id, thread_id, timestamp_us, status, frames]`` counted per
    distinct (interpreter, thread, status, frames), in order of first appearance."""
    counts: dict[tuple, int] = {}
    for iid, tid, _, status, frames in rows:
        key = (iid, tid, status, json.dumps(frames))
        counts[key] = counts.get(key, 0) + 1
    return list(counts.items())


def aggregated_rows(profile, frame_rows: list) -> list:
    """The rows of an aggregated profile in the form of :func:`counted`."""
    s = profile.samples
    iids, tids = profile.threads.interpreter_id.tolist(), profile.threads.thread_id.tolist()
    tuples = profile.stacks.tuples()
    return [((iids[t], tids[t], status, json.dumps([frame_rows[f] for f in tuples[stack]])),
             count)
            for t, status, stack, count in zip(s.thread.tolist(), s.status.tolist(),
                                               s.stack.tolist(), s.values[:, 0].tolist(),
                                               strict=True)]


def sorted_rows(profile) -> list:
    s = profile.samples
    return sorted(zip(s.thread.tolist(), s.stack.tolist(), s.status.tolist(),
                      s.values[:, 0].tolist(), strict=True))


def assert_same_tables(aggregated, full) -> None:
    """Everything but the samples is the full read's."""
    assert aggregated.strings.raws() == full.strings.raws()
    for part in ("frames", "threads", "mappings"):
        for name, column in getattr(full, part).columns().items():
            np.testing.assert_array_equal(getattr(getattr(aggregated, part), name), column)
    np.testing.assert_array_equal(aggregated.stacks.frame, full.stacks.frame)
    np.testing.assert_array_equal(aggregated.stacks.parent, full.stacks.parent)
    assert aggregated.meta == full.meta
    ours, theirs = aggregated.extras["tachyon"], full.extras["tachyon"]
    assert ours.info == theirs.info
    assert ours.records is None and theirs.records is not None  # (rows of samples not kept)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_counts_equal_cpython_replay_counted(path):
    """CPython's decode of the file (stored beside it), counted: the same rows, counts and
    order of first appearance."""
    profile = tachyon_format.read(path, aggregate=True)
    assert aggregated_rows(profile, region_file(path).frame_rows) == counted(stored_rows(path))
    assert profile.samples.timestamp_us is None
    assert profile.samples.values.dtype == np.int64
    assert profile.samples.values.shape == (len(profile.samples), 1)
    assert profile.meta.sample_types == (SAMPLES_COUNT,)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_aggregated_read_is_the_aggregate_of_the_full_read(path, monkeypatch):
    monkeypatch.setattr(counting, "COMPACT_ROWS", 3)  # group after (almost) every batch
    monkeypatch.setattr(decoder, "WINDOW", 256)
    full = tachyon_format.read(path)
    aggregated = tachyon_format.read(path, aggregate=True, chunk_size=61)
    assert sorted_rows(aggregated) == sorted_rows(aggregate_samples(full))
    assert_same_tables(aggregated, full)
    swapped = tachyon_format.read(swap_byte_order(path.read_bytes()), aggregate=True)
    assert sorted_rows(swapped) == sorted_rows(aggregated)


def test_keys_too_wide_to_pack_are_lexsorted(monkeypatch):
    """Keys wider than the packed int64 (huge stack or thread tables): lexsort, same rows."""
    path = DATA_DIR / "threads_wall_zstd.bin"
    expected = sorted_rows(tachyon_format.read(path, aggregate=True))
    monkeypatch.setattr(counting, "KEY_BITS", 0)
    monkeypatch.setattr(counting, "COMPACT_ROWS", 3)
    assert sorted_rows(tachyon_format.read(path, aggregate=True)) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(regions(), st.sampled_from([None, 64]))
def test_random_regions_aggregate_or_fail_alike(tmp_path_factory, region, window):
    """Valid and malformed regions: the aggregated read fails with the full read's error,
    or gives the aggregate of its samples."""
    path = tmp_path_factory.mktemp("agg") / "r.bin"
    decoded = reference_or_error(region, order="<", start_time_us=1000, thread_count=3,
                                 frame_count=41)
    count = 0 if isinstance(decoded, tuple) else len(decoded.batch)
    path.write_bytes(tachyon_file(region, sample_count=count, thread_count=3, num_frames=41))
    with mock.patch.object(decoder, "WINDOW", window or decoder.WINDOW), \
            mock.patch.object(counting, "COMPACT_ROWS", 2):
        try:
            full = tachyon_format.read(path)
        except FormatError as exc:
            with pytest.raises(FormatError) as caught:
                tachyon_format.read(path, aggregate=True)
            assert (caught.value.message, caught.value.offset) == (exc.message, exc.offset)
            return
        aggregated = tachyon_format.read(path, aggregate=True)
    assert sorted_rows(aggregated) == sorted_rows(aggregate_samples(full))
    assert_same_tables(aggregated, full)


@requires_reference
@pytest.mark.reference
@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # (CPython runs: no shrinking)
@given(st.lists(workloads(), min_size=4, max_size=8))
def test_files_written_by_cpython_count_as_cpython_replays_them(tmp_path_factory, jobs):
    tmp = tmp_path_factory.mktemp("cpython")
    paths = [tmp / f"cpython{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(paths, jobs, strict=True)))
    with mock.patch.object(counting, "COMPACT_ROWS", 2):
        for path, rows in zip(paths, replay_with_cpython(paths), strict=True):
            profile = tachyon_format.read(path, aggregate=True)
            assert aggregated_rows(profile, region_file(path).frame_rows) == counted(rows)


@pytest.mark.slow
def test_memory_grows_with_the_distinct_rows_not_the_samples(tmp_path):
    """Four million samples in long REPEAT runs: the aggregated read holds a
    chunk of the region and a window's temporaries, far less than the sample columns of
    the full read (17 bytes a sample)."""
    n, per_tick = 4_000_000, 4
    stacks, ids = Stacks.from_csr(np.arange(9) * 3, np.arange(24) % 5)
    path = tmp_path / "long.bin"
    frames = [(f"f{i}.py", f"fn{i}", i + 1, i + 1, 0, 1, None) for i in range(5)]
    with Writer(path, sample_interval_us=100, start_time_us=0, mode=1) as w:
        ticks = n // per_tick
        thread = np.tile(np.arange(per_tick, dtype=np.uint64), ticks)
        w.add_batch(thread_id=thread, interpreter_id=np.zeros(n, np.uint32),
                    timestamp_us=np.repeat(np.arange(ticks, dtype=np.uint64) * 100, per_tick),
                    status=np.where(np.arange(n) % 5000 == 0, 1, 0).astype(np.uint8),
                    stack=np.tile(ids[np.arange(per_tick) * 2 % 8], ticks),
                    stacks=stacks, frames=frames)
    tracemalloc.start()
    try:
        profile = tachyon_format.read(path, aggregate=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert int(profile.samples.values.sum()) == n
    assert peak < n * 17 / 2
