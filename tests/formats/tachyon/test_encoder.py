"""The record encoder (``formats.tachyon.encoder``) on its own: its varints and conversions,
the string and frame tables, CPython's record choice, the REPEAT and write buffers.

Its contract: the region it writes decodes back (through the reference decoder) to the
samples it was given, in records chosen by CPython's rule
(docs/format/records.md#record-choice, modelled here from the docs), with the
``get_stats()`` counters of those records;
and its bytes, tables included, are those CPython 3.15's own BinaryWriter writes for the
same samples.
"""

from __future__ import annotations

import io

import construct as cs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.formats.tachyon import zstd
from tachyon_format.formats.tachyon.encoder import (
    FrameTable,
    RegionStream,
    SampleEncoder,
    StringTable,
    opcode_byte,
    position_int32,
    uleb128,
    utf8,
    zigzag_uleb128,
)
from tachyon_format.formats.tachyon.region.decoder import frames_of
from tachyon_format.formats.tachyon.region.layout import FULL, POP_PUSH, REPEAT, SUFFIX
from tachyon_format.formats.tachyon.region.scan import decode_region
from tachyon_format.formats.tachyon.settings import REPEAT_BUFFER_SIZE, WRITE_BUFFER_SIZE
from tachyon_format.schema import tachyon as spec
from tests.helpers.cpython_workloads import ORACLE_SETTINGS, frame_key, write_with_cpython
from tests.helpers.models import U64, canonical
from tests.helpers.reference import requires_reference

from .region.helpers import prefix
from .region.oracles import (
    ENCODED,
    NUM_FRAMES,
    SETTINGS,
    Sample,
    encode,
    encoder_for,
    permissive_facts,
    record_row,
    scan_records,
    thread_samples,
)

INT32 = st.integers(-(2**31), 2**31 - 1)


# ---------------------------------------------------------------------- varints, conversions
@given(st.one_of(st.integers(0, 20000), st.integers(0, U64)))
def test_uleb128_is_the_canonical_encoding(value):
    assert uleb128(value) == canonical(value)


@given(INT32)
def test_zigzag_uleb128_is_the_schemas_svarint(value):
    assert zigzag_uleb128(value) == cs.ZigZag.build(value)
    assert spec.FRAME.subcons[2].parse(zigzag_uleb128(value)) == value  # (lineno)


@pytest.mark.parametrize(("item", "stored"), [
    (None, -1), ("3", -1), (1.0, -1), (np.int64(7), 7), (True, 1), (-1, -1), (0, 0),
    (2**31 - 1, 2**31 - 1), (2**31, -(2**31)), (2**32 + 5, 5), (-(2**31) - 1, 2**31 - 1),
    (2**63 - 1, -1), (2**63, -1), (-(2**63), 0), (-(2**63) - 1, -1), (2**100, -1),
])
def test_position_int32_is_cpythons_conversion(item, stored):
    """``(int32_t)PyLong_AsLong(item)``, any failure (not an int, outside a C long) -1."""
    assert position_int32(item) == stored


@pytest.mark.parametrize(("opcode", "stored"), [
    (0, 0), (90, 90), (254, 254), (255, 255), (256, 255), (-1, 255), (None, 255),
    ("1", 255), (2**80, 255)])
def test_opcode_byte(opcode, stored):
    assert opcode_byte(opcode) == stored


def test_utf8_is_strict():
    assert utf8("é") == b"\xc3\xa9"
    with pytest.raises(TypeError, match="bad argument type for built-in operation"):
        utf8(b"a")
    with pytest.raises(UnicodeEncodeError):
        utf8("\ud800")


# ---------------------------------------------------------------------- tables
class Text(str):
    pass


def test_string_table_interns_in_first_use_order():
    strings = StringTable()
    assert [strings.intern(t) for t in ("a", "é", "a", Text("é"), "")] == [0, 1, 0, 1, 2]
    strings.append_raw(b"\xff")  # (not UTF-8: nothing interns to it)
    strings.append_raw(b"b")
    assert (strings.intern("b"), strings.intern("c"), len(strings)) == (4, 5, 6)
    entries = spec.STRING[len(strings)].parse(bytes(strings.encoded))
    assert [e.text for e in entries] == [b"a", b"\xc3\xa9", b"", b"\xff", b"b", b"c"]


def test_frame_table_deduplicates_converted_frames():
    """Frames equal once converted are one entry; entries read back through the schema."""
    frames = FrameTable(StringTable())
    keys = [("a.py", "f", 3, 4, 0, 9, 90), ("a.py", "f", 3, 4, 0, 9, 90),
            ("a.py", "f", 2**32 + 3, 4, 0, 9, 90),  # the same once converted
            ("a.py", "f", 3, 4, 0, 9, None), ("b.py", "f", None, None, None, None, 255),
            ("a.py", "g", 3.0, 4, 0, 9, -5)]
    assert [frames.intern(k) for k in keys] == [0, 0, 0, 1, 2, 3]
    assert frames.index_bytes == [uleb128(i) for i in range(4)]
    entries = spec.FRAME[len(frames)].parse(bytes(frames.encoded))
    got = [(e.filename_idx, e.funcname_idx, e.lineno, e.end_lineno_delta, e.column,
            e.end_column_delta, e.opcode) for e in entries]
    assert got == [(0, 1, 3, 1, 0, 9, 90), (0, 1, 3, 1, 0, 9, None),
                   (2, 1, -1, 0, -1, 0, None), (0, 3, -1, 0, 0, 9, None)]


def test_frame_table_entries_copied_from_a_file_read_back_alike():
    """append_entry takes the values CPython's reader gives (end positions, opcode -1 for
    none) and writes the entry they were read from."""
    frames = FrameTable(StringTable())
    frames.intern(("a.py", "f", 3, 7, 2, 1, 90))
    frames.intern(("a.py", "f", None, None, 5, None, None))
    copy = FrameTable(StringTable())
    copy.append_entry(0, 1, 3, 7, 2, 1, 90)
    copy.append_entry(0, 1, -1, -1, 5, 5, -1)  # (end column: column + stored delta 0)
    assert copy.encoded == frames.encoded and len(copy) == 2


# ---------------------------------------------------------------------- record choice
def choose(samples: list[Sample]) -> list[tuple]:
    """docs/format/records.md#record-choice, modelled: the records CPython writes, as
    (thread, interpreter, encoding, arg, deltas, statuses, frames) in the order written."""
    state: dict[tuple[int, int], dict] = {}
    out: list[tuple] = []

    def flush(key, t):
        if t["pending"]:
            out.append((*key, REPEAT, 0, [d for d, _ in t["pending"]],
                        [s for _, s in t["pending"]], []))
            t["pending"], t["bytes"] = [], 0

    for s in samples:
        key = (s.thread_id, s.interpreter_id)
        t = state.setdefault(key, {"ts": 0, "stack": (), "pending": [], "bytes": 0})
        delta = (s.timestamp_us - t["ts"]) % 2**64
        cur, prev = s.stack, t["stack"]
        if cur == prev:
            if t["bytes"] + 11 > REPEAT_BUFFER_SIZE:  # (11: the longest entry)
                flush(key, t)
            t["pending"].append((delta, s.status))
            t["bytes"] += len(uleb128(delta)) + 1
        else:
            flush(key, t)
            shared = 0
            while shared < min(len(cur), len(prev)) and cur[-1 - shared] == prev[-1 - shared]:
                shared += 1
            pop, push = len(prev) - shared, len(cur) - shared
            if shared == 0 or (pop and shared < len(cur) // 2):
                out.append((*key, FULL, 0, [delta], [s.status], list(cur)))
            elif pop == 0:
                out.append((*key, SUFFIX, shared, [delta], [s.status], list(cur[:push])))
            else:
                out.append((*key, POP_PUSH, pop, [delta], [s.status], list(cur[:push])))
            t["stack"] = cur
        t["ts"] = s.timestamp_us
    for key, t in state.items():
        flush(key, t)
    return out


def records_of(region: bytes, order: str = "<") -> list[tuple]:
    recs, error = scan_records(region, facts=permissive_facts(order))
    assert error is None
    return [(r.thread_id, r.interpreter_id, r.encoding, *record_row(r)[4:]) for r in recs]


@ENCODED
@given(thread_samples(statuses=st.integers(0, 255)), st.sampled_from(["<", ">"]))
def test_records_are_cpythons_choice_and_decode_to_the_samples(samples, order):
    region = encode(samples, order=order)
    assert records_of(region, order) == choose(samples)
    # replayed per thread: every sample, its clock, status and stack
    out = decode_region(region, order=order, start_time_us=0, thread_count=1 << 30,
                        frame_count=NUM_FRAMES)
    iids, tids = (a.tolist() for a in out.threads)
    b = out.batch
    got: dict[tuple[int, int], list] = {}
    for t, ts, status, stack in zip(b.thread.tolist(), b.timestamp_us.tolist(),
                                    b.status.tolist(), b.stack.tolist(), strict=True):
        frames = tuple(frames_of(out.stack_frame, out.stack_parent, stack).tolist())
        got.setdefault((tids[t], iids[t]), []).append((ts, status, frames))
    expected: dict[tuple[int, int], list] = {}
    for s in samples:
        expected.setdefault((s.thread_id, s.interpreter_id), []).append(
            (s.timestamp_us, s.status, s.stack))
    assert got == expected


@pytest.mark.parametrize(("stacks", "records"), [
    ([(1, 2)], [(FULL, 0, [1, 2])]),
    ([()], [(REPEAT, 0, [])]),  # a thread's first stack, empty: the same as before
    ([(1, 2), ()], [(FULL, 0, [1, 2]), (FULL, 0, [])]),  # to the empty stack: FULL
    ([(2, 3), (5, 2, 3)], [(FULL, 0, [2, 3]), (SUFFIX, 2, [5])]),
    ([(1, 2, 3), (2, 3)], [(FULL, 0, [1, 2, 3]), (POP_PUSH, 1, [])]),
    ([(1, 2, 3), (9, 3)], [(FULL, 0, [1, 2, 3]), (POP_PUSH, 2, [9])]),  # 1 < 2 // 2: no
    ([(1, 2, 3, 4), (9, 8, 7, 4)], [(FULL, 0, [1, 2, 3, 4]), (FULL, 0, [9, 8, 7, 4])]),
    ([(1, 2), (1, 2), (3, 2)], [(FULL, 0, [1, 2]), (REPEAT, 0, []), (POP_PUSH, 1, [3])]),
])
def test_record_choice_worked_examples(stacks, records):
    samples = [Sample(5, 0, stack, 10 * (k + 1), k) for k, stack in enumerate(stacks)]
    got = [(r[2], r[3], r[6]) for r in records_of(encode(samples))]
    assert got == records


def test_exact_bytes_of_each_record_kind():
    """Prefix (thread u64, interpreter u32, encoding u8), then delta, status, counts,
    frames, as in docs/format/records.md."""
    samples = [Sample(7, 1, (1, 2), 300, 0x21), Sample(7, 1, (1, 2), 301, 0x22),
               Sample(7, 1, (5, 1, 2), 301, 0), Sample(7, 1, (2,), 400, 0x7F)]
    for order in ("<", ">"):
        region = encode(samples, order=order, start_time_us=100)
        assert region == (prefix(7, 1, FULL, order) + b"\xc8\x01\x21\x02\x01\x02"
                          + prefix(7, 1, REPEAT, order) + b"\x01\x01\x22"
                          + prefix(7, 1, SUFFIX, order) + b"\x00\x00\x02\x01\x05"
                          + prefix(7, 1, POP_PUSH, order) + b"\x63\x7f\x02\x00")


def test_pending_repeats_flush_in_first_appearance_order():
    """A change writes its thread's REPEAT first; at the end, each thread's, in the order
    the threads first appeared."""
    samples = [Sample(3, 0, (1,), 1, 0), Sample(2, 0, (1,), 1, 0), Sample(3, 0, (1,), 2, 0),
               Sample(2, 0, (1,), 2, 0), Sample(2, 0, (4,), 3, 0), Sample(2, 0, (4,), 4, 0)]
    got = [(r[0], r[2], len(r[4])) for r in records_of(encode(samples))]
    assert got == [(3, FULL, 1), (2, FULL, 1), (2, REPEAT, 1), (2, FULL, 1), (3, REPEAT, 1),
                   (2, REPEAT, 1)]


@pytest.mark.parametrize(("first", "step", "count"), [(1, 1, 8187), (200, 200, 5458),
                                                    (200, 1, 8187)])
def test_a_long_repeat_splits_where_the_buffer_fills(first, step, count):
    """16 KiB of pending entries at most, with room for one of 11 bytes: 8187 entries of 2
    bytes (5458 of 3) per REPEAT, as CPython splits them; an entry that brings the buffer to
    exactly 16384 - 11 bytes still goes in (the third case)."""
    clock = np.cumsum([5, first] + [step] * 17000).tolist()
    samples = [Sample(1, 0, (3,), t, 0) for t in clock]
    got = records_of(encode(samples))
    assert [(r[2], len(r[4])) for r in got[:2]] == [(FULL, 1), (REPEAT, count)]
    assert got == choose(samples)


@settings(SETTINGS, max_examples=30)
@given(thread_samples(statuses=st.integers(0, 255)))
def test_counters_are_the_records(samples):
    out = io.BytesIO()
    encoder = encoder_for(out)
    for s in samples:
        encoder.encode(encoder.thread(s.thread_id, s.interpreter_id), s.stack,
                       s.timestamp_us, s.status)
    encoder.flush_all()
    encoder.region.close()
    records = choose(samples)
    c = encoder.stats
    kinds = [r[2] for r in records]
    assert (c.repeat_records, c.full_records, c.suffix_records, c.pop_push_records) == tuple(
        kinds.count(k) for k in (REPEAT, FULL, SUFFIX, POP_PUSH))
    assert c.repeat_samples == sum(len(r[4]) for r in records if r[2] == REPEAT)
    assert c.total_frames_written == sum(len(r[6]) for r in records)
    assert encoder.num_samples == len(samples) == sum(len(r[4]) for r in records)
    assert encoder.region.num_bytes == len(out.getvalue())


# ---------------------------------------------------------------------- the write buffer
class Writes(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, data) -> int:
        self.sizes.append(len(data))
        return super().write(data)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(1, 300_000), min_size=1, max_size=12))
def test_region_stream_hands_on_whole_buffers(sizes):
    """Raw: the bytes in 512 KiB writes, then the rest at close. zstd: one frame of them."""
    pieces = [bytes([k % 251]) * n for k, n in enumerate(sizes)]
    raw, packed = Writes(), io.BytesIO()
    streams = [RegionStream(raw, zstd=False), RegionStream(packed, zstd=True)]
    for piece in pieces:
        for stream in streams:
            stream.write(piece)
    for stream in streams:
        stream.close()
    data = b"".join(pieces)
    assert raw.getvalue() == data and streams[0].num_bytes == len(data)
    full, rest = divmod(len(data), WRITE_BUFFER_SIZE)
    assert raw.sizes == [WRITE_BUFFER_SIZE] * full + ([rest] if rest else [])
    assert bytes(zstd.decompress(packed.getvalue())) == data


# ---------------------------------------------------------------------- CPython's writer
def frame_of(index: int) -> list:
    """The frame of index *index* in the random stacks, as CPython's writer takes it."""
    return [f"m{index % 5}.py", [index, index + 1 + index % 3, index % 7, 9], f"f{index}",
            None if index % 4 else index]


def job_of(samples: list[Sample], start_time_us: int) -> dict:
    return {"writer": {"compression": 0}, "interval_us": 1, "start_time_us": start_time_us,
            "stats": None,
            "samples": [[s.timestamp_us, [[s.interpreter_id, [[s.thread_id, s.status,
                                                             [frame_of(i) for i in s.stack]]]]]]
                        for s in samples]}


def ours(samples: list[Sample], start_time_us: int) -> tuple[bytes, bytes]:
    """Our region and tables for the samples, through the interning a Writer does."""
    strings = StringTable()
    frames = FrameTable(strings)
    out = io.BytesIO()
    encoder = SampleEncoder(RegionStream(out, zstd=False), "<", start_time_us)
    encoder.frame_index_bytes = frames.index_bytes
    for s in samples:
        stack = tuple(frames.intern(frame_key(frame_of(i))) for i in s.stack[:256])
        encoder.encode(encoder.thread(s.thread_id, s.interpreter_id), stack, s.timestamp_us,
                       s.status)
    encoder.flush_all()
    encoder.region.close()
    return out.getvalue(), bytes(strings.encoded + frames.encoded)


@requires_reference
@settings(max_examples=4, **ORACLE_SETTINGS)
@given(st.lists(st.tuples(thread_samples(statuses=st.integers(0, 255)),
                          st.sampled_from([0, 10**6, U64 - 3])), min_size=4, max_size=6))
def test_bytes_are_cpythons(tmp_path_factory, jobs):
    """The region and the tables equal those of CPython 3.15's BinaryWriter, byte for byte
    (one CPython run per example, for all its jobs)."""
    tmp = tmp_path_factory.mktemp("encoder")
    paths = [tmp / f"cpython{i}.bin" for i in range(len(jobs))]
    write_with_cpython([(p, job_of(samples, start))
                        for p, (samples, start) in zip(paths, jobs, strict=True)])
    for path, (samples, start) in zip(paths, jobs, strict=True):
        data = path.read_bytes()
        header = spec.header("<").parse(data)
        region, tables = ours(samples, start)
        assert data[spec.HEADER_SIZE:header.string_table_offset] == region
        assert data[header.string_table_offset:-spec.FOOTER_SIZE] == tables
