"""Stage 1 of the vectorised decoder, ``region.discover``, on its own.

Its contract: the records it returns are exactly those the sequential reader
(``scan.scan_record``) reads one after the other from the window's start, field for field;
it never vouches for a record the sequential reader rejects for its syntax; it stops only
at the end of the window or data, or before a record it hands to the sequential reader (a
status byte >= 0x80, a REPEAT whose count is a canonical 0, a SUFFIX keeping its innermost
frames, an interpreter or thread it does not know, or a syntax error), and says which.
Checks that need the threads' state are commit's: discovery may go past them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region.discover import KnownThreads, discover
from tachyon_format.formats.tachyon.region.layout import PREFIX_SIZE
from tachyon_format.formats.tachyon.region.records import REPEAT
from tests.helpers.models import U64

from .helpers import prefix, regions, uleb
from .oracles import (
    ENCODED,
    SETTINGS,
    batch_rows,
    encode,
    is_state_error,
    permissive_facts,
    record_row,
    scan_records,
    thread_samples,
)

THREAD_IDS = [1, 2, 0x7FFF12345678, U64]  # those of the random regions (helpers.record)


def find(region: bytes, start: int = 0, stop: int | None = None, *, base: int = 0,
         at_end: bool = True, iids=(0, 1), tids=None, order: str = "<"):
    known = KnownThreads(list(iids), None if tids is None else np.array(sorted(tids), np.uint64))
    return discover(np.frombuffer(region, np.uint8), start,
                    len(region) if stop is None else stop, base=base, at_end=at_end,
                    known=known, order=order)


def shifted(rows: list[tuple], base: int) -> list[tuple]:
    return [(row[0] + base, *row[1:]) for row in rows]


# ---------------------------------------------------------------------- a worked region
def worked_region(order: str = "<") -> tuple[bytes, list[tuple]]:
    """Every record kind, two threads of two interpreters interleaved, non-canonical
    varints; with the rows (offset, encoding, thread, interpreter, arg, deltas, statuses,
    frames) each record must give."""
    def p(tid, iid, enc):
        return prefix(tid, iid, enc, order)

    parts = [
        (p(1, 0, 1) + b"\x05\x22\x02\x03\x04", (1, 1, 0, 0, [5], [0x22], [3, 4])),  # FULL
        (p(2, 1, 1) + b"\xac\x02\x01\x01\x07", (1, 2, 1, 0, [300], [1], [7])),  # wide delta
        (p(1, 0, 0) + b"\x83\x00" + b"\x01\x22" + b"\x80\x80\x01\x23" + b"\x00\x22",
         (0, 1, 0, 0, [1, 16384, 0], [0x22, 0x23, 0x22], [])),  # REPEAT, count 3 in 2 bytes
        (p(2, 1, 2) + b"\x01\x00\x01\x02\x09\x8a\x00",
         (2, 2, 1, 1, [1], [0], [9, 10])),  # SUFFIX shared 1, new 2 (frame 10 in 2 bytes)
        (p(1, 0, 3) + b"\x02\x00\x01\x01\x05", (3, 1, 0, 1, [2], [0], [5])),  # POP_PUSH
        (p(2, 1, 2) + b"\x00\x00\x00\x00", (2, 2, 1, 0, [0], [0], [])),  # SUFFIX 0 shared, 0 new
        (p(1, 0, 0) + b"\x80\x00", (0, 1, 0, 0, [], [], [])),  # REPEAT of count 0, in 2 bytes
        (p(2, 1, 3) + b"\x01\x7f\x00\x00", (3, 2, 1, 0, [1], [0x7F], [])),  # POP_PUSH 0, 0
        (p(1, 0, 1) + b"\x81" + b"\x80" * 8 + b"\x00\x00\x00",
         (1, 1, 0, 0, [1], [0], [])),  # a delta in 10 bytes (the most allowed), depth 0
    ]
    region, rows = b"", []
    for data, row in parts:
        rows.append((len(region), *row))
        region += data
    return region, rows


@pytest.mark.parametrize("order", ["<", ">"])
def test_worked_region_gives_every_record(order):
    region, rows = worked_region(order)
    found = find(region, order=order, base=1000)
    assert batch_rows(found.batch) == shifted(rows, 1000)
    assert (found.cut, found.reason) == (len(region), "done")
    assert found.batch.npush.tolist() == [len(row[7]) for row in rows]
    assert found.batch.nsamp.tolist() == [len(row[5]) for row in rows]
    # the oracle reads the same records
    recs, error = scan_records(region, facts=permissive_facts(order))
    assert error is None and [record_row(r) for r in recs] == rows


def test_worked_region_in_every_window():
    """Windows ending anywhere, from every record boundary: the records wholly inside, and
    "window" (the next one does not fit) or, at the end of the data, "done"/"scalar"."""
    region, rows = worked_region()
    ends = [row[0] for row in rows[1:]] + [len(region)]
    # around each record's end: a byte short, the end, a prefix short of a byte, a prefix
    near = {end + d for end in ends for d in (-1, 0, 1, PREFIX_SIZE - 1, PREFIX_SIZE)}
    for k, start in enumerate(row[0] for row in rows):
        for stop in sorted({start} | {s for s in near if start <= s <= len(region)}):
            inside = [row for row, end in zip(rows[k:], ends[k:], strict=True) if end <= stop]
            cut = ends[k + len(inside) - 1] if inside else start
            found = find(region, start, stop, at_end=False)
            assert batch_rows(found.batch) == inside, (start, stop)
            assert (found.cut, found.reason) == (cut, "window"), (start, stop)
            found = find(region, start, stop, at_end=True)  # the data ends at stop
            assert batch_rows(found.batch) == inside, (start, stop)
            done = inside and cut == stop  # (an empty window is the sequential reader's)
            assert (found.cut, found.reason) == (cut, "done" if done else "scalar")


def test_unknown_interpreters_and_threads_stop_the_chain():
    region, rows = worked_region()
    found = find(region, iids=[0])  # the record at 18 is of interpreter 1
    assert (batch_rows(found.batch), found.cut, found.reason) == (rows[:1], 18, "scalar")
    found = find(region, 18, iids=[0])  # but the window's first interpreter is known
    assert (batch_rows(found.batch), found.cut) == (shifted(rows[1:], 0), len(region))
    found = find(region, tids=[1])  # thread 2 is not known yet
    assert (batch_rows(found.batch), found.cut, found.reason) == (rows[:1], 18, "scalar")
    found = find(region, 18, tids=[1])  # the window's first record counts, not its thread
    assert (batch_rows(found.batch), found.cut, found.reason) == (rows[1:3], 59, "scalar")
    assert batch_rows(find(region, tids=[1, 2, 3]).batch) == rows


FIRST = prefix(1, 0, 1) + b"\x05\x22\x02\x03\x04"  # a FULL record of 18 bytes
HAND_OVERS = [  # (a record after FIRST, the sequential reader's error there or None)
    (prefix(1, 0, 1) + b"\x01\x80\x00", None),  # status byte >= 0x80
    (prefix(1, 0, 0) + b"\x02\x01\x00\x01\xff", None),  # in a REPEAT's second entry
    (prefix(1, 0, 0) + b"\x00", None),  # REPEAT of count 0 (canonical)
    (prefix(1, 7, 1) + b"\x01\x00\x00", None),  # interpreter 7, not known
    (prefix(1, 0, 4) + b"\x00\x00", "Unknown stack encoding: 4"),
    (prefix(1, 0, 1) + b"\x80" * 10 + b"\x00\x00\x00", "Malformed varint in sample data"),
    (prefix(1, 0, 1) + b"\x00\x00" + uleb(257) + b"\x00" * 257,
     "Stack depth 257 exceeds capacity 256"),
    (prefix(1, 0, 3) + b"\x00\x00\x00" + uleb(257) + b"\x00" * 257,
     "Final stack depth 259 exceeds capacity 256"),  # (push alone > 256: syntax)
    (prefix(1, 0, 2) + b"\x00\x00" + uleb(2**32) + b"\x00",
     "Invalid or incomplete varint in binary data"),  # shared above a u32
    (prefix(1, 0, 1) + b"\x00\x00\x01" + uleb(2**32),
     "Invalid or incomplete varint in binary data"),  # frame index above a u32
    (prefix(1, 0, 1) + b"\x00\x00\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",
     "Invalid or incomplete varint in binary data"),  # an 11-byte frame index
    (prefix(1, 0, 0) + uleb(2**32) + b"\x00\x00",
     "Malformed varint for RLE count"),  # count above a u32
    (prefix(1, 0, 0) + b"\x64\x01\x00\x01\x00", "Invalid RLE count 100 exceeds maximum "
                                               "possible 11"),
    # cut by the end of the data (FIRST is left out after these)
    (prefix(1, 0, 0) + b"\x03\x01\x00\x01\x00", "Invalid RLE count 3 exceeds maximum "
                                               "possible 2"),
    (prefix(1, 0, 1) + b"\x00\x00\x02\x01", "Invalid or incomplete varint in binary data"),
    (prefix(1, 0, 1) + b"\x00", "Unexpected end of sample data"),
    (b"\x01\x02", "Truncated sample data: 2 trailing bytes"),
]
CUT_SHORT = 4  # the last cases


@pytest.mark.parametrize(("tail", "message"), HAND_OVERS,
                         ids=[f"{i}-{m or 'valid'}" for i, (_, m) in enumerate(HAND_OVERS)])
def test_records_handed_to_the_sequential_reader(tail, message):
    cut_short = HAND_OVERS.index((tail, message)) >= len(HAND_OVERS) - CUT_SHORT
    region = FIRST + tail + (b"" if cut_short else FIRST)
    found = find(region, iids=[0])
    assert batch_rows(found.batch) == [(0, 1, 1, 0, 0, [5], [0x22], [3, 4])]
    assert (found.cut, found.reason) == (18, "scalar")
    recs, error = scan_records(region, facts=permissive_facts(thread_count=4, frame_count=10))
    if message is None:
        assert error is None and len(recs) == 3  # valid: only not for discovery to read
    else:
        assert (len(recs), error.message, error.offset, error.record) == (1, message, 18, 1)


@pytest.mark.parametrize(("region", "at_end", "expected"), [
    (b"", True, (0, "scalar")),  # nothing: the sequential reader ends it
    (b"\x00" * 12, False, (0, "window")),  # a prefix not all there yet
    (b"\x00" * 12, True, (0, "scalar")),  # "Truncated sample data" for the sequential reader
    (prefix(1, 0, 5) + FIRST, True, (0, "scalar")),  # the first record is not a candidate
    (prefix(1, 0, 0) + b"\x00" + FIRST, True, (0, "scalar")),  # nor is a canonical empty REPEAT
    (FIRST[:-1], False, (0, "window")),  # one byte short
    (FIRST[:-1], True, (0, "scalar")),
])
def test_no_record(region, at_end, expected):
    found = find(region, at_end=at_end)
    assert found.batch is None
    assert (found.cut, found.reason) == expected


def test_syntax_checks_do_not_need_the_threads_state():
    """A SUFFIX sharing more frames than its thread has, a frame index past the table:
    commit's checks, not discovery's."""
    region = FIRST + prefix(1, 0, 2) + b"\x00\x00\x09\x01\x63" + FIRST
    found = find(region)
    assert found.batch.size == 3 and found.reason == "done"
    assert batch_rows(found.batch)[1] == (18, 2, 1, 0, 9, [0], [0], [99])


def test_a_long_window_of_repeats_with_wide_deltas():
    """Thousands of samples: their deltas of every width come back by position."""
    deltas = [(i * 2654435761) % (1 << (i % 64)) if i % 64 else i for i in range(3000)]
    body = b"".join(uleb(d) + bytes([i % 0x80]) for i, d in enumerate(deltas))
    region = FIRST + prefix(1, 0, 0) + uleb(len(deltas)) + body + FIRST
    found = find(region)
    rows = batch_rows(found.batch)
    assert [row[5] for row in rows] == [[5], deltas, [5]]
    assert rows[1][6] == [i % 0x80 for i in range(3000)]
    assert (found.cut, found.reason) == (len(region), "done")


@pytest.mark.parametrize("order", ["<", ">"])
def test_a_prefix_that_looks_like_an_over_long_varint(order):
    """Thread 2**64-1 of interpreter 2**32-1: twelve bytes >= 0x80 before the encoding byte,
    which the check of varints over 10 bytes sees as one. Discovery may hand such a record
    over (it does today), never misread it."""
    odd = prefix(U64, 2**32 - 1, 0, order) + b"\x01\x05\x00"
    region = prefix(1, 0, 1, order) + b"\x05\x22\x02\x03\x04" + odd
    found = find(region, iids=[0, 2**32 - 1], order=order)
    recs, error = scan_records(region, facts=permissive_facts(order))
    assert error is None and len(recs) == 2
    got = batch_rows(found.batch)
    assert got == [record_row(r) for r in recs[:len(got)]]
    assert (found.cut, found.reason) in [(18, "scalar"), (len(region), "done")]


def test_no_known_thread_yet():
    """An empty sorted array of known threads: only the window's first record counts."""
    region, rows = worked_region()
    found = find(region, tids=[])
    assert (batch_rows(found.batch), found.cut, found.reason) == (rows[:1], 18, "scalar")


# ---------------------------------------------------------------------- properties
def handed_over(region: bytes, rec, start: int, iids, tids) -> bool:
    """Whether a valid record is one discovery leaves to the sequential reader."""
    return (max(rec.statuses, default=0) >= 0x80
            or (rec.encoding == REPEAT and region[rec.offset + PREFIX_SIZE] == 0)
            or (rec.offset != start and (rec.interpreter_id not in iids
                                         or (tids is not None and rec.thread_id not in tids))))


def assert_holds_no_hand_over(region: bytes, batch, base: int = 0) -> None:
    """What discovery must leave to the sequential reader is not in its batch (a SUFFIX
    keeping its innermost frames is in it: commit stops there, see test_commit)."""
    if batch is None:
        return
    assert not (batch.status >= 0x80).any()
    repeats = batch.offset[batch.encoding == REPEAT] - base
    assert all(region[at + PREFIX_SIZE] != 0 for at in repeats.tolist())


@SETTINGS
@given(regions(), st.data())
def test_random_regions_give_the_sequential_records(region, data):
    """Valid records, damaged ones, statuses of any value, records that break the threads'
    checks: discovery reads what the sequential reader reads, as far as it goes."""
    iids = data.draw(st.sampled_from([[0, 1], [0], [1]]))
    tids = data.draw(st.one_of(st.none(), st.sets(st.sampled_from(THREAD_IDS), min_size=1)))
    recs, error = scan_records(region)
    start, k = 0, 0  # resumed after each hand-over, as the decoder resumes
    while start < len(region):
        found = find(region, start, iids=iids, tids=tids)
        assert_holds_no_hand_over(region, found.batch)
        got, want = batch_rows(found.batch), [record_row(r) for r in recs[k:]]
        n = min(len(got), len(want))
        assert got[:n] == want[:n]
        if len(got) > len(want):  # past a record that fails only the threads' checks
            assert is_state_error(error) and got[len(want)][0] == error.offset
            return
        assert found.cut == (recs[k + n - 1].end if n else start)
        if len(got) == len(want):
            break
        assert found.reason == "scalar"
        assert handed_over(region, recs[k + n], start, iids, tids)
        start, k = recs[k + n].end, k + n + 1
    else:
        return  # (the last record was handed over)
    if error is None:
        assert (found.cut, found.reason) == (len(region), "done")
    else:  # never past a record the sequential reader rejects
        assert (found.cut, found.reason) == (error.offset, "scalar")


@ENCODED
@given(thread_samples(), st.sampled_from(["<", ">"]), st.data())
def test_encoder_regions_in_any_window(samples, order, data):
    """What the encoder writes: discovery finds every record at once; from any record
    boundary, in a window ending anywhere, exactly the records inside it."""
    region = encode(samples, order=order)
    recs, error = scan_records(region, facts=permissive_facts(order))
    assert error is None
    iids = sorted({s.interpreter_id for s in samples})
    tids = {s.thread_id for s in samples}
    found = find(region, iids=iids, tids=data.draw(st.sampled_from([None, tids])), order=order)
    assert batch_rows(found.batch) == [record_row(r) for r in recs]
    assert (found.cut, found.reason) == (len(region), "done" if region else "scalar")
    if not recs:
        return
    k = data.draw(st.integers(0, len(recs) - 1))
    start = recs[k].offset
    stop = data.draw(st.integers(start, len(region)))
    base = data.draw(st.sampled_from([0, 7, 1 << 40]))
    found = find(region, start, stop, base=base, at_end=False, iids=iids, order=order)
    inside = [record_row(r) for r in recs[k:] if r.end <= stop]
    assert batch_rows(found.batch) == shifted(inside, base)
    assert found.cut == (start + sum(r.end - r.offset for r in recs[k:k + len(inside)]))
    assert found.reason == "window"
