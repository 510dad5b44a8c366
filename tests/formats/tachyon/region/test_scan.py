"""The reference decoder (``region.scan``) against CPython 3.15's own reader.

Against the decodes CPython gave of the golden files, against CPython's error messages, and
(with the reference interpreter) against CPython replaying random regions, valid or not.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region.decoder import frames_of
from tachyon_format.formats.tachyon.region.records import RegionFacts
from tachyon_format.formats.tachyon.region.scan import Incomplete, decode_region, scan_record
from tachyon_format.formats.tachyon.region.threads import ThreadTable
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import reference_stats, requires_reference, run_reference

from .helpers import (
    ERROR_CASES,
    prefix,
    reference_decode,
    region_file,
    regions,
    stored_rows,
    tachyon_file,
    uleb,
)

GOLDEN = sorted(DATA_DIR.glob("*.bin")) + (sorted(CPYTHON_FIXTURES.glob("*.bin"))
                                           if CPYTHON_FIXTURES.is_dir() else [])
IDS = [f"{p.parent.name}/{p.stem}" for p in GOLDEN]


# ---------------------------------------------------------------------- golden files
@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_golden_files_decode_as_cpython_decoded_them(path):
    assert reference_decode(path) == stored_rows(path)


@requires_reference
@pytest.mark.reference
@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_golden_files_count_as_cpython_counts(path):
    f = region_file(path)
    stats = decode_region(f.region, **f.kwargs).stats
    assert {k: stats[k] for k in reference_stats(path)} == reference_stats(path)


# ---------------------------------------------------------------------- one record
@pytest.mark.parametrize(("region", "message"), ERROR_CASES)
def test_error_messages(region, message):
    with pytest.raises(FormatError) as info:
        decode_region(region, order="<", start_time_us=0, thread_count=4, frame_count=10)
    assert info.value.message == message
    assert info.value.region is True


def test_errors_name_the_record_and_its_offset():
    region = (prefix(1, 0, 0) + b"\x02\x01\xff\x01\x80"  # a REPEAT, statuses >= 0x80
              + prefix(2, 0, 0) + b"\x00")  # one thread too many
    with pytest.raises(FormatError) as info:
        decode_region(region, order="<", start_time_us=0, thread_count=1, frame_count=1)
    assert info.value.message == ("Invalid thread count: sample data contains more unique "
                                  "threads than declared in header (declared 1, found at "
                                  "least 2)")
    assert (info.value.offset, info.value.record) == (18, 1)
    ok = decode_region(region[:18], order="<", start_time_us=0, thread_count=1, frame_count=1)
    assert ok.batch.status.tolist() == [0xFF, 0x80]


def test_a_record_cut_short_is_incomplete_until_the_data_is_final():
    record = prefix(7, 0, 1) + uleb(300) + b"\x22\x02\x05" + uleb(200)
    for cut in range(len(record)):
        threads = ThreadTable(4, 0)
        with pytest.raises(Incomplete):
            scan_record(record, 0, cut, final=False, facts=_facts(), threads=threads,
                        depth_of=lambda row: 0)
        with pytest.raises(FormatError):
            scan_record(record, 0, cut, final=True, facts=_facts(), threads=threads,
                        depth_of=lambda row: 0)
    rec = scan_record(record, 0, len(record), final=False, facts=_facts(),
                      threads=ThreadTable(4, 0), depth_of=lambda row: 0)
    assert (rec.end, rec.deltas, rec.statuses, rec.frames, rec.depth) == (
        len(record), [300], [0x22], [5, 200], 2)


def test_scan_record_asks_the_depth_and_names_the_row():
    threads = ThreadTable(4, 0)
    threads.row(0, 1)  # an earlier thread: the record's is row 1
    record = prefix(2, 0, 3) + b"\x00\x00\x05\x01\x03"  # POP_PUSH: pop 5, push [3]
    asked = []
    rec = scan_record(record, 0, len(record), final=True, facts=_facts(), threads=threads,
                      depth_of=lambda row: asked.append(row) or 4, base=100, index=9)
    assert asked == [1] and (rec.row, rec.arg, rec.depth, rec.offset) == (1, 5, 1, 100)
    with pytest.raises(FormatError) as info:  # SUFFIX: shared 5 > depth 4
        scan_record(prefix(2, 0, 2) + b"\x00\x00\x05\x00", 0, 17, final=True, facts=_facts(),
                    threads=threads, depth_of=lambda row: 4, base=100, index=9)
    assert (info.value.offset, info.value.record) == (100, 9)


def _facts():
    return RegionFacts.of(order="<", start_time_us=0, thread_count=4, frame_count=300)


@pytest.mark.parametrize(("record", "depth", "reported", "row", "arg", "new_depth"), [
    (prefix(9, 0, 1) + b"\x00\x00\x01\x05", 0, [(
        "Invalid thread count: sample data contains more unique threads than declared in "
        "header (declared 1, found at least 2)", {"field": "header -> thread_count"})],
     1, 0, 1),
    (prefix(1, 0, 2) + b"\x00\x00\x05\x01\x03", 2, [
        ("Shared count 5 exceeds current stack depth 2", {})], 0, 2, 3),
    (prefix(1, 0, 3) + b"\x00\x00\x00\x02\x03\x04", 255, [
        ("Final stack depth 257 exceeds capacity 256", {})], 0, 0, 257),
    (prefix(1, 0, 1) + b"\x00\x00\x02\x07\x63", 0, [  # (frames innermost first)
        ("Invalid string index in frame", {"field": "frame_table -> [7]"}),
        ("Invalid frame index: 99", {"field": "frame_table", "expected": "below 10",
                                     "found": "99"})], 0, 0, 2),
    (prefix(1, 0, 2) + b"\x00\x00\x05\x01\x03", None, [], 0, 5, 6),  # the stack unknown
    (prefix(1, 0, 3) + b"\x00\x00\x00" + uleb(256) + b"\x00" * 256, None, [], 0, 0, 256),
], ids=["thread", "shared", "final depth", "frames", "unknown shared", "unknown depth"])
def test_with_a_report_the_checks_of_a_whole_record_are_reported(record, depth, reported,
                                                                  row, arg, new_depth):
    """validate's mode: each check whose record still parses is reported (the walk goes on),
    not raised; a stack unknown to validate (records skipped) waits for its next FULL."""
    ok = [True] * 10
    ok[7] = False
    facts = RegionFacts.of(order="<", start_time_us=0, thread_count=1, frame_count=10,
                           frame_string_ok=ok)
    got = []
    rec = scan_record(record, 0, len(record), final=True, facts=facts, threads=one_thread(),
                      depth_of=lambda row: depth,
                      report=lambda message, **where: got.append((message, where)))
    assert got == reported
    assert (rec.end, rec.row, rec.arg, rec.depth) == (len(record), row, arg, new_depth)
    if depth is not None:  # read's mode: the first one raised
        with pytest.raises(FormatError) as info:
            scan_record(record, 0, len(record), final=True, facts=facts,
                        threads=one_thread(), depth_of=lambda row: depth)
        assert info.value.message == reported[0][0]


def one_thread() -> ThreadTable:
    """A table of one thread (interpreter 0, thread 1), full."""
    threads = ThreadTable(1, 0)
    threads.row(0, 1)
    return threads


@pytest.mark.parametrize(("record", "message"), [
    (prefix(1, 0, 1) + b"\x00\x00" + uleb(257), "Stack depth 257 exceeds capacity 256"),
    (prefix(1, 0, 2) + b"\x00\x00\x05" + uleb(300), "Shared count 5 exceeds current stack "
                                                     "depth 2"),
    (prefix(1, 0, 3) + b"\x00\x00\x00" + uleb(300), "Final stack depth 302 exceeds capacity "
                                                     "256"),
    (prefix(1, 0, 7), "Unknown stack encoding: 7"),
], ids=["full", "suffix", "pop_push", "encoding"])
def test_with_a_report_counts_beyond_256_and_broken_syntax_still_raise(record, message):
    """CPython fails on counts beyond 256 before it reads a frame: the record's end is not
    known, so validate's walk must resynchronise, as after a broken syntax."""
    threads = ThreadTable(1, 0)
    with pytest.raises(FormatError) as info:
        scan_record(record, 0, len(record), final=True, facts=_facts(), threads=threads,
                    depth_of=lambda row: 2, report=lambda message, **where: None)
    assert info.value.message == message


def test_suffix_without_new_frames_keeps_the_innermost_shared_frames():
    """docs/format/records.md#suffix: FULL [f0, f1, f2, f3], then SUFFIX with shared 2 and
    no new frame replays as [f0, f1] (not [f2, f3]); the thread's next records build on
    that stack."""
    region = (prefix(1, 0, 1) + b"\x01\x00\x04\x00\x01\x02\x03"
              + prefix(1, 0, 2) + b"\x01\x00\x02\x00"  # SUFFIX shared 2, new 0
              + prefix(1, 0, 0) + b"\x01\x05\x00"  # REPEAT
              + prefix(1, 0, 3) + b"\x01\x00\x01\x01\x09"  # POP_PUSH pop 1, push [9]
              + prefix(1, 0, 2) + b"\x01\x00\x02\x00"  # SUFFIX: shared 2 = the depth
              + prefix(1, 0, 2) + b"\x01\x00\x00\x00")  # SUFFIX: shared 0
    out = decode_region(region, order="<", start_time_us=0, thread_count=1, frame_count=10)
    stacks = [frames_of(out.stack_frame, out.stack_parent, s).tolist()
              for s in out.batch.stack]
    assert stacks == [[0, 1, 2, 3], [0, 1], [0, 1], [9, 1], [9, 1], []]


# ---------------------------------------------------------------------- CPython itself
REPLAY = """
import json, sys
from _remote_debugging import BinaryReader

class Rows:
    def __init__(self):
        self.rows = []
    def collect(self, stack_frames, timestamps_us):
        for interp in stack_frames:
            for thread in interp.threads:
                frames = [f.location[0] - 1 for f in thread.frame_info]  # lineno - 1: index
                for ts in timestamps_us:
                    self.rows.append([interp.interpreter_id, thread.thread_id, ts,
                                      thread.status, frames])
out = []
for path in json.load(sys.stdin):
    rows = Rows()
    try:
        with BinaryReader(path) as reader:
            reader.replay(rows)
        out.append(rows.rows)
    except Exception as exc:
        out.append(type(exc).__name__ + ": " + str(exc))
print(json.dumps(out))
"""


def replay_rows(paths) -> list:
    """Per file: CPython's replayed ``[interpreter_id, thread_id, timestamp_us, status,
    frame indices]`` rows, or ``"ExceptionName: message"``."""
    return json.loads(run_reference(REPLAY, input=json.dumps([str(p) for p in paths])).stdout)


def replayed_by_reference(path) -> list | str:
    """The same from the reference decoder."""
    f = region_file(path)
    try:
        out = decode_region(f.region, **f.kwargs)
    except FormatError as exc:
        return "ValueError: " + exc.message
    if len(out.batch) != f.sample_count:
        return (f"ValueError: Sample count mismatch: header declares {f.sample_count} "
                f"samples but replay decoded {len(out.batch)}")
    iids, tids = (ids.tolist() for ids in out.threads)
    b = out.batch
    return [[iids[t], tids[t], ts, status,
             frames_of(out.stack_frame, out.stack_parent, s).tolist()]
            for t, ts, status, s in zip(b.thread.tolist(), b.timestamp_us.tolist(),
                                        b.status.tolist(), b.stack.tolist(), strict=True)]


def write_case(path, region: bytes, thread_count: int, bad_strings=()) -> None:
    """*region* in a file whose header counts its samples (as far as the reference decodes
    it), with 41 frames (indices 0..40); those in *bad_strings* name a missing string."""
    try:
        count = len(decode_region(region, order="<", start_time_us=1000,
                                  thread_count=thread_count, frame_count=41).batch)
    except FormatError:
        count = 0
    data = bytearray(tachyon_file(region, sample_count=count, thread_count=thread_count,
                                  num_frames=41))
    frame_table = int.from_bytes(data[48:56], "little")
    for f in bad_strings:  # entries are 7 bytes: filename_idx first
        data[frame_table + 7 * f] = 5
    path.write_bytes(bytes(data))


@requires_reference
@pytest.mark.reference
@pytest.mark.slow
def test_error_messages_match_cpython(tmp_path):
    cases = [region for region, _ in ERROR_CASES] + [
        prefix(1, 0, 1) + b"\x00\x00\x01\x09",
        prefix(1, 0, 1) + b"\xff" * 9 + b"\x7f\x00\x00" + prefix(1, 0, 0) + b"\x00",
        prefix(1, 0, 0) + b"\x00" + prefix(2, 0, 0) + b"\x00" + prefix(3, 0, 0) + b"\x00",
    ]
    paths = []
    for i, region in enumerate(cases):
        paths.append(tmp_path / f"case{i}.bin")
        write_case(paths[-1], region, thread_count=2, bad_strings=[9])
    assert replay_rows(paths) == [replayed_by_reference(p) for p in paths]
    assert any(isinstance(r, str) and "string index" in r for r in replay_rows(paths))


@requires_reference
@pytest.mark.reference
@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # (CPython runs: no shrinking)
@given(st.lists(st.tuples(regions(max_records=12), st.sampled_from([1, 2, 3, 8, 8, 8]),
                          st.just(set()) | st.sets(st.integers(0, 40), max_size=2)),
                min_size=10, max_size=20))
def test_random_regions_replay_as_in_cpython(tmp_path_factory, cases):
    """Random regions, valid or damaged, in files CPython replays: the same samples, or the
    same error."""
    tmp = tmp_path_factory.mktemp("regions")
    paths = []
    for i, (region, thread_count, bad_strings) in enumerate(cases):
        paths.append(tmp / f"case{i}.bin")
        write_case(paths[-1], region, thread_count, bad_strings)
    for path, got in zip(paths, replay_rows(paths), strict=True):
        assert replayed_by_reference(path) == got, path.read_bytes().hex()


@requires_reference
@pytest.mark.reference
def test_suffix_without_new_frames_as_in_cpython(tmp_path):
    cases = []
    for shared in range(6):
        for new in range(3):
            region = (prefix(1, 0, 1) + b"\x01\x00\x04\x00\x01\x02\x03"
                      + prefix(1, 0, 2) + b"\x01\x00" + uleb(shared) + uleb(new)
                      + bytes(range(10, 10 + new)) + prefix(1, 0, 3) + b"\x01\x00\x01\x00")
            cases.append(tmp_path / f"suffix{shared}{new}.bin")
            write_case(cases[-1], region, thread_count=1)
    rows = replay_rows(cases)
    assert rows == [replayed_by_reference(p) for p in cases]
    assert rows[3][1][4] == [0]  # shared 1, none new: the innermost frame
    assert sum(isinstance(r, list) for r in rows) == 15  # (shared 5 > depth 4: an error)
