"""The vectorised sample-region decoder against the reference decoder (``region.scan``).

Array for array: samples, record table, thread table, prefix tree (the same node ids) and
counters; for malformed input, the same error message, offset and record. On random regions,
however they are fed (chunks, windows, sample blocks, index layouts, a helper thread), on the
golden files and on random profiles written by CPython 3.15 itself.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region import decoder, records
from tachyon_format.formats.tachyon.region.columns import GrowingColumns
from tachyon_format.formats.tachyon.region.commit import Committer
from tachyon_format.formats.tachyon.region.decoder import SampleDecoder, frames_of
from tachyon_format.formats.tachyon.region.discover import KnownThreads, discover
from tachyon_format.formats.tachyon.region.records import RegionFacts
from tachyon_format.formats.tachyon.region.stack_tree import StackTree
from tachyon_format.formats.tachyon.region.threads import ThreadTable
from tachyon_format.kernels import terminators
from tests.helpers.cpython_workloads import replay_with_cpython, workloads, write_with_cpython
from tests.helpers.models import U64
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import requires_reference

from .helpers import (
    ERROR_CASES,
    compare,
    prefix,
    reference_decode,
    region_file,
    regions,
    uleb,
)

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
SHARED = sorted(CPYTHON_FIXTURES.glob("*.bin")) if CPYTHON_FIXTURES.is_dir() else []

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
# the variations below repeat the comparison of the first test, so fewer examples suffice
FEWER = settings(SETTINGS, max_examples=30)


def frame_ok_for(frame_count: int) -> np.ndarray | None:
    """Frame 7 names a missing string, when there are fewer than 64 frames."""
    if frame_count >= 64:
        return None
    ok = np.ones(frame_count, bool)
    ok[7] = False
    return ok


def args(**kwargs) -> dict:
    base = {"order": "<", "start_time_us": 0, "thread_count": 1 << 30, "frame_count": 1 << 30}
    return {**base, **kwargs}


# ---------------------------------------------------------------------- random regions
@SETTINGS
@given(regions(), st.integers(0, U64), st.sampled_from([2, 3, 8, 1 << 30]),
       st.sampled_from([30, 41, 1 << 30]))
def test_random_regions_decode_as_the_reference(region, start, thread_count, frame_count):
    compare(region, **args(start_time_us=start, thread_count=thread_count,
                           frame_count=frame_count,
                           frame_string_ok=frame_ok_for(frame_count)))


@FEWER
@given(regions(), st.data())
def test_chunked_decode_equals_one_shot(region, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(region)), max_size=6)))
    compare(region, chunks=cuts, **args())


@FEWER
@given(regions(), st.integers(1, 4))
def test_small_sample_blocks_equal_one_block(region, block):
    """Per-sample work runs in blocks of records; tiny blocks must change nothing."""
    with mock.patch.object(records, "SAMPLE_BLOCK", block):
        compare(region, **args())


@FEWER
@given(regions(), st.integers(13, 80), st.integers(13, 80), st.booleans())
def test_small_windows_equal_one_window(region, first_window, window, threads):
    """Many windows: later ones filter candidates by the threads seen so far, and a new
    thread must only hand over to the sequential reader; with a helper thread, each
    window's discovery runs while the one before is committed."""
    with (mock.patch.object(decoder, "FIRST_WINDOW", first_window),
          mock.patch.object(decoder, "WINDOW", window)):
        compare(region, threads=threads, **args())


@FEWER
@given(regions(), st.sampled_from([0.0, 2.0]))
def test_both_terminator_index_layouts_decode_alike(region, dense_above):
    """0.0 forces the dense layout, 2.0 the sparse one, whatever the data."""
    with mock.patch.object(terminators.TerminatorIndex, "DENSE_ABOVE", dense_above):
        compare(region, **args())


@FEWER
@given(regions(order=">"))
def test_big_endian_prefixes(region):
    compare(region, **args(order=">"))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 6)),
                max_size=30), st.integers(0, 4), st.booleans())
def test_suffixes_without_new_frames(steps, cut, threads):
    """SUFFIX records that list no frame keep the *innermost* shared frames (unlike every
    other SUFFIX): many of them, among FULL and POP_PUSH records of two threads, in
    windows small enough to put them anywhere."""
    region = b""
    for kind, a, b in steps:
        tid = 1 + a % 2
        if kind == 0:
            region += prefix(tid, 0, 1) + b"\x01\x00" + uleb(b) + bytes(range(b))
        elif kind == 1:
            region += prefix(tid, 0, 3) + b"\x01\x00" + uleb(a) + b"\x01\x09"
        else:
            region += prefix(tid, 0, 2) + b"\x01\x00" + uleb(b % 4) + b"\x00"
    with mock.patch.object(decoder, "WINDOW", 20 + 17 * cut):
        compare(region, threads=threads, **args(frame_count=10))


def test_suffixes_keeping_innermost_frames_go_through_the_sequential_reader():
    """Discovery finds such a SUFFIX (it cannot know the depth); the commit stops before it
    (the tree builds stacks level by level from the outermost), and says so."""
    region = (prefix(1, 0, 1) + b"\x01\x00\x04\x00\x01\x02\x03"
              + prefix(1, 0, 2) + b"\x01\x00\x02\x00")  # SUFFIX shared 2, none new
    found = discover(np.frombuffer(region, np.uint8), 0, len(region), base=0, at_end=True,
                     known=KnownThreads([0], None), order="<")
    assert (found.batch.size, found.cut, found.reason) == (2, 37, "done")
    facts = RegionFacts.of(order="<", start_time_us=0, thread_count=1, frame_count=10)
    committer = Committer(facts, ThreadTable(1, 0), StackTree())
    samples, records = GrowingColumns.samples(), GrowingColumns.records()
    assert committer.commit(found.batch, samples, records) == 1
    assert (samples.size, records.size, committer.records) == (1, 1, 1)
    compare(region, **args(frame_count=10))


def test_suffixes_of_no_new_frame_sharing_the_whole_stack_are_vectorised():
    """A SUFFIX of no new frame sharing every frame keeps the stack: committed with its
    batch (a file of them once went record by record through the sequential reader)."""
    unit = prefix(1, 0, 2) + b"\x01\x00\x02\x00"
    region = prefix(1, 0, 1) + b"\x01\x00\x02\x04\x05" + unit * 3000
    facts = RegionFacts.of(order="<", start_time_us=0, thread_count=1, frame_count=10)
    committer = Committer(facts, ThreadTable(1, 0), StackTree())
    found = discover(np.frombuffer(region, np.uint8), 0, len(region), base=0, at_end=True,
                     known=KnownThreads([0], None), order="<")
    assert (found.batch.size, found.reason) == (3001, "done")
    assert committer.commit(found.batch, GrowingColumns.samples(),
                            GrowingColumns.records()) == 3001
    compare(region, **args(frame_count=10))


def test_many_suffixes_keeping_innermost_frames():
    unit = (prefix(1, 0, 1) + b"\x01\x00\x04\x00\x01\x02\x03"
            + prefix(1, 0, 2) + b"\x01\x00\x02\x00" + prefix(1, 0, 0) + b"\x01\x01\x00")
    out = compare(unit * 500, **args(frame_count=10))
    assert out.stack_frame.size == 6  # [0..3] and [0, 1] apart


# ---------------------------------------------------------------------- worked cases
def test_record_table_and_stats():
    region = (prefix(1, 0, 1) + b"\x05\x22\x02\x03\x04"          # FULL [3, 4]
              + prefix(1, 0, 0) + b"\x03\x01\x22\x01\x23\x01\x22"  # REPEAT x3
              + prefix(1, 0, 0) + b"\x00"                          # REPEAT x0
              + prefix(1, 0, 2) + b"\x01\x22\x02\x01\x09"          # SUFFIX [9, 3, 4]
              + prefix(1, 0, 3) + b"\x01\xa2\x05\x00")             # POP_PUSH -> []
    kw = args(start_time_us=10, thread_count=1, frame_count=10)
    compare(region, **kw)
    dec = SampleDecoder(**kw)
    batch = dec.decode(region, final=True)
    assert batch.record_encoding.tolist() == [1, 0, 0, 2, 3]
    assert batch.record_first_sample.tolist() == [0, 1, 4, 4, 5]
    assert batch.record_offset.tolist() == [0, 18, 38, 52, 70]
    assert batch.timestamp_us.tolist() == [15, 16, 17, 18, 19, 20]
    assert batch.status.tolist() == [0x22, 0x22, 0x23, 0x22, 0x22, 0xA2]
    stacks = [tuple(frames_of(dec.stack_frame, dec.stack_parent, s)) for s in batch.stack]
    assert stacks == [(3, 4)] * 4 + [(9, 3, 4), ()]
    assert batch.stack[-1] == -1
    assert dec.stats == {"repeat_records": 2, "repeat_samples": 3, "full_records": 1,
                         "suffix_records": 1, "pop_push_records": 1, "total_records": 5,
                         "total_samples": 6, "stack_reconstructions": 3}
    assert dec.total_samples == 6
    assert len(dec.stack_frame) == 3  # a shared prefix is one node


@pytest.mark.parametrize(("region", "message"), ERROR_CASES)
def test_error_messages(region, message):
    kw = args(thread_count=4, frame_count=10)
    with pytest.raises(FormatError) as info:
        SampleDecoder(**kw).decode(region, final=True)
    assert info.value.message == message
    assert info.value.region is True
    assert compare(region, **kw)[1] == message


def test_thread_count_error_and_status_above_0x7f():
    region = prefix(1, 0, 0) + b"\x02\x01\xff\x01\x80" + prefix(2, 0, 0) + b"\x00"
    kw = args(thread_count=1, frame_count=1)
    with pytest.raises(FormatError) as info:
        SampleDecoder(**kw).decode(region, final=True)
    assert (info.value.offset, info.value.record) == (18, 1)
    assert compare(region, **kw)[2:] == (18, 1)
    batch = SampleDecoder(**kw).decode(region[:18], final=True)
    assert batch.status.tolist() == [0xFF, 0x80]


def test_depth_256_ok_and_pop_clamps():
    frames = b"".join(uleb(i % 5) for i in range(256))
    region = (prefix(1, 0, 1) + b"\x00\x00" + uleb(256) + frames
              + prefix(1, 0, 3) + b"\x00\x00" + uleb(1000) + b"\x01\x02")
    out = compare(region, **args(frame_count=10))
    last = out.batch.stack[-1]
    assert frames_of(out.stack_frame, out.stack_parent, last).tolist() == [2]


def test_decoder_refuses_more_input_once_finished():
    dec = SampleDecoder(**args())
    dec.decode(b"", final=True)
    with pytest.raises(ValueError):
        dec.decode(b"", final=True)


# ---------------------------------------------------------------------- real files
VARIATIONS = [  # (chunk, sample block, terminator layout, window, helper thread)
    (None, None, None, None, False), (997, None, None, None, None),
    (None, 7, 0.0, None, None), (None, None, None, 4096, True)]


@pytest.mark.parametrize("path", GOLDEN + SHARED,
                         ids=[f"{p.parent.name}/{p.stem}" for p in GOLDEN + SHARED])
@pytest.mark.parametrize(("chunk", "block", "dense_above", "window", "threads"), VARIATIONS)
def test_golden_files_decode_as_the_reference(path, chunk, block, dense_above, window,
                                              threads):
    region, kwargs, sample_count, _ = region_file(path)
    cuts = None if chunk is None else list(range(chunk, len(region), chunk))
    layout = terminators.TerminatorIndex.DENSE_ABOVE if dense_above is None else dense_above
    with (mock.patch.object(records, "SAMPLE_BLOCK", block or records.SAMPLE_BLOCK),
          mock.patch.object(decoder, "WINDOW", window or decoder.WINDOW),
          mock.patch.object(terminators.TerminatorIndex, "DENSE_ABOVE", layout)):
        out = compare(region, chunks=cuts, threads=threads, **kwargs)
    assert len(out.batch) == sample_count


@requires_reference
@pytest.mark.reference
@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # (CPython runs: no shrinking)
@given(st.lists(workloads(), min_size=4, max_size=8), st.sampled_from([None, 64, 4096]))
def test_files_written_by_cpython_decode_as_the_reference(tmp_path_factory, jobs, window):
    """Random profiles (threads, interpreters, deep and empty stacks, long REPEAT runs, zstd)
    written by CPython 3.15's own BinaryWriter: the two decoders agree, array for array,
    and the reference decodes what CPython replays."""
    tmp = tmp_path_factory.mktemp("cpython")
    paths = [tmp / f"cpython{i}.bin" for i in range(len(jobs))]
    write_with_cpython(list(zip(paths, jobs, strict=True)))
    with mock.patch.object(decoder, "WINDOW", window or decoder.WINDOW):
        for path in paths:
            f = region_file(path)
            assert len(compare(f.region, **f.kwargs).batch) == f.sample_count
    for path, rows in zip(paths, replay_with_cpython(paths), strict=True):
        assert reference_decode(path) == rows


@given(st.lists(st.tuples(st.integers(0, 10), st.integers(1, 40)), min_size=1, max_size=6),
       st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_runs_of_empty_repeats_written_alike_in_any_form(runs, tid):
    """Runs of REPEATs of count 0 whose count is written in 1 to 10 bytes (``80 .. 80 00``)
    and, for a form of 11 bytes, malformed, then a sample: each run found at once, as the
    reference reads them (or fails)."""
    region = b""
    for width, n in runs:
        count = b"\x80" * width + b"\x00" if width < 10 else b"\x80" * 10 + b"\x00"
        region += (prefix(tid, 0, 0) + count) * n
    region += prefix(tid, 0, 1) + b"\x01\x00\x01\x00"
    compare(region, **args(frame_count=2, thread_count=3))
