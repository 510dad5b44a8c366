"""``read(..., strict=False)``: what is recovered from broken Tachyon files, against CPython's
own decode of the intact file (``NAME.ref.jsonl.gz``): files cut at many points, the recording
of a profiler killed with SIGKILL (real, and made by cutting real files as CPython leaves them),
a damaged statistics block."""

from __future__ import annotations

import contextlib
import json
import struct
import tracemalloc
from collections.abc import Iterator

import numpy as np
import pytest

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.errors import LimitError
from tachyon_format.formats.tachyon import zstd
from tachyon_format.formats.tachyon.region.engines import ENVIRONMENT
from tachyon_format.formats.tachyon.region.scan import decode_region
from tests.formats.tachyon import hostile_files as hostile
from tests.helpers.golden import reference_text
from tests.helpers.paths import DATA_DIR

RAW_PATH = DATA_DIR / "threads_cpu_opcodes_raw.bin"
ZSTD_PATH = DATA_DIR / "threads_wall_zstd.bin"
KILLED_PATH = DATA_DIR / "killed" / "killed_zstd.bin"


def cpython_samples(path) -> list[list]:
    """CPython's replay of the intact file: [interpreter_id, thread_id, timestamp_us, status,
    frames] per sample."""
    return [json.loads(line) for line in reference_text(path).splitlines()[1:]]


def rows(profile) -> list[list]:
    """[interpreter_id, thread_id, timestamp_us, status] per sample."""
    s, t = profile.samples, profile.threads
    return [[int(t.interpreter_id[r]), int(t.thread_id[r]), int(ts), int(st)]
            for r, ts, st in zip(s.thread, s.timestamp_us, s.status, strict=True)]


def frame_ids(profile) -> list[list[int]]:
    return [profile.stack_frames(int(stack)).tolist() for stack in profile.samples.stack]


def names(profile, n: int | None = None) -> list[list[str]]:
    """The function names of the first *n* samples' stacks (all by default)."""
    return [[profile.strings[profile.frames.funcname[f]] for f in profile.stack_frames(int(s))]
            for s in profile.samples.stack[:n]]


def salvage(data: bytes):
    profile = tachyon_format.read(data, strict=False)
    problems = profile.extras["salvage"]
    assert problems and problems[0].fatal  # first: why a strict read fails
    assert all(not p.fatal for p in problems[1:])
    with pytest.raises(FormatError, match=problems[0].message.split(":")[0]):
        tachyon_format.read(data, format="tachyon")  # strict stays the default, and fails
    return profile, problems


def test_a_file_that_reads_is_read_as_usual():
    strict = tachyon_format.read(RAW_PATH)
    lenient = tachyon_format.read(RAW_PATH, strict=False)
    assert lenient.extras["salvage"] == []
    assert rows(lenient) == rows(strict) and frame_ids(lenient) == frame_ids(strict)


def test_other_formats_accept_strict_false(tmp_path):
    out = tmp_path / "p.collapsed"
    tachyon_format.convert(RAW_PATH, out)
    profile = tachyon_format.read(out, strict=False)
    assert profile.extras["salvage"] == []
    assert profile.weights().sum() == len(tachyon_format.read(RAW_PATH).samples.stack)


@pytest.mark.parametrize("path", [RAW_PATH, DATA_DIR / "cpu_bound_nogc_native_raw.bin"],
                         ids=lambda p: p.name)
def test_cut_inside_the_region_keeps_every_whole_record(path):
    data = path.read_bytes()
    intact = tachyon_format.read(data)
    reference = cpython_samples(path)
    records = intact.extras["tachyon"].records
    region_end = int.from_bytes(data[40:48], "little") - 64
    ends = np.r_[records.offset[1:], region_end]
    some = ends[:: max(1, len(ends) // 12)]  # a dozen record ends, and a byte either side
    boundaries = sorted({int(x) for e in some for x in (e - 1, e, e + 1) if 0 < x < region_end})
    reference_rows = [r[:4] for r in reference]
    intact_ids = frame_ids(intact)
    for cut in boundaries:
        profile, problems = salvage(data[:64 + cut])
        whole = int(np.searchsorted(ends, cut, side="right"))  # records ending by the cut
        expected = (int(records.first_sample[whole]) if whole < len(records)
                    else len(reference))
        assert rows(profile) == reference_rows[:expected], cut
        assert ids_by_name(profile) == intact_ids[:expected], cut
        assert any("ends inside the sample region" in p.message for p in problems)


def ids_by_name(profile) -> list[list[int]]:
    """Without a frame table, frames are numbered anew: '<frame N>' keeps the file's id N."""
    ids = {}
    for stack in set(profile.samples.stack.tolist()):
        ids[stack] = [int(profile.strings[profile.frames.funcname[f]].strip("<>").split()[1])
                      for f in profile.stack_frames(stack)]
    return [ids[stack] for stack in profile.samples.stack.tolist()]


def test_cut_inside_the_tables_keeps_every_sample_and_the_names_that_parse():
    data = RAW_PATH.read_bytes()
    reference = cpython_samples(RAW_PATH)
    frames_at = int.from_bytes(data[48:56], "little")
    for cut in (frames_at - 3, frames_at + 40, len(data) - 60, len(data) - 10):
        profile, _ = salvage(data[:cut])
        assert rows(profile) == [r[:4] for r in reference]
        got = names(profile)
        for stack, sample in zip(got, reference, strict=True):
            for name, frame in zip(stack, sample[4], strict=True):
                assert name == frame[1] or name.startswith("<"), (cut, name, frame)
        if cut > frames_at + 7:
            assert any(name == sample[4][0][1] for stack, sample in zip(got, reference,
                                                                       strict=True)
                       for name in stack[:1])


def test_zstd_cut_anywhere_gives_a_prefix():
    data = ZSTD_PATH.read_bytes()
    reference = [r[:4] for r in cpython_samples(ZSTD_PATH)]
    region_end = int.from_bytes(data[40:48], "little")
    counts = []
    for cut in range(80, region_end, max(1, (region_end - 80) // 20)):
        profile, problems = salvage(data[:cut])
        got = rows(profile)
        assert got == reference[:len(got)], cut
        counts.append(len(got))
        assert any("zstd data ends" in p.message for p in problems)
    assert counts == sorted(counts)
    # (zstd hands out a block only once it is whole: this small region is one block)
    profile, _ = salvage(data[:region_end + 5])
    assert rows(profile) == reference


def killed_copy(data: bytes) -> bytes:
    """The file as CPython's writer leaves it when killed after flushing the records: the
    64-byte zero placeholder header, then the sample region; no tables, no footer."""
    return bytes(64) + data[64:int.from_bytes(data[40:48], "little")]


@pytest.mark.parametrize("path", [RAW_PATH, ZSTD_PATH, DATA_DIR / "synthetic_edges_raw.bin"],
                         ids=lambda p: p.name)
def test_a_killed_recording_made_from_a_real_file(path):
    data = path.read_bytes()
    intact = tachyon_format.read(data)
    start = int.from_bytes(data[12:20], "little")
    profile, problems = salvage(killed_copy(data))
    reference = cpython_samples(path)
    assert [[i, t, (ts - start) % 2**64, s] for i, t, ts, s, _ in reference] == rows(profile)
    assert ids_by_name(profile) == frame_ids(intact)
    assert "the profiler was killed before it finished writing" in problems[0].message
    assert any("names are missing" in p.message for p in problems)


def test_the_real_killed_recording():
    """Killed with SIGKILL mid-run (tests/data/killed/README.md): the samples recovered are the
    reference decoder's (plain Python, one record at a time) on the decompressed region up to
    the last whole record."""
    data = KILLED_PATH.read_bytes()
    profile, problems = salvage(data)
    lost = next(p for p in problems if "cut short" in p.message)
    region = b""
    try:
        for chunk in zstd.iter_decompress(data[64:]):
            region += bytes(chunk)
    except FormatError as exc:
        assert "Incomplete zstd frame" in exc.message
    assert lost.offset < len(region) and "zstd data ends" in problems[1].message
    scanned = decode_region(region[:lost.offset], order="<", start_time_us=0,
                            thread_count=2**32 - 1, frame_count=2**32)
    assert profile.samples.timestamp_us.tolist() == scanned.batch.timestamp_us.tolist()
    assert profile.samples.status.tolist() == scanned.batch.status.tolist()
    assert len(profile.samples.stack) > 100_000 and len(profile.threads) == 1
    ts = profile.samples.timestamp_us.astype(np.int64)
    assert (np.diff(ts) > 0).all()  # one thread, sampled at 20 kHz
    assert {name for stack in names(profile, 1000) for name in stack} <= {
        f"<frame {i}>" for i in range(len(profile.frames))}
    problems_found = tachyon_format.validate(KILLED_PATH)
    assert problems_found[0].fatal and "killed" in problems_found[0].message
    assert f"recovers {len(profile.samples.stack)} samples of 1 thread" in problems_found[1].message


def test_a_damaged_statistics_block_is_left_out():
    data = RAW_PATH.read_bytes()
    stats_at = len(data) - 32 - 56
    broken = data[:stats_at] + struct.pack("<d", float("nan")) + data[stats_at + 8:]
    profile, problems = salvage(broken)
    intact = tachyon_format.read(data)
    assert rows(profile) == rows(intact) and names(profile) == names(intact)
    assert profile.extras["tachyon"].info["duration_sec"] is None
    assert intact.extras["tachyon"].info["duration_sec"] is not None
    assert problems[0].message == "Invalid profiling statistics values"
    assert any("statistics block is damaged" in p.message for p in problems)


def test_aggregate_salvage_counts_the_same_samples():
    data = killed_copy(RAW_PATH.read_bytes())
    full = tachyon_format.read(data, strict=False)
    counted = tachyon_format.read(data, strict=False, aggregate=True)
    assert counted.weights().sum() == len(full.samples.stack)
    assert counted.extras["salvage"][0].fatal


def test_nothing_to_recover_raises():
    with pytest.raises(FormatError, match="not a profile"):
        tachyon_format.read(b"garbage " * 20, strict=False)
    with pytest.raises(FormatError, match="nothing can be recovered"):
        tachyon_format.read(b"HCAT" + bytes(20), strict=False, format="tachyon")


# -- the limits of strict reading hold in salvage too (issue 21) -----------------------------

MIB = 1 << 20
ENGINES = ["numpy", *(["compiled"] if tachyon_format.decoder_info()["compiled"] else [])]


@contextlib.contextmanager
def peak_traced(bound: int) -> Iterator[None]:
    """Fail unless the memory traced inside (numpy's arrays included) peaks below *bound*."""
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < bound, peak


def region_of(data: bytes) -> bytes:
    """The sample region of a little-endian file, as stored."""
    return data[64:int.from_bytes(data[40:48], "little")]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """The decoder of the strict read that salvage tries first."""
    monkeypatch.setenv(ENVIRONMENT, request.param)
    return request.param


@pytest.mark.parametrize("compressed", [False, True])
def test_a_repeat_count_beyond_the_region_is_refused_as_strict_reading_does(engine,
                                                                            compressed):
    data = hostile.rle_count_u32_max(compressed=compressed)
    left = ((256 << 10) + 200 - 18) // 2
    message = f"Invalid RLE count {2**32 - 1} exceeds maximum possible {left}"
    with peak_traced(16 * MIB):
        profile, problems = salvage(data)
    assert problems[0].message == message
    assert len(profile.samples) == 0
    assert f"a broken record ({message})" in problems[1].message


def test_a_killed_recording_ending_in_a_long_repeat_keeps_its_entries(engine):
    """No header gives the region's size: the REPEAT is cut short, its entries kept (the
    last chunk, empty, once raised IndexError)."""
    region = hostile.repeat_head(2**32 - 1) + bytes(2 * 200_000)
    with peak_traced(32 * MIB):
        profile = tachyon_format.read(hostile.killed(region), strict=False)
    assert len(profile.samples) == 200_000
    lost = profile.extras["salvage"][1]
    assert lost.message == ("the sample region holds a record cut short: the entries before "
                            "the problem are kept, the rest of the record is lost")
    assert (lost.offset, lost.file_offset) == (0, 64)


@pytest.mark.parametrize("killed", [False, True])
def test_a_frame_index_near_2_31_costs_no_table_of_that_size(engine, killed):
    data = hostile.frame_index(2**31 - 1)
    if killed:
        data = hostile.killed(region_of(data))
    with peak_traced(8 * MIB):
        profile = tachyon_format.read(data, strict=False)
    first = profile.extras["salvage"][0]
    assert ("killed" in first.message) if killed else (
        first.message == "Invalid frame index: 2147483647")
    assert names(profile) == [["<frame 2147483647>"]]
    assert tachyon_format.read(hostile.frame_index(2**31), strict=False).samples.stack.size == 0


@pytest.mark.parametrize("killed", [False, True])
def test_a_zstd_bomb_is_refused_at_the_region_cap(engine, killed):
    data = hostile.bomb(64 * MIB)
    if killed:
        data = hostile.killed(region_of(data))
    with peak_traced(20 * MIB), pytest.raises(FormatError) as raised:
        tachyon_format.read(data, strict=False, max_region_size=8 * MIB)
    assert raised.value.message == "Decompressed data exceeds maximum size"
    assert raised.value.path == "sample_region (zstd)"


def test_more_rows_than_max_samples_raise_the_limit_error():
    data = bytearray(hostile.many_samples(300_000))
    data[28:36] = (5).to_bytes(8, "little")  # strict reading fails on the count, then salvage
    with peak_traced(24 * MIB), pytest.raises(LimitError) as raised:
        tachyon_format.read(bytes(data), strict=False, max_samples=100_000)
    assert (raised.value.limit, raised.value.value) == ("max_samples", 100_000)
    assert len(tachyon_format.read(bytes(data), strict=False).samples) == 300_000


def test_validate_of_a_killed_bomb_reports_and_stays_bounded():
    data = hostile.killed(hostile.zstd_frame((0, 2 * zstd.MAX_DECOMPRESSED_SIZE)))
    with peak_traced(160 * MIB):
        problems = tachyon_format.validate(data)
    assert problems[0].fatal and "killed" in problems[0].message


@pytest.mark.slow
@pytest.mark.parametrize("killed", [False, True])
def test_the_issues_files_at_full_size(killed):
    """The 262 KB file of a REPEAT of 2**32 - 1 entries (a killed recording's region as
    written, not compressed: its REPEAT cut short), and the 8 GiB zstd bomb."""
    data = hostile.rle_count_u32_max(compressed=not killed)
    with peak_traced(32 * MIB):
        profile = tachyon_format.read(hostile.killed(region_of(data)) if killed else data,
                                      strict=False)
    assert len(profile.samples) == (131_163 if killed else 0)
    data = hostile.bomb()
    with peak_traced(160 * MIB), pytest.raises(FormatError, match="exceeds maximum size"):
        tachyon_format.read(hostile.killed(region_of(data)) if killed else data, strict=False)
