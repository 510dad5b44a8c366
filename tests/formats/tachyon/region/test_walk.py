"""The record walk (``region/walk.py``), compiled and interpreted, beyond what the decoder
comparisons of test_decoder.py cover (there every decoder is compared with the reference on
random, golden and CPython-written regions): the aggregating walk against the numpy decoder's
counts, batches of ``iter_batches`` alike under every decoder, input that arrives a byte at a
time, hostile bytes (never an error but FormatError), and running without Cython installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region import engines
from tachyon_format.formats.tachyon.region.columns import GrowingColumns
from tachyon_format.formats.tachyon.region.counting import SampleCounts
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR

from .helpers import (
    DECODERS,
    compare,
    prefix,
    reference_or_error,
    region_file,
    regions,
    tachyon_file,
    uleb,
)

GOLDEN = sorted(DATA_DIR.glob("*.bin"))
SHARED = sorted(CPYTHON_FIXTURES.glob("*.bin")) if CPYTHON_FIXTURES.is_dir() else []
FILES = GOLDEN + SHARED
IDS = [f"{p.parent.name}/{p.stem}" for p in FILES]
WALKS = [name for name in DECODERS if name != "numpy"]
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
KWARGS = {"order": "<", "start_time_us": 0, "thread_count": 1 << 30, "frame_count": 1 << 30}


def same_records(a, b) -> bool:
    ra, rb = a.extras["tachyon"].records, b.extras["tachyon"].records
    if ra is None or rb is None:  # (an aggregate keeps none)
        return ra is rb
    return all(np.array_equal(getattr(ra, name), getattr(rb, name))
               for name in ("offset", "encoding", "first_sample"))


def counts_of(region: bytes, engine: str, **kwargs):
    """The aggregated rows of a region by *engine*, or ("error", message, offset, record)."""
    dec = engines.new_decoder(engine=engine, aggregate=True, **kwargs)
    counts = dec.sample_counts()
    try:
        dec.decode_into(region, final=True, samples=counts,
                        records=GrowingColumns.records())
    except FormatError as exc:
        return ("error", exc.message, exc.offset, exc.record)
    rows = counts.finish()
    return ({name: column.tolist() for name, column in rows.items()},
            dec.stack_frame.tolist(), dec.stack_parent.tolist())


@pytest.mark.parametrize("engine", WALKS)
@SETTINGS
@given(region=regions())
def test_the_walk_counts_as_the_numpy_decoder(engine, region):
    assert counts_of(region, engine, **KWARGS) == counts_of(region, "numpy", **KWARGS)


@pytest.mark.parametrize("engine", WALKS)
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_files_read_alike_with_every_decoder(engine, path):
    """read() and read(aggregate=True) of the golden and real files, every column."""
    for aggregate in (False, True):
        ours = tachyon_format.read(path, aggregate=aggregate, engine=engine)
        numpy = tachyon_format.read(path, aggregate=aggregate, engine="numpy")
        for name in ("timestamp_us", "thread", "status", "stack", "values"):
            got, expected = getattr(ours.samples, name, None), getattr(numpy.samples, name, None)
            assert (got is None) == (expected is None), name
            if got is not None:
                assert got.dtype == expected.dtype and np.array_equal(got, expected), name
        assert np.array_equal(ours.stacks.frame, numpy.stacks.frame)
        assert np.array_equal(ours.stacks.parent, numpy.stacks.parent)
        assert same_records(ours, numpy)


@pytest.mark.parametrize("engine", WALKS)
@pytest.mark.parametrize("path", GOLDEN[:6], ids=[p.stem for p in GOLDEN[:6]])
@pytest.mark.parametrize("size", [1, 97, 1000])
def test_batches_alike_with_every_decoder(engine, path, size):
    ours = list(tachyon_format.iter_batches(path, samples_per_batch=size, engine=engine))
    numpy = list(tachyon_format.iter_batches(path, samples_per_batch=size, engine="numpy"))
    assert len(ours) == len(numpy)
    for a, b in zip(ours, numpy, strict=True):
        for name in ("timestamp_us", "thread", "status", "stack"):
            assert np.array_equal(getattr(a.samples, name), getattr(b.samples, name))
        assert same_records(a, b)


@pytest.mark.parametrize("engine", WALKS)
def test_input_a_byte_at_a_time(engine):
    """Every record, REPEAT entry and prefix cut at every byte."""
    f = region_file(DATA_DIR / "synthetic_edges_raw.bin")
    out = compare(f.region, chunks=list(range(1, len(f.region))), decoders=[engine],
                  **f.kwargs)
    assert len(out.batch) == f.sample_count


@pytest.mark.parametrize("engine", WALKS)
@SETTINGS
@given(data=st.binary(max_size=400), cut=st.integers(0, 400))
def test_random_bytes_give_format_errors_or_samples(engine, data, cut):
    """Bytes with no structure (valid thread ids by chance only): a FormatError with the
    reference's message and place, or the reference's samples; never another error."""
    region = data[:cut]
    for thread_count in (1, 1 << 30):
        kwargs = {**KWARGS, "thread_count": thread_count, "frame_count": 5}
        compare(region, decoders=[engine], **kwargs)


@pytest.mark.parametrize("engine", WALKS)
def test_columns_full_and_records_full_resume(engine):
    """Columns with room for one row at a time: the walk stops and resumes mid-REPEAT."""
    body = (prefix(1, 0, 1) + b"\x05\x22\x02\x03\x04"
            + prefix(1, 0, 0) + uleb(40) + b"\x01\x22" * 40
            + prefix(2, 0, 0) + b"\x00" + prefix(1, 0, 3) + b"\x01\xa2\x05\x00")
    kwargs = {**KWARGS, "frame_count": 10}
    expected = reference_or_error(body, **kwargs)
    dec = engines.new_decoder(engine=engine, **kwargs)
    samples, records = GrowingColumns.samples(1), GrowingColumns.records(1)
    dec.decode_into(body, final=True, samples=samples, records=records)
    got = samples.finish()
    assert got["timestamp_us"].tolist() == expected.batch.timestamp_us.tolist()
    assert got["stack"].tolist() == expected.batch.stack.tolist()
    assert records.finish()["first_sample"].tolist() == (
        expected.batch.record_first_sample.tolist())


@pytest.mark.parametrize("engine", WALKS)
@SETTINGS
@given(runs=st.lists(st.tuples(st.integers(1, 2), st.integers(0, 1), st.integers(0, 40),
                                st.booleans(), st.integers(0, 2)), max_size=8),
       cut=st.integers(0, 3000))
def test_runs_of_like_empty_repeats(engine, runs, cut):
    """Runs of byte-identical REPEATs of count 0 (taken by a compare each, not decoded; the
    count written ``00``, ``80 00`` or ``80 80 00``) next to other threads' runs (thread or
    interpreter id apart) and samples, cut anywhere by a chunk, in record rows that fill up
    every 16, and counted: as the reference reads them, counters included."""
    region = b"".join((prefix(tid, iid, 0) + b"\x80" * wide + b"\x00") * n
                      + (prefix(tid, iid, 1) + b"\x01\x00\x01\x00" if sample else b"")
                      for tid, iid, n, sample, wide in runs)
    kwargs = {**KWARGS, "frame_count": 2}
    compare(region, chunks=[min(cut, len(region))], decoders=[engine], **kwargs)
    expected = reference_or_error(region, **kwargs)
    dec = engines.new_decoder(engine=engine, **kwargs)
    records = GrowingColumns.records(16)
    dec.decode_into(region, final=True, samples=GrowingColumns.samples(1), records=records)
    got = records.finish()
    assert got["offset"].tolist() == expected.batch.record_offset.tolist()
    assert got["first_sample"].tolist() == expected.batch.record_first_sample.tolist()
    assert dec.stats == expected.stats
    assert counts_of(region, engine, **kwargs) == counts_of(region, "numpy", **kwargs)


def test_counts_match_the_sample_counts_class():
    """The walk's counts have SampleCounts' columns and dtypes."""
    region = tachyon_format.read(GOLDEN[0], aggregate=True, engine="numpy")
    walked = tachyon_format.read(GOLDEN[0], aggregate=True, engine=WALKS[-1])
    for name in ("stack", "thread", "status", "values"):
        a, b = getattr(walked.samples, name), getattr(region.samples, name)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
    assert set(SampleCounts().finish()) == {"stack", "thread", "status", "values"}


def test_the_layout_comes_from_the_declarations():
    from tachyon_format.formats.tachyon.region import layout
    from tachyon_format.schema import tachyon as spec

    assert layout.PREFIX_SIZE == spec.RECORD_PREFIX_SIZE == spec.record_prefix("<").sizeof()
    assert (layout.THREAD_ID_AT, layout.INTERPRETER_ID_AT, layout.ENCODING_AT) == (0, 8, 12)
    assert layout.COUNTS == {layout.FULL: ("depth",), layout.SUFFIX: ("shared", "new"),
                             layout.POP_PUSH: ("pop", "push")}


def test_the_walk_runs_without_cython_installed(tmp_path):
    """Interpreted where Cython is not installed (a build dependency only): the module's
    own stand-in for the ``cython`` names."""
    script = textwrap.dedent("""
        import sys
        sys.modules["cython"] = None  # (import cython fails)
        from tachyon_format.formats.tachyon.region import engines
        walk = engines.interpreted_walk()
        assert walk.COMPILED is False and walk.cython.__name__.endswith("_cython_shadow")
        import tachyon_format
        p = tachyon_format.read(sys.argv[1], engine="interpreted")
        print(len(p.samples))
    """)
    out = subprocess.run([sys.executable, "-c", script, str(GOLDEN[0])], capture_output=True,
                         text=True, check=True)
    assert int(out.stdout) == len(tachyon_format.read(GOLDEN[0]).samples)


# ---------------------------------------------------------------------- engines
def test_decoder_info_and_the_environment(monkeypatch):
    info = tachyon_format.decoder_info()
    assert info["active"] in engines.ENGINES and info["problem"] is None
    monkeypatch.setenv(engines.ENVIRONMENT, "numpy")
    assert tachyon_format.decoder_info()["active"] == "numpy"
    assert engines.resolve() == "numpy"
    monkeypatch.setenv(engines.ENVIRONMENT, "bogus")
    assert "bogus" in tachyon_format.decoder_info()["problem"]
    with pytest.raises(ValueError):
        engines.resolve()
    assert engines.resolve("interpreted") == "interpreted"  # (an explicit choice wins)


def test_compiled_walk_is_built_in_ci():
    """In CI (tools/dev.sh test on a machine with a compiler), the walk must be compiled:
    a silent fallback to the numpy decoder would leave the compiled path untested."""
    if not os.environ.get("CI"):
        pytest.skip("only CI insists (set CI=true to check here)")
    assert tachyon_format.decoder_info()["compiled"], tachyon_format.decoder_info()


@pytest.mark.parametrize("engine", WALKS)
@pytest.mark.parametrize("chunk", [1, 777, 4095, 4097])
def test_the_longest_records_across_chunks(engine, chunk):
    """A stack change of 256 frames, every varint in its longest (10-byte, non-canonical)
    form: 2,604 bytes, the most a record other than a REPEAT takes; cut anywhere, joined to
    the next chunk's first bytes."""
    def long(value: int) -> bytes:  # (10 bytes: a continuation bit on the first nine)
        return bytes((value >> (7 * i) & 0x7F) | 0x80 for i in range(9)) + bytes(
            [value >> 63 & 1])

    record = (prefix(1, 0, 1) + long(5) + b"\x22" + long(256)
              + b"".join(long(i % 7) for i in range(256)))
    assert len(record) == 13 + 10 + 1 + 10 + 2560
    region = record + prefix(1, 0, 0) + uleb(3) + b"\x01\x22" * 3 + record
    cuts = list(range(chunk, len(region), chunk))
    out = compare(region, chunks=cuts, decoders=[engine], **{**KWARGS, "frame_count": 10})
    assert len(out.batch) == 5


def distinct_stacks(samples: int, *, digits: int = 512, depth: int = 8) -> bytes:
    """A file where every sample has a stack of its own: its two outermost frames are the
    sample's number in base *digits*, so each sample adds some ``depth - 1`` nodes."""
    tail = b"".join(uleb(digits + k) for k in range(depth - 2))  # (innermost first)
    region = b"".join(prefix(1, 0, 1) + b"\x01\x00" + uleb(depth) + tail + uleb(i // digits)
                      + uleb(i % digits) for i in range(samples))
    return tachyon_file(region, sample_count=samples, num_frames=digits + depth)


@pytest.mark.skipif(not engines.decoder_info()["compiled"], reason="the walk is not compiled")
@pytest.mark.parametrize("aggregate", [False, True])
def test_the_tree_takes_memory_by_node_not_by_copies(aggregate):
    """The prefix tree while it is built, beyond what read() returns: its columns grown in
    place, its lookup tables let go of before the copy out. 1.4 M nodes; some 22 bytes a
    node beyond the result (28 aggregated), where growth by copies, a cache of frames and
    nodes inside the node rows and the tables kept to the end took 59 (65)."""
    data = distinct_stacks(200_000)
    tracemalloc.start()
    try:
        profile = tachyon_format.read(data, aggregate=aggregate, engine="compiled")
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    nodes = len(profile.stacks.frame)
    assert nodes > 1_300_000
    assert (peak - kept) / nodes < 45
