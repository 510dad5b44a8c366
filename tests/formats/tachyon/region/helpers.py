"""Shared by the region tests: region and file builders, random record streams, and the
comparison of every decoder of the region (the numpy decoder, the record walk compiled where
it is built and interpreted) with the reference decoder (``region.scan``)."""

from __future__ import annotations

import gzip
import json
import re
import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon import zstd
from tachyon_format.formats.tachyon.region import engines, replay_checks
from tachyon_format.formats.tachyon.region.decoder import frames_of
from tachyon_format.formats.tachyon.region.replay_checks import ReplayCheck
from tachyon_format.formats.tachyon.region.scan import DecodedRegion, decode_region
from tests.helpers.models import U64, canonical, scalar_uleb128

uleb = canonical


def prefix(tid: int, iid: int, enc: int, order: str = "<") -> bytes:
    return struct.pack(order + "QIB", tid, iid, enc)


GENERIC = "Invalid or incomplete varint in binary data"
ERROR_CASES = [  # (region, CPython's message), with 4 threads and 10 frames allowed
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
    (prefix(1, 0, 0) + b"\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",
     "Malformed varint in RLE sample data"),
    (prefix(1, 0, 1) + b"\x00\x00\x01\x80\x80\x80\x80\x10", GENERIC),
    (prefix(1, 0, 0) + b"\x80", "Malformed varint for RLE count"),
    (prefix(1, 0, 1) + b"\xff" * 9 + b"\x7f\x00\x00"
     + prefix(1, 0, 1) + b"\x80" * 10 + b"\x00\x00\x00", "Malformed varint in sample data"),
    (prefix(1, 0, 0) + b"\x00" + prefix(2, 0, 0) + b"\x00" + prefix(3, 0, 0) + b"\x00"
     + prefix(4, 0, 0) + b"\x00" + prefix(5, 0, 0) + b"\x00",
     "Invalid thread count: sample data contains more unique threads than declared in "
     "header (declared 4, found at least 5)"),
]


# ---------------------------------------------------------------------- files
def tachyon_file(region: bytes, *, sample_count: int, thread_count: int = 1,
                 num_frames: int = 1, compressed: bool = False) -> bytes:
    """A little-endian file around *region* (stored as given: already a zstd frame when
    *compressed*): two strings, and frames whose line numbers are their indices plus one."""
    strings = b"\x01f\x01g"
    frames = b"".join(bytes([0, 1]) + uleb(2 * (i + 1)) + b"\x00\x02\x00\xff"
                      for i in range(num_frames))
    str_off = 64 + len(region)
    frame_off = str_off + len(strings)
    size = frame_off + len(frames) + 32
    head = struct.pack("<4sIBBBBQQQIQQII", b"HCAT", 1, 3, 15, 2, 0, 0, 1000, sample_count,
                       thread_count, str_off, frame_off, int(compressed), 0)
    return head + region + strings + frames + struct.pack("<IIQ16x", 2, num_frames, size)


class RegionFile(NamedTuple):
    """A Tachyon file's sample region and what the region decoders need to know of it,
    parsed here from the bytes (only the package's zstd reader is used), so that these
    tests do not depend on the file and profile layers."""

    region: bytes  # decompressed
    kwargs: dict  # the decoders' keyword arguments
    sample_count: int  # the header's
    frame_rows: list  # per frame: [filename, funcname, lineno, end_lineno, column,
    # end_column, opcode] as CPython's replay() gives them (tests/data/README.md)


def region_file(path: Path | str) -> RegionFile:
    data = Path(path).read_bytes()
    order = {b"HCAT": "<", b"TACH": ">"}[data[:4]]
    (start, count, threads, str_off, frame_off,
     compression) = struct.unpack_from(order + "12xQ8xQIQQI", data)
    region = data[64:str_off]
    if compression == 1:
        region = bytes(zstd.decompress(region))
    num_strings, num_frames = struct.unpack_from(order + "II", data, len(data) - 32)
    p, strings = str_off, []
    for _ in range(num_strings):
        n, p = scalar_uleb128(data, p)
        strings.append(data[p:p + n].decode("utf-8", "replace"))  # (as CPython does)
        p += n
    p, rows, ok = frame_off, [], []
    for _ in range(num_frames):
        v = []
        for _ in range(6):
            x, p = scalar_uleb128(data, p)
            v.append(x)
        line, line_delta, column, column_delta = ((x >> 1) ^ -(x & 1) for x in v[2:])
        opcode = data[p]
        p += 1
        location = ([None] * 4 if line == -1 else  # ends in C's int32 arithmetic
                    [line, _int32(line + line_delta), column,
                     -1 if column == -1 else _int32(column + column_delta)])
        ok.append(v[0] < num_strings and v[1] < num_strings)
        names = [strings[i] if i < num_strings else None for i in v[:2]]
        rows.append([*names, *location, None if opcode == 255 else opcode])
    kwargs = {"order": order, "start_time_us": start, "thread_count": threads,
              "frame_count": num_frames, "frame_string_ok": np.array(ok, bool)}
    return RegionFile(region, kwargs, count, rows)


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def reference_decode(path: Path | str) -> list:
    """The samples of a file as the reference decoder gives them, in the form of CPython's
    decode (tests/data/README.md): ``[interpreter_id, thread_id, timestamp_us, status,
    frames]``, frames innermost first."""
    f = region_file(path)
    out = decode_region(f.region, **f.kwargs)
    iids, tids = (ids.tolist() for ids in out.threads)
    b = out.batch
    return [[iids[t], tids[t], ts, status,
             [f.frame_rows[i] for i in frames_of(out.stack_frame, out.stack_parent, s)]]
            for t, ts, status, s in zip(b.thread.tolist(), b.timestamp_us.tolist(),
                                        b.status.tolist(), b.stack.tolist(), strict=True)]


def stored_rows(path: Path) -> list:
    """CPython's decode of a golden file (its ``.ref.jsonl.gz``), but the info line."""
    with gzip.open(path.with_name(path.stem + ".ref.jsonl.gz"), "rt") as fh:
        return [json.loads(line) for line in fh.readlines()[1:]]


# ---------------------------------------------------------------------- comparison
def reference_or_error(region: bytes, **kwargs) -> DecodedRegion | tuple:
    """The reference decode, or ``("error", message, offset, record)``."""
    try:
        return decode_region(region, **kwargs)
    except FormatError as exc:
        return ("error", exc.message, exc.offset, exc.record)


DECODERS = ["numpy", "interpreted", *(["compiled"] if engines.decoder_info()["compiled"]
                                      else [])]
"""The decoders under test: every one this installation has."""


def decoded_or_error(region: bytes, chunks: list[int] | None = None,
                     threads: bool | None = None, engine: str = "numpy",
                     **kwargs) -> DecodedRegion | tuple:
    """The decode of *engine* (fed in chunks cut at *chunks*), as a :class:`DecodedRegion`,
    or ``("error", message, offset, record)``."""
    dec = engines.new_decoder(engine=engine, **kwargs, threads=threads)
    try:
        if chunks is None:
            batches = [dec.decode(region, final=True)]
        else:
            batches, pos = [], 0
            for cut in chunks:
                batches.append(dec.decode(region[pos:cut], final=False))
                pos = cut
            batches.append(dec.decode(region[pos:], final=True))
    except FormatError as exc:
        return ("error", exc.message, exc.offset, exc.record)
    columns = {}
    before = 0
    for name in ("timestamp_us", "thread", "status", "stack", "record_offset",
                 "record_encoding", "record_first_sample"):
        parts = []
        before = 0
        for b in batches:
            part = getattr(b, name)
            parts.append(part + before if name == "record_first_sample" else part)
            before += len(b)
        columns[name] = np.concatenate(parts)
    batch = type(batches[0])(**columns)
    return DecodedRegion(batch, dec.threads, dec.stack_frame, dec.stack_parent, dec.stats)


def assert_same(got, expected) -> None:
    """Equal decodes, array for array (dtypes too), or equal errors."""
    if not (isinstance(got, DecodedRegion) and isinstance(expected, DecodedRegion)):
        assert got == expected  # (errors)
        return
    for name in ("timestamp_us", "thread", "status", "stack", "record_offset",
                 "record_encoding", "record_first_sample"):
        g, e = getattr(got.batch, name), getattr(expected.batch, name)
        assert g.dtype == e.dtype, name
        assert g.tolist() == e.tolist(), name
    for g, e in zip(got.threads, expected.threads, strict=True):
        assert (g.dtype, g.tolist()) == (e.dtype, e.tolist())
    assert got.stack_frame.tolist() == expected.stack_frame.tolist()
    assert got.stack_parent.tolist() == expected.stack_parent.tolist()
    assert (got.stack_frame.dtype, got.stack_parent.dtype) == (np.int32, np.int32)
    assert got.stats == expected.stats


def compare(region: bytes, *, chunks=None, threads=None, decoders=DECODERS, **kwargs):
    """The reference's decode of *region* and every decoder's must be equal; returns the
    reference's."""
    expected = reference_or_error(region, **kwargs)
    for engine in decoders:
        got = decoded_or_error(region, chunks=chunks, threads=threads, engine=engine, **kwargs)
        try:
            assert_same(got, expected)
        except AssertionError as exc:
            raise AssertionError(f"the {engine} decoder differs: {exc}") from exc
    return expected


# ---------------------------------------------------------------------- random streams
FRAMES = st.integers(0, 40)


@st.composite
def record(draw, order="<", invalid=False):
    """One record (bytes): any encoding, thread and interpreter; deltas of any width and
    statuses of any value; SUFFIX and POP_PUSH counts that may exceed the depth; with
    *invalid*, damaged (cut short, a bad encoding, a varint run too long, too deep...)."""
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
def stream(draw, order="<", max_records=25):
    """A region: valid records, and now and then one damaged record among them."""
    recs = draw(st.lists(record(order), max_size=max_records))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(recs)))
        recs.insert(at, draw(record(order, invalid=True)))
    return b"".join(recs)


@st.composite
def valid_stream(draw, order="<", max_records=25):
    """A region of mostly valid records: SUFFIX and POP_PUSH counts drawn within each
    thread's depth (SUFFIX with no new frame too), now and then a stack 200 to 256 deep;
    and now and then one damaged record."""
    depth: dict[tuple[int, int], int] = {}
    recs = []
    for _ in range(draw(st.integers(0, max_records))):
        tid, iid = draw(st.sampled_from([(1, 0), (2, 0), (U64, 0), (1, 1)]))
        d = depth.get((tid, iid), 0)
        enc = draw(st.integers(0, 3))
        body = bytearray()
        delta = draw(st.one_of(st.integers(0, 3000), st.integers(0, U64)))
        status = draw(st.one_of(st.integers(0, 0x7F), st.integers(0, 255)))
        if enc == 0:
            n = draw(st.integers(0, 5))
            body += uleb(n) + (uleb(delta) + bytes([status])) * n
        else:
            body += uleb(delta) + bytes([status])
            arg = draw(st.integers(0, d + 2 if enc == 3 else d))  # shared, or pop
            keep = {1: 0, 2: arg, 3: max(d - arg, 0)}[enc]
            if draw(st.integers(0, 9)) == 0:  # deep
                frames = [i % 41 for i in range(draw(st.integers(200 - keep, 256 - keep)))]
            else:
                frames = draw(st.lists(FRAMES, max_size=min(8, 256 - keep)))
            body += uleb(len(frames)) if enc == 1 else uleb(arg) + uleb(len(frames))
            body += b"".join(uleb(f) for f in frames)
            depth[(tid, iid)] = keep + len(frames)
        recs.append(prefix(tid, iid, enc, order) + bytes(body))
    if draw(st.integers(0, 3)) == 0:
        recs.insert(draw(st.integers(0, len(recs))), draw(record(order, invalid=True)))
    return b"".join(recs)


def regions(order="<", max_records=25):
    """Random regions: records drawn with no regard to the threads' depths, or mostly
    valid ones."""
    return st.one_of(stream(order, max_records), valid_stream(order, max_records))


def check_of(message: str) -> ReplayCheck:
    """The declared check (region/replay_checks.py) whose message *message* is."""
    (check,) = [c for c in replay_checks.CHECKS
                if re.fullmatch(re.sub(r"\\\{\d\\\}", r"\\d+", re.escape(c.message)), message)]
    return check
