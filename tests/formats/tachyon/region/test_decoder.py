"""The vectorised sample-region decoder against a scalar model of CPython's C replay()."""

from __future__ import annotations

import gzip
import json
import os
import struct
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region import decoder as sample_codec
from tachyon_format.formats.tachyon.region.decoder import (
    SampleDecoder,
    decode_samples,
    stack_frames,
)
from tachyon_format.kernels import terminators
from tests.helpers.paths import CPYTHON_FIXTURES
from tests.helpers.reference import reference_python

U64 = (1 << 64) - 1
FIXTURES = CPYTHON_FIXTURES
FIXTURE_FILES = sorted(FIXTURES.glob("*.bin")) if FIXTURES.is_dir() else []


# ---------------------------------------------------------------------- scalar model
class ReplayError(Exception):
    def __init__(self, message, offset, record):
        super().__init__(message)
        self.message, self.offset, self.record = message, offset, record


def _varint(data, p, msg, u32):
    result = shift = 0
    while True:
        if p >= len(data):
            raise ReplayError(msg, None, None)
        byte = data[p]
        p += 1
        result |= ((byte & 0x7F) << shift) & U64
        if byte < 0x80:
            break
        shift += 7
        if shift >= 64:
            raise ReplayError(msg, None, None)
    if u32 and result > 0xFFFFFFFF:
        raise ReplayError(msg, None, None)
    return result, p


GENERIC = "Invalid or incomplete varint in binary data"


def model_replay(region, *, order="<", start=0, thread_count=1 << 30, frame_count=1 << 30,
                 frame_ok=None):
    """A line-by-line model of CPython 3.15.2's replay loop: samples or ReplayError."""
    threads = {}
    out = []
    off = rec = 0
    n = len(region)
    while off < n:
        try:
            out.extend(_model_record(region, off, n, order, start, thread_count, frame_count,
                                     frame_ok, threads))
        except ReplayError as exc:
            raise ReplayError(exc.message, off, rec) from None
        off = threads.pop("_next")
        rec += 1
    return out


def _model_record(region, off, n, order, start, thread_count, frame_count, frame_ok, threads):
    if n - off < 13:
        raise ReplayError(f"Truncated sample data: {n - off} trailing bytes", None, None)
    tid, iid = struct.unpack_from(order + "QI", region, off)
    key = (iid, tid)
    if key not in threads:
        if len(threads) >= thread_count:
            raise ReplayError(
                "Invalid thread count: sample data contains more unique threads than declared "
                f"in header (declared {thread_count}, found at least {len(threads) + 1})",
                None, None)
        threads[key] = [start, []]
    st_ = threads[key]
    enc = region[off + 12]
    p = off + 13
    samples = []
    if enc == 0:
        count, p = _varint(region, p, "Malformed varint for RLE count", True)
        if count > (n - p) // 2:
            raise ReplayError(f"Invalid RLE count {count} exceeds maximum possible "
                              f"{(n - p) // 2}", None, None)
        for _ in range(count):
            d, p = _varint(region, p, "Malformed varint in RLE sample data", False)
            if p >= n:
                raise ReplayError("Unexpected end of sample data in RLE", None, None)
            st_[0] = (st_[0] + d) & U64
            samples.append((iid, tid, st_[0], region[p], tuple(st_[1])))
            p += 1
    elif enc in (1, 2, 3):
        d, p = _varint(region, p, "Malformed varint in sample data", False)
        if p >= n:
            raise ReplayError("Unexpected end of sample data", None, None)
        status = region[p]
        p += 1
        st_[0] = (st_[0] + d) & U64
        old = st_[1]
        if enc == 1:
            depth, p = _varint(region, p, GENERIC, True)
            if depth > 256:
                raise ReplayError(f"Stack depth {depth} exceeds capacity 256", None, None)
            kept = []
            count = depth
        else:
            a, p = _varint(region, p, GENERIC, True)
            count, p = _varint(region, p, GENERIC, True)
            if enc == 2:
                if a > len(old):
                    raise ReplayError(f"Shared count {a} exceeds current stack depth "
                                      f"{len(old)}", None, None)
                kept = old[len(old) - a:] if a else []
            else:
                kept = old[a:]
            if len(kept) + count > 256:
                raise ReplayError(f"Final stack depth {len(kept) + count} exceeds capacity 256",
                                  None, None)
        new = []
        for _ in range(count):
            f, p = _varint(region, p, GENERIC, True)
            new.append(f)
        st_[1] = new + list(kept)
        for f in st_[1]:
            if f >= frame_count:
                raise ReplayError(f"Invalid frame index: {f}", None, None)
            if frame_ok is not None and not frame_ok[f]:
                raise ReplayError("Invalid string index in frame", None, None)
        samples.append((iid, tid, st_[0], status, tuple(st_[1])))
    else:
        raise ReplayError(f"Unknown stack encoding: {enc}", None, None)
    threads["_next"] = p
    return samples


# ---------------------------------------------------------------------- helpers
def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def prefix(tid, iid, enc, order="<"):
    return struct.pack(order + "QIB", tid, iid, enc)


def decoded_rows(batch, dec):
    iids, tids = dec.threads
    frame, parent = dec.stack_frame, dec.stack_parent
    cache = {}
    rows = []
    for th, ts, status, sid in zip(batch.thread.tolist(), batch.timestamp_us.tolist(),
                                   batch.status.tolist(), batch.stack.tolist(), strict=True):
        if sid not in cache:
            cache[sid] = tuple(stack_frames(frame, parent, sid).tolist())
        rows.append((int(iids[th]), int(tids[th]), ts, status, cache[sid]))
    return rows


def run_both(region, chunks=None, **kw):
    """(model result, decoder result): sample rows, or ('error', message, offset, record)."""
    try:
        expected = model_replay(region, **{k: v for k, v in kw.items()
                                           if k not in ("frame_ok", "threads")},
                                frame_ok=kw.get("frame_ok"))
    except ReplayError as exc:
        expected = ("error", exc.message, exc.offset, exc.record)
    args = {"order": kw.get("order", "<"), "start_time_us": kw.get("start", 0),
            "thread_count": kw.get("thread_count", 1 << 30),
            "frame_count": kw.get("frame_count", 1 << 30),
            "frame_string_ok": kw.get("frame_ok"), "threads": kw.get("threads")}
    dec = SampleDecoder(**args)
    try:
        if chunks is None:
            batches = [dec.decode(region, final=True)]
        else:
            batches, pos = [], 0
            for i, cut in enumerate(chunks):
                batches.append(dec.decode(region[pos:cut], final=False))
                pos = cut
                assert i >= 0
            batches.append(dec.decode(region[pos:], final=True))
        got = [row for b in batches for row in decoded_rows(b, dec)]
    except FormatError as exc:
        got = ("error", exc.message, exc.offset, exc.record)
    return expected, got, dec, batches if not isinstance(got, tuple) else None


# ---------------------------------------------------------------------- random streams
FRAMES = st.integers(0, 40)


@st.composite
def record(draw, order="<", invalid=False):
    tid = draw(st.sampled_from([1, 2, 0x7FFF12345678, U64]))
    iid = draw(st.sampled_from([0, 0, 0, 1]))
    enc = draw(st.integers(0, 3))
    delta = lambda: uleb(draw(st.one_of(st.integers(0, 3000), st.integers(0, U64))))  # noqa: E731
    status = lambda: bytes([draw(st.one_of(st.integers(0, 0x7F), st.integers(0, 255)))])  # noqa: E731
    body = bytearray()
    if enc == 0:
        n = draw(st.integers(0, 6))
        body += uleb(n)
        for _ in range(n):
            body += delta() + status()
    else:
        body += delta() + status()
        frames = draw(st.lists(FRAMES, max_size=8))
        if enc == 1:
            body += uleb(len(frames))
        else:
            body += uleb(draw(st.integers(0, 6))) + uleb(len(frames))
        for f in frames:
            body += uleb(f)
    data = prefix(tid, iid, enc, order) + bytes(body)
    if invalid:
        kind = draw(st.integers(0, 4))
        if kind == 0:
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == 1:
            data = data[:12] + bytes([draw(st.integers(4, 255))]) + data[13:]
        elif kind == 2:
            data = data[:13] + b"\x80" * draw(st.integers(1, 12)) + data[13:]
        elif kind == 3:
            data = data[:13] + uleb(draw(st.integers(257, 1 << 36))) + data[13:]
        else:
            i = draw(st.integers(13, max(13, len(data))))
            data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
    return data


@st.composite
def stream(draw, order="<"):
    recs = draw(st.lists(record(order), max_size=25))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(recs)))
        recs.insert(at, draw(record(order, invalid=True)))
    return b"".join(recs)


SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
# chunking and byte order reuse the model comparison above, so fewer examples suffice
FEWER = settings(SETTINGS, max_examples=30)


@SETTINGS
@given(stream(), st.integers(0, U64), st.sampled_from([2, 3, 8, 1 << 30]),
       st.sampled_from([30, 41, 1 << 30]))
def test_random_streams_match_model(region, start, thread_count, frame_count):
    ok = np.ones(min(frame_count, 64), bool)
    ok[7] = False
    kw = {"start": start, "thread_count": thread_count, "frame_count": frame_count}
    if frame_count < 64:
        kw["frame_ok"] = ok[:frame_count]
    expected, got, _, _ = run_both(region, **kw)
    assert got == expected


@FEWER
@given(stream(), st.data())
def test_chunked_decode_equals_one_shot(region, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(region)), max_size=6)))
    expected, got, _, _ = run_both(region, chunks=cuts)
    assert got == expected


@FEWER
@given(stream(), st.integers(1, 4))
def test_small_sample_blocks_equal_one_block(region, block):
    """Per-sample work runs in blocks of records; tiny blocks must change nothing."""
    with mock.patch.object(sample_codec, "SAMPLE_BLOCK", block):
        expected, got, _, _ = run_both(region)
    assert got == expected


@FEWER
@given(stream(), st.integers(13, 80), st.integers(13, 80), st.booleans())
def test_small_windows_equal_one_window(region, first_window, window, threads):
    """Many windows: later ones filter candidates by the threads seen so far, and a new
    thread must only hand over to the sequential reader; with a helper thread, each
    window's discovery runs while the one before is committed."""
    with (mock.patch.object(sample_codec, "FIRST_WINDOW", first_window),
          mock.patch.object(sample_codec, "WINDOW", window)):
        expected, got, _, _ = run_both(region, threads=threads)
    assert got == expected


@FEWER
@given(stream(), st.sampled_from([0.0, 2.0]))
def test_both_terminator_index_layouts_decode_alike(region, dense_above):
    """0.0 forces the dense layout, 2.0 the sparse one, whatever the data."""
    with mock.patch.object(terminators.TerminatorIndex, "DENSE_ABOVE", dense_above):
        expected, got, _, _ = run_both(region)
    assert got == expected


@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 20))
def test_sample_blocks_partition_the_records(nsamp, block):
    counts = np.array(nsamp, np.int64)
    blocks = sample_codec._sample_blocks(counts, block)
    record = sample = 0
    for ra, rb, sa, sb in blocks:
        assert (ra, sa) == (record, sample) and rb >= ra
        assert sb - sa == counts[ra:rb].sum()
        assert rb - ra <= 1 or sb - sa <= block + counts[rb - 1]  # about `block` samples
        record, sample = rb, sb
    assert (record, sample) == (len(nsamp), sum(nsamp))


@FEWER
@given(stream(order=">"))
def test_big_endian_prefixes(region):
    expected, got, _, _ = run_both(region, order=">")
    assert got == expected


def test_record_table_and_stats():
    region = (prefix(1, 0, 1) + b"\x05\x22\x02\x03\x04"          # FULL [3, 4]
              + prefix(1, 0, 0) + b"\x03\x01\x22\x01\x23\x01\x22"  # REPEAT x3
              + prefix(1, 0, 0) + b"\x00"                          # REPEAT x0
              + prefix(1, 0, 2) + b"\x01\x22\x02\x01\x09"          # SUFFIX [9, 3, 4]
              + prefix(1, 0, 3) + b"\x01\xa2\x05\x00")             # POP_PUSH -> []
    batch, dec = decode_samples(region, order="<", start_time_us=10, thread_count=1,
                                frame_count=10)
    assert batch.record_encoding.tolist() == [1, 0, 0, 2, 3]
    assert batch.record_first_sample.tolist() == [0, 1, 4, 4, 5]
    assert batch.record_offset.tolist() == [0, 18, 38, 52, 70]
    assert batch.timestamp_us.tolist() == [15, 16, 17, 18, 19, 20]
    assert batch.status.tolist() == [0x22, 0x22, 0x23, 0x22, 0x22, 0xA2]
    rows = decoded_rows(batch, dec)
    assert [r[4] for r in rows] == [(3, 4)] * 4 + [(9, 3, 4), ()]
    assert batch.stack[-1] == -1
    assert dec.stats == {"repeat_records": 2, "repeat_samples": 3, "full_records": 1,
                         "suffix_records": 1, "pop_push_records": 1, "total_records": 5,
                         "total_samples": 6, "stack_reconstructions": 3}
    # a shared prefix is one node
    assert len(dec.stack_frame) == 3


@pytest.mark.parametrize(
    ("region", "message"),
    [
        (b"\x01", "Truncated sample data: 1 trailing bytes"),
        (prefix(1, 0, 7), "Unknown stack encoding: 7"),
        (prefix(1, 0, 0) + b"\x05\x01\x00", "Invalid RLE count 5 exceeds maximum possible 1"),
        (prefix(1, 0, 1) + b"\x00\x00" + uleb(300), "Stack depth 300 exceeds capacity 256"),
        (prefix(1, 0, 2) + b"\x00\x00\x01\x01\x05", "Shared count 1 exceeds current stack "
                                                    "depth 0"),
        (prefix(1, 0, 3) + b"\x00\x00\x00" + uleb(257), "Final stack depth 257 exceeds "
                                                        "capacity 256"),
        (prefix(1, 0, 1) + b"\x00\x00\x01\x63", "Invalid frame index: 99"),
        (prefix(1, 0, 1) + b"\x00", "Unexpected end of sample data"),
        (prefix(1, 0, 1) + b"\x80", "Malformed varint in sample data"),
        (prefix(1, 0, 0) + b"\x01\x80\x00", "Unexpected end of sample data in RLE"),
        (prefix(1, 0, 1) + b"\x00\x00\x01\x80\x80\x80\x80\x10", GENERIC),
        (prefix(1, 0, 0) + b"\x80", "Malformed varint for RLE count"),
        (prefix(1, 0, 1) + b"\xff" * 9 + b"\x7f\x00\x00"
         + prefix(1, 0, 1) + b"\x80" * 10 + b"\x00\x00\x00", "Malformed varint in sample data"),
    ],
)
def test_error_messages(region, message):
    with pytest.raises(FormatError) as info:
        decode_samples(region, order="<", start_time_us=0, thread_count=4, frame_count=10)
    assert info.value.message == message
    assert info.value.region is True
    expected, got, _, _ = run_both(region, thread_count=4, frame_count=10)
    assert got == expected


def test_thread_count_error_and_status_above_0x7f():
    region = prefix(1, 0, 0) + b"\x02\x01\xff\x01\x80" + prefix(2, 0, 0) + b"\x00"
    with pytest.raises(FormatError) as info:
        decode_samples(region, order="<", start_time_us=0, thread_count=1, frame_count=1)
    assert info.value.message == ("Invalid thread count: sample data contains more unique "
                                  "threads than declared in header (declared 1, found at "
                                  "least 2)")
    assert (info.value.offset, info.value.record) == (18, 1)
    batch, _ = decode_samples(region[:18], order="<", start_time_us=0, thread_count=1,
                              frame_count=1)
    assert batch.status.tolist() == [0xFF, 0x80]


def test_depth_256_ok_and_pop_clamps():
    frames = b"".join(uleb(i % 5) for i in range(256))
    region = (prefix(1, 0, 1) + b"\x00\x00" + uleb(256) + frames
              + prefix(1, 0, 3) + b"\x00\x00" + uleb(1000) + b"\x01\x02")
    expected, got, _, _ = run_both(region, frame_count=10)
    assert got == expected
    assert got[-1][4] == (2,)


# ---------------------------------------------------------------------- real files
def _region(data: bytes) -> tuple[bytes, dict]:
    head = struct.unpack_from("<4sIBBBBQQQIQQII", data)
    start, count, threads, str_off, comp = head[6], head[8], head[9], head[10], head[12]
    region = data[64:str_off]
    if comp == 1:
        try:
            from compression import zstd
        except ImportError:  # Python < 3.14
            from backports import zstd
        region = zstd.decompress(region)
    num_strings, num_frames = struct.unpack_from("<II", data, len(data) - 32)
    return region, {"start": start, "count": count, "threads": threads,
                    "num_frames": num_frames, "num_strings": num_strings}


def _frame_rows(data: bytes, num_strings: int, num_frames: int) -> list[list]:
    str_off, frame_off = struct.unpack_from("<QQ", data, 40)
    p, strings = str_off, []
    for _ in range(num_strings):
        n, p = _varint(data, p, "", False)
        strings.append(data[p:p + n].decode("utf-8", "replace"))
        p += n
    rows = []
    for _ in range(num_frames):
        v = []
        for _ in range(6):
            x, p = _varint(data, p, "", False)
            v.append(x)
        z = [(x >> 1) ^ -(x & 1) for x in v[2:]]
        op = data[p]
        p += 1
        pos = [None] * 4 if z[0] == -1 else [z[0], z[0] + z[1], z[2],
                                             -1 if z[2] == -1 else z[2] + z[3]]
        rows.append([strings[v[0]], strings[v[1]], *pos, None if op == 255 else op])
    return rows


@pytest.mark.skipif(not FIXTURE_FILES, reason="shared CPython 3.15.2 fixtures not found")
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize(("chunk", "block", "dense_above", "window", "threads"),
                         [(None, None, None, None, False), (997, None, None, None, None),
                          (None, 7, 0.0, None, None), (None, None, None, 4096, True)])
def test_real_files_match_cpython_reference(path, chunk, block, dense_above, window, threads):
    data = path.read_bytes()
    region, h = _region(data)
    frames = _frame_rows(data, h["num_strings"], h["num_frames"])
    cuts = None if chunk is None else list(range(chunk, len(region), chunk))
    layout = terminators.TerminatorIndex.DENSE_ABOVE if dense_above is None else dense_above
    with (mock.patch.object(sample_codec, "SAMPLE_BLOCK", block or sample_codec.SAMPLE_BLOCK),
          mock.patch.object(sample_codec, "WINDOW", window or sample_codec.WINDOW),
          mock.patch.object(terminators.TerminatorIndex, "DENSE_ABOVE", layout)):
        expected, got, dec, _ = run_both(region, chunks=cuts, start=h["start"],
                                         thread_count=h["threads"], frame_count=h["num_frames"],
                                         threads=threads)
    assert got == expected
    assert dec.total_samples == h["count"]
    with gzip.open(path.with_suffix("").with_suffix(".ref.jsonl.gz"), "rt") as fh:
        ref = [json.loads(line) for line in fh][1:]
    assert [[i, t, ts, s, [frames[f] for f in st_]] for i, t, ts, s, st_ in got] == ref


# ---------------------------------------------------------------------- CPython itself
def _file(region: bytes, sample_count: int, thread_count: int, num_frames: int) -> bytes:
    strings = b"\x01f\x01g"
    frames = b"\x00\x01\x02\x00\x02\x00\xff" * num_frames
    str_off = 64 + len(region)
    frame_off = str_off + len(strings)
    size = frame_off + len(frames) + 32
    head = struct.pack("<4sIBBBBQQQIQQII", b"HCAT", 1, 3, 15, 2, 0, 0, 1000, sample_count,
                       thread_count, str_off, frame_off, 0, 0)
    return head + region + strings + frames + struct.pack("<IIQ16x", 2, num_frames, size)


CPYTHON_REPLAY = """
import sys
from _remote_debugging import BinaryReader
class C:
    def collect(self, s, t): pass
try:
    BinaryReader(sys.argv[1]).replay(C())
    print("ok")
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


@pytest.mark.reference
@pytest.mark.slow
def test_error_messages_match_cpython(tmp_path):
    exe = reference_python()
    if exe is None:
        pytest.skip("reference CPython 3.15 not available")
    cases = [
        prefix(1, 0, 0) + b"\x05\x01\x00",
        prefix(1, 0, 2) + b"\x00\x00\x01\x01\x05",
        prefix(1, 0, 3) + b"\x00\x00\x00" + uleb(257),
        prefix(1, 0, 1) + b"\x00\x00\x01\x80\x80\x80\x80\x10",
        prefix(1, 0, 1) + b"\x00\x00\x01\x09",
        prefix(1, 0, 1) + b"\xff" * 9 + b"\x7f\x00\x00" + prefix(1, 0, 0) + b"\x00",
    ]
    for region in cases:
        path = tmp_path / "case.bin"
        try:
            expected = model_replay(region, thread_count=1, frame_count=3)
            message = "ok"
            count = len(expected)
        except ReplayError as exc:
            message = "ValueError: " + exc.message
            count = 0
        path.write_bytes(_file(region, count, 1, 3))
        out = subprocess.run([exe, "-c", CPYTHON_REPLAY, str(path)], capture_output=True,
                             text=True, timeout=60, env={"PATH": os.environ.get("PATH", "")})
        assert out.stdout.strip() == message, region
    assert sys.byteorder in ("little", "big")
