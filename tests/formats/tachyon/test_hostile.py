"""Input built to hurt the Tachyon reader (issue 13, "Hostile input"): every class ends in
seconds, in bounded memory, with a FormatError (or the documented LimitError) or a correct
result, for read, iter_batches, read(aggregate=True), validate and info alike; and a
hypothesis suite of structured mutations of the golden files (tests/formats/tachyon/
mutations.py) under the same bounds. docs/format/limits.md describes the limits.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.errors import LimitError
from tachyon_format.formats.tachyon import zstd
from tachyon_format.formats.tachyon.region import decoder
from tachyon_format.formats.tachyon.region.engines import ENVIRONMENT
from tests.formats.tachyon import hostile_files as hostile
from tests.formats.tachyon import mutations
from tests.formats.tachyon.region.helpers import (
    DECODERS,
    assert_same,
    decoded_or_error,
    reference_or_error,
    region_file,
)
from tests.formats.tachyon.test_differential import ENGINES, ours, theirs, verdict
from tests.helpers.bounds import Bounded
from tests.helpers.docs_pages import links_resolve, run_examples
from tests.helpers.paths import REPO
from tests.helpers.reference import requires_reference

MIB = 1 << 20
NO_PROGRESS = ("zstd decompression error: Operation made no progress over multiple calls, due"
               " to output buffer being full")




def outcome(verb: str, data, **options) -> tuple[str, object, Bounded]:
    """``("ok", result)`` or ``("error", FormatError)`` of one verb, and its bounds; any
    other exception propagates (a test failure)."""
    with Bounded() as bounds:
        try:
            if verb == "read":
                result: object = len(tachyon_format.read(data, **options).samples)
            elif verb == "aggregate":
                result = int(tachyon_format.read(data, aggregate=True,
                                                 **options).samples.values.sum())
            elif verb == "iter_batches":
                result = sum(len(b.samples) for b in tachyon_format.iter_batches(data, **options))
            elif verb == "info":
                result = tachyon_format.info(data)
            else:
                result = tachyon_format.validate(data, **options)
        except FormatError as exc:
            return "error", exc, bounds
    return "ok", result, bounds


READING = ["read", "aggregate", "iter_batches", "validate"]


def fatal_only(result: tuple) -> tuple:
    """An outcome's kind and result, with validate's problems narrowed to those that make the
    file unreadable (a made-up file may also be inconsistent, e.g. in its thread count)."""
    kind, value = result[0], result[1]
    if kind == "ok" and isinstance(value, list):
        value = [problem for problem in value if problem.fatal]
    return kind, value


def assert_error(verb: str, data: bytes, message: str, *, seconds: float = 5,
                 peak: int = 64 * MIB, **options) -> None:
    """Every reading verb fails with *message* (validate reports it) within the bounds."""
    kind, result, bounds = outcome(verb, data, **options)
    if verb == "validate":
        assert kind == "ok" and any(p.fatal and message in str(p) for p in result), result
    else:
        assert kind == "error" and result.message.startswith(message), result
    assert bounds.seconds < seconds, bounds.seconds
    assert bounds.peak < peak, bounds.peak


# -- the classes of the issue, at a size CI affords -------------------------------------------

@pytest.mark.parametrize("verb", READING)
def test_a_declared_count_the_region_cannot_hold_allocates_nothing(verb):
    data = hostile.declared_2_29_samples()
    assert_error(verb, data, "Sample count mismatch: header declares 536870912 samples but"
                 " replay decoded 1", peak=24 * MIB)  # (iter_batches: a batch of 1 M rows)
    assert tachyon_format.info(data)["sample_count"] == 2**29  # (CPython's get_info says so)


@pytest.mark.parametrize("verb", READING)
def test_a_repeat_count_beyond_the_region_fails_at_once(verb):
    head = hostile.repeat_head(2**31)
    region = 16 * MIB
    data = hostile.tachyon_file(hostile.zstd_frame(head, (0, region - len(head))),
                                sample_count=5)
    left = (region - len(head)) // 2
    assert_error(verb, data, f"Invalid RLE count {2**31} exceeds maximum possible {left}")


@pytest.mark.parametrize("verb", READING)
def test_a_zstd_bomb_stops_at_the_region_cap(verb):
    data = hostile.bomb(64 * MIB)
    assert_error(verb, data, "Decompressed data exceeds maximum size",
                 max_region_size=8 * MIB, peak=20 * MIB)  # (the last chunk, and its copy)


def test_the_region_cap_is_cpythons_by_default():
    assert zstd.MAX_DECOMPRESSED_SIZE == 2**30
    data = hostile.zero_count_repeats(64 * MIB)  # valid: empty REPEATs
    size = 64 * MIB - 64 * MIB % 14
    assert outcome("read", data, max_region_size=size)[0:2] == ("ok", 0)
    assert_error("read", data, "Decompressed data exceeds maximum size",
                 max_region_size=size - 1, seconds=10, peak=160 * MIB)


@pytest.mark.parametrize("verb", READING)
def test_many_empty_repeats_are_read_in_bounded_time(verb):
    data = hostile.zero_count_repeats(32 * MIB)
    kind, result, bounds = outcome(verb, data)
    assert (kind, result) == ("ok", [] if verb == "validate" else 0)
    assert bounds.seconds < 10
    if verb in ("iter_batches", "validate"):  # (read keeps a record row each: 17 bytes)
        assert bounds.peak < 96 * MIB  # the region (16 MiB at most is kept), 1 M records


def test_empty_repeats_count_as_records():
    data = hostile.zero_count_repeats(14 * 100_000)
    facts = tachyon_format.read(data).extras["tachyon"]
    assert facts.records.offset.tolist() == list(range(0, 14 * 100_000, 14))
    assert facts.info["sample_count"] == 0
    batches = [len(b.extras["tachyon"].records.offset)
               for b in tachyon_format.iter_batches(data, samples_per_batch=300)]
    assert sum(batches) == 100_000
    assert max(batches) <= 300 + (64 << 10) // 14  # a batch, and what one chunk holds


def test_more_samples_than_the_limit_names_the_keyword_and_iter_batches():
    data = hostile.many_samples(3_000_000)
    with Bounded() as bounds, pytest.raises(LimitError) as raised:
        tachyon_format.read(data, max_samples=1_000_000)
    assert bounds.peak < 24 * MIB  # refused before the columns (51 MB) are allocated
    error = raised.value
    assert (error.limit, error.value) == ("max_samples", 1_000_000)
    assert "max_samples=1000000" in error.message and "iter_batches()" in error.message
    assert error.message.startswith("The header declares 3000000 samples")


def test_more_decoded_samples_than_the_limit_stop_the_read():
    """The header understates the count: the limit still holds while decoding."""
    data = bytearray(hostile.many_samples(3_000_000))
    data[28:36] = (5).to_bytes(8, "little")
    with Bounded() as bounds, pytest.raises(LimitError, match="more than 1000000 samples"):
        tachyon_format.read(bytes(data), max_samples=1_000_000)
    assert bounds.peak < 200 * MIB


def test_a_long_repeat_is_read_batch_by_batch_and_equals_read():
    """One REPEAT of 1 M samples (2 MB) is longer than iter_batches' chunks: its entries are
    decoded as they arrive, in memory bounded by the batch."""
    count = 1_000_000
    head = hostile.repeat_head(count)
    entries = np.zeros((count, 2), np.uint8)
    entries[:, 0] = np.arange(count) % 100  # deltas
    entries[::7, 1] = 0x81  # statuses, some >= 0x80
    data = hostile.tachyon_file(hostile.zstd_frame(head + entries.tobytes()),
                                sample_count=count)
    whole = tachyon_format.read(data)
    assert whole.extras["tachyon"].records.offset.tolist() == [0]
    expected = np.cumsum(entries[:, 0], dtype=np.uint64)
    np.testing.assert_array_equal(whole.samples.timestamp_us, expected)
    np.testing.assert_array_equal(whole.samples.status, entries[:, 1])
    del whole
    done = 0
    with Bounded() as bounds:
        for batch in tachyon_format.iter_batches(data, samples_per_batch=100_000):
            n = len(batch.samples)
            assert n <= 100_000 + 100_000  # a batch, and what one chunk holds
            assert (batch.samples.timestamp_us == expected[done:done + n]).all()
            assert (batch.samples.status == entries[done:done + n, 1]).all()
            done += n
    assert done == count
    assert bounds.peak < 16 * MIB  # the 2 MB region is kept; batches of 1.7 MB
    aggregated = tachyon_format.read(data, aggregate=True)
    assert int(aggregated.samples.values.sum()) == count


def test_a_long_repeat_with_wide_deltas_and_a_malformed_one():
    count = 100_000
    wide = bytes([0x81, 0x01, 0x02])  # delta 129, status 2
    data = hostile.tachyon_file(hostile.repeat_head(count) + wide * count,
                                sample_count=count, compressed=False)
    ts = tachyon_format.read(data, chunk_size=16 << 10).samples.timestamp_us
    np.testing.assert_array_equal(ts, 129 * np.arange(1, count + 1, dtype=np.uint64))
    bad = hostile.repeat_head(count) + wide * 80_000 + b"\xff" * 11 + b"\x01\x00" + (
        wide * (count - 80_001))
    with pytest.raises(FormatError, match="Malformed varint in RLE sample data"):
        tachyon_format.read(hostile.tachyon_file(bad, sample_count=count, compressed=False),
                            chunk_size=16 << 10)
    short = hostile.repeat_head(count) + wide * (count - 1) + b"\x81"
    with pytest.raises(FormatError, match="Malformed varint in RLE sample data"):
        tachyon_format.read(hostile.tachyon_file(short, sample_count=count,
                                                 compressed=False), chunk_size=16 << 10)


@pytest.mark.parametrize("kind", ["empty", "skippable"])
@pytest.mark.parametrize("verb", READING)
def test_a_first_frame_declaring_no_bytes_is_refused_as_cpython_does(kind, verb):
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    first = zstd.compress_region(b"") if kind == "empty" else skippable
    if kind == "empty":  # (what zstd writes for b"" when the size is known: 0, declared)
        first = bytes.fromhex("28b52ffd2000010000")
    record = hostile.prefix(1, 0, 1) + b"\x00\x00\x01\x00"
    data = hostile.tachyon_file(first + hostile.zstd_frame(record), sample_count=1)
    assert_error(verb, data, NO_PROGRESS)
    # with nothing after it, or after a frame that does not declare its size, it is fine
    alone = hostile.tachyon_file(first + first, sample_count=0)
    assert fatal_only(outcome(verb, alone)) == ("ok", [] if verb == "validate" else 0)
    later = hostile.tachyon_file(hostile.zstd_frame(record) + first, sample_count=1)
    assert fatal_only(outcome(verb, later)) == ("ok", [] if verb == "validate" else 1)


# -- the classes at the issue's own sizes (a few seconds each) --------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("name", "message"), [
    ("huge_rle_counts", "Invalid RLE count 2147483648 exceeds maximum possible 536870903"),
    ("bomb_8gib", "Decompressed data exceeds maximum size"),
    ("many_samples", "The header declares 536870903 samples, more than read() takes"),
])
def test_the_full_size_classes_end_in_seconds(name, message):
    assert_error("read", hostile.CLASSES[name](), message, seconds=30, peak=160 * MIB)


# -- structured mutations of the golden files -----------------------------------------------

def region_size(data: bytes) -> int:
    """The logical region size, for the memory bound (samples take >= 2 bytes each)."""
    if len(data) < 64:
        return 0
    stored = data[64:int.from_bytes(data[40:48], "little")]
    if int.from_bytes(data[56:60], "little") == 1:
        with contextlib.suppress(FormatError):
            return sum(len(c) for c in zstd.iter_decompress(stored, limit=64 * MIB))
    return len(stored)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))  # (no long shrinking)
@given(path=st.sampled_from(mutations.GOLDEN), rng=st.randoms(use_true_random=False),
       steps=st.integers(1, 2))
def test_mutated_goldens_give_format_errors_or_profiles_in_bounds(path, rng, steps):
    data = mutations.mutated(path, rng, steps)
    # read: 17 bytes of columns per sample (2 region bytes at least), grown by doubling
    allowed = 48 * MIB + 30 * region_size(data)
    for verb in [*READING, "info"]:
        kind, result, bounds = outcome(verb, data, max_region_size=64 * MIB) if (
            verb != "info") else outcome(verb, data)
        assert bounds.seconds < 30, (verb, bounds.seconds)  # (a hang guard: ~0.1 s is usual)
        assert bounds.peak < allowed, (verb, bounds.peak, allowed)
        if verb == "validate":
            assert isinstance(result, list)
    with tempfile.TemporaryDirectory() as directory:  # a path: read through a memory map
        path = Path(directory) / "mutated.bin"
        path.write_bytes(data)
        assert outcome("read", path, max_region_size=64 * MIB)[2].seconds < 10


def test_the_limits_page_examples_run(tmp_path, monkeypatch):
    page = REPO / "docs" / "format" / "limits.md"
    monkeypatch.chdir(tmp_path)
    run_examples(page, tmp_path)
    links_resolve(page)


def test_a_zstd_error_comes_before_the_table_checks_as_in_cpython():
    """Found by the differential test: CPython decompresses the region at open, before it
    parses the tables."""
    record = hostile.prefix(1, 0, 1) + b"\x00\x00\x01\x00"
    data = bytearray(hostile.tachyon_file(hostile.zstd_frame(record)[:-3], sample_count=1))
    data[-32:-28] = (2**32 - 1).to_bytes(4, "little")  # string count beyond the file
    for verb in READING:
        assert_error(verb, bytes(data), "Incomplete zstd frame: data may be truncated")
    assert tachyon_format.info(hostile.tachyon_file(hostile.zstd_frame(record)[:-3],
                                                    sample_count=1))["sample_count"] == 1


@pytest.mark.parametrize("verb", READING)
@pytest.mark.parametrize("name", ["bomb", "skippable", "rle_count"])
def test_hostile_files_given_by_path(name, verb, tmp_path):
    """Found by measuring the classes through paths: an error while the region was
    decompressed at open left views of the file's memory map alive, and closing the map
    raised BufferError instead of the FormatError."""
    record = hostile.prefix(1, 0, 1) + b"\x00\x00\x01\x00"
    skippable = (0x184D2A50).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    head = hostile.repeat_head(2**31)
    data, message, options = {
        "bomb": (hostile.bomb(16 * MIB), "Decompressed data exceeds maximum size",
                 {"max_region_size": MIB}),
        "skippable": (hostile.tachyon_file(skippable + hostile.zstd_frame(record),
                                           sample_count=1), NO_PROGRESS, {}),
        "rle_count": (hostile.tachyon_file(hostile.zstd_frame(head, (0, MIB)),
                                           sample_count=1), "Invalid RLE count", {}),
    }[name]
    path = tmp_path / "hostile.bin"
    path.write_bytes(data)
    kind, result, _ = outcome(verb, path, **options)
    if verb == "validate":
        assert kind == "ok" and any(p.fatal and message in str(p) for p in result), result
    else:
        assert kind == "error" and result.message.startswith(message), result


FUZZ_HEADER_TRUSTED = bytes.fromhex(
    "4843415401000000030f020040420f0000000000e80300000000005a00000028000000000000000049000000"
    "0000000049000000000000000100000000000000000069000000000000000000000000000000ffff")
"""Found by tools/fuzz.py (minimised, 84 bytes): a header whose sample count the region cannot
hold, with table offsets inside the header; read() once sized its columns from the count
(a 4 GiB MemoryError)."""


@pytest.mark.parametrize("verb", [*READING, "info"])
def test_fuzz_found_header_count_allocates_nothing(verb):
    kind, result, bounds = outcome(verb, FUZZ_HEADER_TRUSTED)
    assert kind in ("ok", "error"), result
    assert bounds.seconds < 5 and bounds.peak < 64 * MIB, (bounds.seconds, bounds.peak)
    if verb in ("read", "aggregate", "iter_batches"):
        assert kind == "error", result


# -- the slow classes of issue 21: records no reader can batch, at a size CI affords -------

SLOW = sorted(hostile.SLOW_CLASSES)


@requires_reference
def test_the_slow_classes_read_as_cpython_reads_them(tmp_path):
    paths = []
    for name in SLOW:
        paths.append(tmp_path / f"{name}.bin")
        paths[-1].write_bytes(hostile.SLOW_CLASSES[name](64 << 10))
    expected = theirs(paths)
    for path, cpython in zip(paths, expected, strict=True):
        assert "ok" in cpython, (path.name, cpython)
        for engine in ENGINES:
            assert verdict(ours(path.read_bytes(), engine)) == verdict(cpython), (
                path.name, engine)


@pytest.mark.parametrize("name", SLOW)
def test_the_slow_classes_decode_as_the_reference_walk(name, tmp_path):
    """Every decoder (the numpy one in windows small enough to cut the records anywhere,
    with and without its helper thread) against the interpreted walk."""
    path = tmp_path / "hostile.bin"
    path.write_bytes(hostile.SLOW_CLASSES[name](128 << 10))
    f = region_file(path)
    expected = reference_or_error(f.region, **f.kwargs)
    assert len(expected.batch.timestamp_us) == f.sample_count
    for engine in DECODERS:
        assert_same(decoded_or_error(f.region, engine=engine, **f.kwargs), expected)
    with mock.patch.object(decoder, "WINDOW", 4099):
        for threads in (False, True):
            assert_same(decoded_or_error(f.region, chunks=[50_001], threads=threads,
                                         **f.kwargs), expected)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("verb", READING)
@pytest.mark.parametrize("name", SLOW)
def test_the_slow_classes_are_read_in_bounded_time_and_memory(name, verb, engine,
                                                             monkeypatch):
    """At 4 MiB each takes 0.1 to 1 s with either decoder (the numpy one took 2 to 4 s,
    and 0.5 GB for a region of 0x01 bytes, 8 candidate records a record); memory: the
    region, read's columns (17 bytes a sample, and a record row of 17 bytes a record, 14
    region bytes at least), and the numpy decoder's window of candidates and records (as
    many as a real file's: 12 to 37 MiB were measured for read, 25 to 51 MiB for the others,
    whose batch of 1 M rows is 17 MB)."""
    monkeypatch.setenv(ENVIRONMENT, engine)
    size = 4 << 20
    data = hostile.SLOW_CLASSES[name](size)
    kind, result, bounds = outcome(verb, data)
    samples = int.from_bytes(data[28:36], "little")
    assert (kind, result) == ("ok", [] if verb == "validate" else samples)
    assert bounds.seconds < 10, bounds.seconds
    assert bounds.peak < 80 * MIB, bounds.peak
    if verb in ("read", "aggregate"):  # what it returns, the region, and a constant
        assert bounds.peak < size + 17 * (samples + size // 14) + 32 * MIB, bounds.peak


def test_a_header_understating_the_samples_lets_the_rows_go():
    """1 sample declared over 3 M: the read fails anyway (here at the limit), so the rows
    decoded past the header's count are let go chunk by chunk, not grown to the limit."""
    data = bytearray(hostile.many_samples(3_000_000))
    data[28:36] = (1).to_bytes(8, "little")
    with Bounded() as bounds, pytest.raises(LimitError, match="more than 2900000 samples"):
        tachyon_format.read(bytes(data), max_samples=2_900_000, chunk_size=MIB)
    assert bounds.peak < 32 * MIB  # (grown to the limit: 49 MB of columns, and a copy)
    data[28:36] = (2_999_999).to_bytes(8, "little")
    with pytest.raises(FormatError, match="header declares 2999999 samples but replay"
                       " decoded 3000000"):
        tachyon_format.read(bytes(data), chunk_size=MIB)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", SLOW)
def test_the_slow_classes_at_full_size(name, engine, monkeypatch):
    """The issue's sizes (16 MiB to 1 GiB regions): seconds each, where the numpy decoder
    took 15 to 60 s (and 850 MB for 32 MiB of 0x01 bytes)."""
    monkeypatch.setenv(ENVIRONMENT, engine)
    data = hostile.SLOW_CLASSES[name]()
    samples = int.from_bytes(data[28:36], "little")
    for verb in ("read", "iter_batches"):
        kind, result, bounds = outcome(verb, data)
        assert (kind, result) == ("ok", samples)
        assert bounds.seconds < 120, (verb, bounds.seconds)
