"""Stage 2 of the vectorised decoder, ``region.commit``, on its own.

Its contract: committing batches of records (however they are cut, a long REPEAT's entries
continued across batches, deltas in the narrow form discovery hands over) leaves the thread
table, the stack tree, the sample and record columns and the counters exactly as the
reference decoder (``scan.decode_region``) leaves them after the same records; where a
record fails a check that needs the threads' state, it raises the reference's FormatError
(message, region offset, record number), the records before it committed first. The
batches here are built from the sequential reader's records, not by discovery.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region.columns import GrowingColumns, SampleBatch
from tachyon_format.formats.tachyon.region.commit import Committer
from tachyon_format.formats.tachyon.region.counting import SampleCounts
from tachyon_format.formats.tachyon.region.decoder import frames_of
from tachyon_format.formats.tachyon.region.records import (
    FULL,
    POP_PUSH,
    REPEAT,
    SUFFIX,
    RegionFacts,
)
from tachyon_format.formats.tachyon.region.scan import DecodedRegion, decode_region, stack_after
from tachyon_format.formats.tachyon.region.stack_tree import StackTree
from tachyon_format.formats.tachyon.region.threads import ThreadTable
from tests.helpers.models import U64

from .helpers import assert_same, prefix, regions, uleb
from .oracles import (
    ENCODED,
    SETTINGS,
    batch_of,
    encode,
    is_state_error,
    read_one,
    record_row,
    scan_records,
    thread_samples,
)


def facts_of(**kwargs) -> dict:
    base = {"order": "<", "start_time_us": 0, "thread_count": 1 << 30, "frame_count": 1 << 30}
    return {**base, **kwargs}


class Run:
    """A committer and the columns it writes into."""

    def __init__(self, aggregate: bool = False, **kwargs) -> None:
        facts = RegionFacts.of(**facts_of(**kwargs))
        self.committer = Committer(facts, ThreadTable(facts.thread_count, facts.start_time_us),
                                   StackTree())
        self.samples = SampleCounts() if aggregate else GrowingColumns.samples()
        self.records = GrowingColumns.records()

    def commit(self, rows: list[tuple], *, continued: bool = False, narrow: bool = False):
        self.committer.commit(batch_of(rows, narrow_deltas=narrow), self.samples, self.records,
                              continued=continued)

    def result(self) -> DecodedRegion:
        s, r = self.samples.finish(), self.records.finish()
        batch = SampleBatch(**s, record_offset=r["offset"], record_encoding=r["encoding"],
                            record_first_sample=r["first_sample"])
        c = self.committer
        return DecodedRegion(batch, c.threads.ids(), c.tree.frame, c.tree.parent,
                             c.stats.as_stats())


def region_of(specs: list[tuple]) -> tuple[bytes, list[tuple]]:
    """Records given as ``(thread, interpreter, encoding, arg, deltas, statuses, frames)``:
    their bytes, and their rows (oracles.record_row)."""
    region, rows = b"", []
    for tid, iid, enc, arg, deltas, statuses, frames in specs:
        samples = b"".join(uleb(d) + bytes([s]) for d, s in zip(deltas, statuses, strict=True))
        if enc == REPEAT:
            body = uleb(len(deltas)) + samples
        else:
            counts = [len(frames)] if enc == FULL else [arg, len(frames)]
            body = samples + b"".join(map(uleb, counts)) + b"".join(map(uleb, frames))
        rows.append((len(region), enc, tid, iid, arg, list(deltas), list(statuses),
                     list(frames)))
        region += prefix(tid, iid, enc) + body
    return region, rows


def committable(recs) -> list[tuple]:
    """The sequential reader's records as commit takes them: a SUFFIX that keeps its
    innermost frames lists its whole new stack, as the decoder hands it over."""
    stacks: dict[tuple[int, int], list[int]] = {}
    rows = []
    for rec in recs:
        key = (rec.interpreter_id, rec.thread_id)
        old = stacks.get(key, [])
        new = stack_after(old, rec)
        row = record_row(rec)
        if rec.encoding == SUFFIX and not rec.frames and 0 < rec.arg < len(old):
            row = (*row[:4], 0, row[5], row[6], list(new))
        stacks[key] = new
        rows.append(row)
    return rows


def pieces(rows: list[tuple], cuts: list[int], splits: list[int]):
    """*rows* in batches cut before each of *cuts*; a REPEAT that ends a batch is split after
    its ``splits[k] % entries`` first entries (none too: the decoder commits a long REPEAT's
    record before its entries), the rest continuing it at the start of the next batch.
    Yields ``(rows, continued)``."""
    bounds = sorted({c for c in cuts if 0 < c < len(rows)})
    start, carry = 0, None
    for k, cut in enumerate([*bounds, len(rows)]):
        part, continued = list(rows[start:cut]), carry is not None
        if carry is not None:
            part.insert(0, carry)
            carry = None
        if cut < len(rows) and part[-1][1] == REPEAT and part[-1][5] and splits:
            row = part[-1]
            j = splits[k % len(splits)] % len(row[5])
            part[-1] = (*row[:5], row[5][:j], row[6][:j], [])
            carry = (*row[:5], row[5][j:], row[6][j:], [])
        yield part, continued
        start = cut


def commit_all(run: Run, rows: list[tuple], cuts: list[int], splits: list[int],
               narrow: bool) -> None:
    for part, continued in pieces(rows, cuts, splits):
        run.commit(part, continued=continued, narrow=narrow)


# ---------------------------------------------------------------------- worked batches
SPECS = [  # two threads, two interpreters, every kind
    (1, 0, FULL, 0, [5], [0x21], [3, 4]),
    (7, 1, FULL, 0, [U64], [0x22], [9]),  # the clock wraps
    (1, 0, REPEAT, 0, [1, 300, 0], [0x21, 0x23, 0x21], []),
    (1, 0, SUFFIX, 2, [2], [0], [5]),  # [5, 3, 4]
    (7, 1, SUFFIX, 1, [2], [0], [8, 6]),  # [8, 6, 9]
    (1, 0, POP_PUSH, 2, [1], [0], [6]),  # [6, 4]
    (7, 1, POP_PUSH, 9, [1], [0x7F], []),  # pop past the depth: []
    (1, 0, SUFFIX, 0, [1], [0], []),  # shared 0, none new: []
    (7, 1, REPEAT, 0, [], [], []),  # no sample
    (7, 1, SUFFIX, 0, [1], [0], [2, 3]),  # [2, 3]
    (1, 0, REPEAT, 0, [4], [1], []),
]


@pytest.mark.parametrize("narrow", [False, True])
def test_worked_batch(narrow):
    region, rows = region_of(SPECS)
    run = Run(start_time_us=10, frame_count=10)
    run.commit(rows, narrow=narrow)
    got = run.result()
    assert_same(got, decode_region(region, **facts_of(start_time_us=10, frame_count=10)))
    b = got.batch
    stacks = [frames_of(got.stack_frame, got.stack_parent, s).tolist() for s in b.stack]
    assert stacks == [[3, 4], [9], [3, 4], [3, 4], [3, 4], [5, 3, 4], [8, 6, 9], [6, 4], [],
                      [], [2, 3], []]
    assert b.timestamp_us.tolist() == [15, 9, 16, 316, 316, 318, 11, 319, 12, 320, 13, 324]
    assert b.thread.tolist() == [0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0]
    assert b.record_first_sample.tolist() == [0, 1, 2, 5, 6, 7, 8, 9, 10, 10, 11]
    assert [a.tolist() for a in got.threads] == [[0, 1], [1, 7]]
    threads = run.committer.threads
    assert threads.depth.tolist() == [0, 2]
    assert threads.clock.tolist() == [324, 13]
    assert got.stats["total_records"] == 11 and run.committer.records == 11


@pytest.mark.parametrize("k", range(1, len(SPECS)))
def test_a_batch_cut_anywhere_commits_alike(k):
    region, rows = region_of(SPECS)
    run = Run(frame_count=10)
    run.commit(rows[:k])
    run.commit(rows[k:], narrow=True)
    assert_same(run.result(), decode_region(region, **facts_of(frame_count=10)))


def test_a_long_repeat_continued_over_batches():
    """A REPEAT's record first (no entry yet), its entries in pieces (``continued``), as the
    decoder commits a REPEAT longer than a chunk: one record, its samples in order."""
    deltas = list(range(1, 20))
    region, rows = region_of([(1, 0, FULL, 0, [1], [0], [2]),
                              (1, 0, REPEAT, 0, deltas, [3] * 19, []),
                              (2, 0, FULL, 0, [1], [0], [1])])
    run = Run(frame_count=10)
    head = rows[1]
    run.commit([rows[0], (*head[:5], [], [], [])])
    for a, b in [(0, 5), (5, 6), (6, 19)]:
        run.commit([(*head[:5], deltas[a:b], [3] * (b - a), [])], continued=True)
    assert run.committer.records == 2  # (the record number of the next one)
    run.commit(rows[2:])
    assert_same(run.result(), decode_region(region, **facts_of(frame_count=10)))


def test_empty_repeats():
    """REPEATs of no sample (commit_empty): a record row each, new threads added, nothing
    else; one thread too many is the reference's error."""
    region, rows = region_of([(1, 0, REPEAT, 0, [], [], [])] * 2
                             + [(2, 0, REPEAT, 0, [], [], []), (3, 0, REPEAT, 0, [], [], [])])
    run = Run(thread_count=2)
    run.committer.commit_empty(batch_of(rows[:2]), run.samples, run.records)
    with pytest.raises(FormatError) as info:
        run.committer.commit_empty(batch_of(rows[2:]), run.samples, run.records)
    expected = reference_error(region, thread_count=2)
    assert (info.value.message, info.value.offset, info.value.record,
            info.value.path) == expected
    assert info.value.region
    assert_same(run.result(), decode_region(region[:rows[3][0]], **facts_of(thread_count=2)))


# ---------------------------------------------------------------------- errors
def reference_error(region: bytes, **kwargs) -> tuple:
    with pytest.raises(FormatError) as info:
        decode_region(region, **facts_of(**kwargs))
    return info.value.message, info.value.offset, info.value.record, info.value.path


def reference_before(region: bytes, offset: int, kwargs: dict,
                     bad_thread: tuple[int, int] | None) -> DecodedRegion:
    """The reference's decode of the records before the bad one at *offset*, whose thread
    *bad_thread* (interpreter, thread) CPython adds before its other checks fail (None: the
    thread is what fails)."""
    ref = decode_region(region[:offset], **facts_of(**kwargs))
    iids, tids = ref.threads
    if bad_thread is not None and bad_thread not in zip(iids.tolist(), tids.tolist(),
                                                        strict=True):
        ref = ref._replace(threads=(np.append(iids, np.uint32(bad_thread[0])),
                                    np.append(tids, np.uint64(bad_thread[1]))))
    return ref


def thread_of(row: tuple, message: str) -> tuple[int, int] | None:
    return None if message.startswith("Invalid thread count") else (row[3], row[2])


BAD_STRING = {"frame_count": 10, "frame_string_ok": np.arange(10) != 7}
ERRORS = [  # (records, facts, message): the last record fails
    ([(1, 0, FULL, 0, [1], [0], [1, 2]), (1, 0, SUFFIX, 3, [1], [0], [5])], {},
     "Shared count 3 exceeds current stack depth 2"),
    ([(1, 0, FULL, 0, [1], [0], [1] * 200), (1, 0, SUFFIX, 200, [1], [0], [2] * 57)], {},
     "Final stack depth 257 exceeds capacity 256"),
    ([(1, 0, FULL, 0, [1], [0], [1] * 200), (1, 0, POP_PUSH, 0, [1], [0], [2] * 57)], {},
     "Final stack depth 257 exceeds capacity 256"),
    ([(1, 0, FULL, 0, [1], [0], [1] * 200), (2, 0, FULL, 0, [1], [0], [3]),
      (1, 0, POP_PUSH, 1, [1], [0], [2] * 58)], {},  # (thread 1's depth, not thread 2's)
     "Final stack depth 257 exceeds capacity 256"),
    ([(1, 0, FULL, 0, [1], [0], [3, 9]), (1, 0, FULL, 0, [1], [0], [3, 10])], {"frame_count": 10},
     "Invalid frame index: 10"),
    ([(1, 0, FULL, 0, [1], [0], [3]), (2, 0, SUFFIX, 0, [1], [0], [7])], BAD_STRING,
     "Invalid string index in frame"),
    ([(1, 0, FULL, 0, [1], [0], [3]), (2, 0, FULL, 0, [1], [0], [3]),
      (1, 1, REPEAT, 0, [1], [0], [])], {"thread_count": 2},
     "Invalid thread count: sample data contains more unique threads than declared in header "
     "(declared 2, found at least 3)"),
    # one record failing two checks: the lower-numbered check wins (shared before depth and
    # frames, depth before frames)
    ([(1, 0, FULL, 0, [1], [0], [1]), (1, 0, SUFFIX, 2, [1], [0], [11] * 256)],
     {"frame_count": 10}, "Shared count 2 exceeds current stack depth 1"),
    ([(1, 0, FULL, 0, [1], [0], [1]), (1, 0, SUFFIX, 1, [1], [0], [11] * 256)],
     {"frame_count": 10}, "Final stack depth 257 exceeds capacity 256"),
]


@pytest.mark.parametrize(("specs", "kwargs", "message"), ERRORS,
                         ids=[f"{i}-{e[2][:20]}" for i, e in enumerate(ERRORS)])
@pytest.mark.parametrize("batches", ["one", "each", "two"])
def test_errors_are_the_references(specs, kwargs, message, batches):
    """Each error commit raises, in one batch with the records before it, or after them:
    CPython's message, the record's region offset and number, the records before it
    committed."""
    region, rows = region_of(specs)
    offset, record = rows[-1][0], len(rows) - 1
    expected = reference_error(region, **kwargs)
    assert expected[:3] == (message, offset, record)
    run = Run(**kwargs)
    cut = {"one": 0, "each": len(rows) - 1, "two": len(rows) // 2}[batches]
    if cut:
        run.commit(rows[:cut])
    with pytest.raises(FormatError) as info:
        run.commit(rows[cut:] + [(offset + 99, FULL, 1, 0, 0, [1], [0], [0])])  # (not reached)
    assert (info.value.message, info.value.offset, info.value.record) == (message, offset,
                                                                           record)
    assert info.value.region and info.value.path == expected[3]
    assert_same(run.result(), reference_before(region, offset, kwargs,
                                               thread_of(rows[-1], message)))


def test_the_first_bad_record_wins():
    """A frame error in record 1 and a shared-count error in record 2, of other threads."""
    region, rows = region_of([(1, 0, FULL, 0, [1], [0], [1]), (2, 0, FULL, 0, [1], [0], [12]),
                              (3, 0, SUFFIX, 4, [1], [0], [1])])
    assert reference_error(region, frame_count=10)[:3] == ("Invalid frame index: 12", rows[1][0],
                                                           1)
    run = Run(frame_count=10)
    with pytest.raises(FormatError) as info:
        run.commit(rows)
    assert (info.value.message, info.value.offset, info.value.record) == (
        "Invalid frame index: 12", rows[1][0], 1)
    assert run.committer.records == 1
    assert run.committer.stats.samples == 1 and run.committer.threads.depth[0] == 1


def test_an_error_leaves_no_thread_of_later_records():
    region, rows = region_of([(1, 0, FULL, 0, [1], [0], [1]), (2, 0, FULL, 0, [1], [0], [12]),
                              (3, 0, FULL, 0, [1], [0], [1])])
    run = Run(frame_count=10)
    with pytest.raises(FormatError):
        run.commit(rows)
    assert [a.tolist() for a in run.committer.threads.ids()] == [[0, 0], [1, 2]]
    assert_same(run.result(), reference_before(region, rows[1][0], {"frame_count": 10}, (0, 2)))


def test_a_suffix_keeping_its_innermost_frames_ends_the_commit():
    """Discovery passes on a SUFFIX with no new frame over fewer shared ones than its
    thread's depth (it keeps the innermost frames); commit builds stacks from the outermost,
    so it commits the records before it, returns their number and forgets the threads of
    the records after it (the sequential reader goes on from there)."""
    rows = [(1, 0, FULL, 0, [1], [0], [1, 2, 3]), (2, 0, FULL, 0, [1], [0], [4]),
            (1, 0, SUFFIX, 1, [1], [0], []), (3, 0, FULL, 0, [1], [0], [5])]
    _, rows = region_of(rows)
    run = Run(frame_count=10)
    done = run.committer.commit(batch_of(rows), run.samples, run.records)
    assert done == 2 and run.committer.records == 2
    assert [a.tolist() for a in run.committer.threads.ids()] == [[0, 0], [1, 2]]
    assert run.committer.threads.depth.tolist() == [3, 1]


# ---------------------------------------------------------------------- properties
@st.composite
def cuts_of(draw, n: int) -> tuple[list[int], list[int]]:
    cuts = draw(st.lists(st.integers(0, n), max_size=5))
    return cuts, draw(st.lists(st.integers(0, 50), max_size=5))


def check_commit(region: bytes, data, kwargs: dict) -> None:
    """Batches of the sequential reader's records, cut at random, commit as the reference
    decodes; a record failing the threads' checks raises the reference's error."""
    facts = RegionFacts.of(**facts_of(**kwargs))
    recs, error = scan_records(region, facts=facts)
    rows = committable(recs)
    cuts, splits = data.draw(cuts_of(len(rows)))
    narrow = data.draw(st.booleans())
    end = recs[-1].end if recs else 0
    run = Run(**kwargs)
    commit_all(run, rows, cuts, splits, narrow)
    bad = read_one(region, error.offset) if is_state_error(error) else None
    if bad is not None:  # the record failing the threads' checks, after the last batch
        bad = record_row(bad)
        with pytest.raises(FormatError) as info:
            run.commit([bad], narrow=narrow)
        got = (info.value.message, info.value.offset, info.value.record)
        assert got == (error.message, error.offset, error.record)
        assert_same(run.result(), reference_before(region, end, kwargs,
                                                   thread_of(bad, error.message)))
        return
    assert_same(run.result(), decode_region(region[:end], **facts_of(**kwargs)))


@SETTINGS
@given(regions(), st.sampled_from([3, 1 << 30, 1 << 30]), st.sampled_from([40, 1 << 30, 1 << 30]),
       st.integers(0, U64), st.data())
def test_random_regions_commit_as_the_reference(region, thread_count, frame_count, start,
                                               data):
    ok = np.arange(min(frame_count, 64)) % 13 != 7 if frame_count < 64 else None
    check_commit(region, data, {"thread_count": thread_count, "frame_count": frame_count,
                                "frame_string_ok": ok, "start_time_us": start})


@ENCODED
@given(thread_samples(), st.data())
def test_encoder_regions_commit_as_the_reference(samples, data):
    check_commit(encode(samples), data, {})


@settings(SETTINGS, max_examples=30)
@given(regions(), st.data())
def test_counting_commits_count_the_references_samples(region, data):
    """Into SampleCounts (``read(..., aggregate=True)``): the samples per (thread, stack,
    status), in order of first appearance."""
    recs, _ = scan_records(region, facts=RegionFacts.of(**facts_of()))
    rows = committable(recs)
    cuts, splits = data.draw(cuts_of(len(rows)))
    run = Run(aggregate=True)
    commit_all(run, rows, cuts, splits, data.draw(st.booleans()))
    counted = run.samples.finish()
    got = list(zip(counted["thread"].tolist(), counted["stack"].tolist(),
                   counted["status"].tolist(), counted["values"][:, 0].tolist(), strict=True))
    end = recs[-1].end if recs else 0
    ref = decode_region(region[:end], **facts_of()).batch
    keys = list(zip(ref.thread.tolist(), ref.stack.tolist(), ref.status.tolist(), strict=True))
    counts = Counter(keys)
    assert got == [(*key, counts[key]) for key in dict.fromkeys(keys)]
    assert run.committer.stats.samples == len(keys)


def test_pieces_cover_every_sample_once():
    """The batching helper itself: every record and sample once, in order."""
    region, rows = region_of(SPECS)
    for cut in range(len(rows) + 1):
        for split in range(4):
            parts = list(pieces(rows, [cut], [split]))
            assert [d for part, _ in parts for row in part for d in row[5]] == [
                d for row in rows for d in row[5]]
            assert sum(len(part) - continued for part, continued in parts) == len(rows)

