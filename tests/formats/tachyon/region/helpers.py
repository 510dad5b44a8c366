"""Shared by the region tests: region and file builders, random record streams, and the
comparison of the vectorised decoder with the reference decoder (``region.scan``)."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.file import frame_strings_ok, open_file
from tachyon_format.formats.tachyon.region.decoder import SampleDecoder
from tachyon_format.formats.tachyon.region.scan import DecodedRegion, decode_region
from tachyon_format.model import Profile, Records, Samples, Stacks, Threads
from tachyon_format.render.canonical import write_canonical
from tests.helpers.models import U64, canonical

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
def tachyon_file(region: bytes, *, sample_count: int, thread_count: int,
                 num_frames: int) -> bytes:
    """An uncompressed little-endian file around *region*: two strings, and frames whose
    line numbers are their indices plus one."""
    strings = b"\x01f\x01g"
    frames = b"".join(bytes([0, 1]) + uleb(2 * (i + 1)) + b"\x00\x02\x00\xff"
                      for i in range(num_frames))
    str_off = 64 + len(region)
    frame_off = str_off + len(strings)
    size = frame_off + len(frames) + 32
    head = struct.pack("<4sIBBBBQQQIQQII", b"HCAT", 1, 3, 15, 2, 0, 0, 1000, sample_count,
                       thread_count, str_off, frame_off, 0, 0)
    return head + region + strings + frames + struct.pack("<IIQ16x", 2, num_frames, size)


def file_arguments(path: Path | str | bytes) -> tuple[bytes, dict, object]:
    """(decompressed region, the decoders' keyword arguments, the opened file) of a file."""
    meta = open_file(path)
    region = bytes(meta.region())
    kwargs = {"order": meta.order, "start_time_us": meta.start_time_us,
              "thread_count": meta.thread_count, "frame_count": len(meta.frames),
              "frame_string_ok": frame_strings_ok(meta.frames, len(meta.strings))}
    return region, kwargs, meta


def reference_canonical(path: Path | str | bytes) -> str:
    """CPython's canonical decode (tests/data/README.md) as the reference decoder gives it."""
    region, kwargs, meta = file_arguments(path)
    ref = decode_region(region, **kwargs)
    b = ref.batch
    profile = Profile(
        info=meta.info(), strings=meta.strings, frames=meta.frames,
        threads=Threads(interpreter_id=ref.threads[0], thread_id=ref.threads[1]),
        stacks=Stacks(frame=ref.stack_frame, parent=ref.stack_parent),
        samples=Samples(timestamp_us=b.timestamp_us, thread=b.thread, status=b.status,
                        stack=b.stack),
        records=Records(offset=b.record_offset, encoding=b.record_encoding,
                        first_sample=b.record_first_sample))
    out = io.StringIO()
    write_canonical(profile, out)
    return out.getvalue()


# ---------------------------------------------------------------------- comparison
def reference_or_error(region: bytes, **kwargs) -> DecodedRegion | tuple:
    """The reference decode, or ``("error", message, offset, record)``."""
    try:
        return decode_region(region, **kwargs)
    except FormatError as exc:
        return ("error", exc.message, exc.offset, exc.record)


def vectorised_or_error(region: bytes, chunks: list[int] | None = None,
                        threads: bool | None = None, **kwargs) -> DecodedRegion | tuple:
    """The vectorised decode (fed in chunks cut at *chunks*), as a :class:`DecodedRegion`,
    or ``("error", message, offset, record)``."""
    dec = SampleDecoder(**kwargs, threads=threads)
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


def compare(region: bytes, *, chunks=None, threads=None, **kwargs):
    """The reference and the vectorised decode of *region* must be equal; returns the
    reference's."""
    expected = reference_or_error(region, **kwargs)
    assert_same(vectorised_or_error(region, chunks=chunks, threads=threads, **kwargs),
                expected)
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
