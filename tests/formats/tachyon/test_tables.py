"""The string and frame tables: the one reader against the construct declarations (which say
what each entry is) and against a scalar walk (which says where an entry breaks), in both
modes (``read_*`` raises the problem that ``read_*_until_problem`` reports), with every scan
(the compiled walk's loops, numpy and the loops interpreted: equal on any bytes), and its
memory."""

from __future__ import annotations

import io
import tracemalloc
from unittest import mock

import construct as cs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon import frame_columns, tables
from tachyon_format.formats.tachyon.region import engines
from tachyon_format.kernels.short_steps import walk_short_steps
from tachyon_format.schema import tachyon as spec
from tests.helpers.big_tables import frame_table_bytes, with_frames

_U32 = st.integers(0, 0xFFFFFFFF)
_I32 = st.integers(-(2**31), 2**31 - 1)
_FRAME_ENTRY = st.fixed_dictionaries({
    "filename_idx": _U32, "funcname_idx": _U32, "lineno": _I32, "end_lineno_delta": _I32,
    "column": _I32, "end_column_delta": _I32, "opcode": st.none() | st.integers(0, 254),
})
_FIELDS = tuple(sub.name for sub in spec.FRAME.subcons)
SCANS = ["numpy", "interpreted", *(["compiled"] if engines.decoder_info()["compiled"] else [])]
"""The table scans under test: every one this installation has."""
FAST_SCANS = [name for name in SCANS if name != "interpreted"]


def _padded(varint: bytes, extra: int) -> bytes:
    """The same value with *extra* redundant continuation groups."""
    if not extra:
        return varint
    return bytes([b | 0x80 for b in varint]) + b"\x80" * (extra - 1) + b"\x00"


def _expected_frames(blob: bytes, at: int, count: int):
    """What the declarations make of the table: (frames, end) or the entry index, field and
    offset where the parse breaks (an entry parsed field by field to find which)."""
    stream = io.BytesIO(blob[at:])
    entries = []
    for index in range(count):
        values = {}
        for sub in spec.FRAME.subcons:
            field_at = at + stream.tell()
            try:
                values[sub.name] = sub.parse_stream(stream)
            except cs.ConstructError:
                return index, sub.name, field_at
        entries.append(cs.Container(values))
    return tables.frames_from_entries(entries), at + stream.tell()


def _same(frames, expected) -> None:
    for name, column in expected.columns().items():
        got = frames.columns()[name]
        assert got.dtype == column.dtype, name
        assert got.tolist() == column.tolist(), name


@pytest.mark.parametrize("engine", SCANS)
@settings(max_examples=300, deadline=None)
@given(st.lists(_FRAME_ENTRY, max_size=40), st.binary(max_size=12), st.data())
def test_frame_table_equals_construct(engine, entries, tail, data):
    raw = [spec.FRAME.build(e) for e in entries]
    for k in data.draw(st.lists(st.integers(0, max(len(raw) - 1, 0)), max_size=3)):
        if raw:  # a non-canonical (padded) field, sometimes longer than 10 bytes
            name = data.draw(st.sampled_from(_FIELDS[:6]))
            i = _FIELDS.index(name)
            parts = [spec.FRAME.subcons[j].build(entries[k][_FIELDS[j]]) for j in range(7)]
            parts[i] = _padded(parts[i], data.draw(st.integers(1, 11)))
            raw[k] = b"".join(parts)
    body = b"".join(raw)
    cut = data.draw(st.integers(0, len(body)))
    lead = data.draw(st.binary(max_size=3))
    blob = lead + body[:cut] + (tail if cut == len(body) else b"")
    expected = _expected_frames(blob, len(lead), len(entries))
    frames, kept = tables.read_frames_until_problem(blob, len(lead), len(entries), engine=engine)
    if len(expected) == 3:
        index, name, offset = expected
        field = tables.FRAME_FIELDS[_FIELDS.index(name)] if name != "opcode" else "opcode"
        assert kept.problem is not None
        assert (kept.count, kept.problem.field, kept.problem.offset) == (
            index, f"frame_table -> [{index}] -> {field}", offset)
        assert len(frames) == index
        with pytest.raises(FormatError) as caught:
            tables.read_frames(blob, len(lead), len(entries), legacy=False, engine=engine)
        assert (caught.value.message, caught.value.offset, caught.value.path) == (
            kept.problem.message, kept.problem.offset, kept.problem.field)
        return
    columns, end = expected
    assert kept.problem is None and kept.end == end
    _same(frames, columns)
    _same(tables.read_frames(blob, len(lead), len(entries), legacy=False, engine=engine)[0],
          columns)
    assert list(kept.offsets) == [len(lead) + sum(map(len, raw[:i]))
                                     for i in range(len(entries))]


@pytest.mark.parametrize("engine", SCANS)
@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=20), st.integers(0, 400), st.data())
def test_string_table_equals_construct(engine, texts, cut, data):
    raw = b"".join(spec.STRING.build({"text": t}) for t in texts)
    blob = raw[: min(cut, len(raw))] if data.draw(st.booleans()) else raw
    strings, kept = tables.read_strings_until_problem(blob, 0, len(texts), engine=engine)
    try:
        expected = [s.text for s in cs.Array(len(texts), spec.STRING).parse(blob)]
    except cs.ConstructError:
        assert kept.problem is not None
        assert kept.problem.field == f"string_table -> [{kept.count}]"
        assert strings.raws() == texts[: kept.count]
        with pytest.raises(FormatError, match=kept.problem.message) as caught:
            tables.read_strings(blob, 0, len(texts), engine=engine)
        assert caught.value.path == kept.problem.field
        return
    assert kept.problem is None and strings.raws() == expected
    assert tables.read_strings(blob, 0, len(texts), engine=engine).raws() == expected


def _corrupted(data, blob: bytes) -> bytes:
    """*blob* with a few bytes replaced, cut, or extended by random bytes."""
    out = bytearray(blob)
    for _ in range(data.draw(st.integers(0, 4))):
        if out:
            out[data.draw(st.integers(0, len(out) - 1))] = data.draw(st.integers(0, 255))
    out = out[: data.draw(st.integers(0, len(out)))] if data.draw(st.booleans()) else out
    return bytes(out) + data.draw(st.binary(max_size=20))


def _outcome(kept) -> tuple:
    problem = kept.problem
    return (kept.count, kept.end, list(kept.offsets),
            None if problem is None else (problem.message, problem.offset, problem.field,
                                          problem.expected, problem.found))


def _all_scans(read, *args, chunk: int, **kwargs) -> list:
    """*read* by every scan (the compiled ones *chunk* entries a call, numpy 64-byte
    windows): each one's columns and outcome."""
    results = []
    with mock.patch.object(frame_columns, "CHUNK", chunk), \
            mock.patch.object(tables, "CHUNK", chunk), \
            mock.patch.object(frame_columns, "WINDOW", 64):
        for engine in SCANS:
            table, kept = read(*args, engine=engine, **kwargs)
            results.append((engine, table, _outcome(kept)))
    return results


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(0, 60), st.sampled_from([1, 3, 1 << 16]))
def test_frame_scans_agree_on_any_bytes(data, count, chunk):
    """Valid tables corrupted, and random bytes: every scan keeps the same entries and
    offsets, stops at the same place and reports the same problem, with or without *end*."""
    if data.draw(st.booleans()):
        blob = _corrupted(data, frame_table_bytes(count, 300, seed=count))
    else:
        blob = data.draw(st.binary(max_size=300))
    start = data.draw(st.integers(0, min(len(blob), 5)))
    end = data.draw(st.none() | st.integers(0, len(blob) + 2))
    claimed = data.draw(st.sampled_from([count, count + 3, 0xFFFFFFFF]))
    results = _all_scans(tables.read_frames_until_problem, blob, start, claimed, end,
                         chunk=chunk)
    _, first, outcome = results[0]
    for engine, frames, other in results[1:]:
        assert other == outcome, engine
        _same(frames, first)
    if end is None:
        for engine in SCANS:
            try:
                frames = tables.read_frames(blob, start, claimed, legacy=False, engine=engine)[0]
            except FormatError as exc:
                assert outcome[3][:3] == (exc.message, exc.offset, exc.path), engine
            else:
                assert outcome[3] is None, engine
                _same(frames, first)


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(st.binary(max_size=200), max_size=30), st.sampled_from([1, 4, 1 << 16]))
def test_string_scans_agree_on_any_bytes(data, texts, chunk):
    if data.draw(st.booleans()):
        blob = _corrupted(data, b"".join(spec.STRING.build({"text": t}) for t in texts))
    else:
        blob = data.draw(st.binary(max_size=300))
    start = data.draw(st.integers(0, min(len(blob), 5)))
    end = data.draw(st.none() | st.integers(0, len(blob) + 2))
    claimed = data.draw(st.sampled_from([len(texts), len(texts) + 2, 0xFFFFFFFF]))
    results = _all_scans(tables.read_strings_until_problem, blob, start, claimed, end,
                         chunk=chunk)
    _, first, outcome = results[0]
    for engine, strings, other in results[1:]:
        assert other == outcome, engine
        assert strings.raws() == first.raws(), engine


def test_string_errors_name_the_entry_in_both_modes():
    blob = spec.STRING.build({"text": b"ab"}) + b"\xff" * 11
    _, kept = tables.read_strings_until_problem(blob, 0, 2)
    assert (kept.problem.message, kept.problem.offset, kept.problem.field) == (
        "Malformed varint in string table", 3, "string_table -> [1]")
    with pytest.raises(FormatError) as caught:
        tables.read_strings(blob, 0, 2)
    assert (caught.value.offset, caught.value.path) == (3, "string_table -> [1]")


@pytest.mark.parametrize("engine", FAST_SCANS)
def test_frame_table_stops_at_end_and_spans_windows(monkeypatch, engine):
    """Tables of many windows or chunks (64 bytes or 37 entries here), and ``end``: no entry
    starting at or after it is read."""
    monkeypatch.setattr(frame_columns, "WINDOW", 64)
    monkeypatch.setattr(frame_columns, "CHUNK", 37)
    monkeypatch.setenv(engines.ENVIRONMENT, engine)
    blob = frame_table_bytes(500, 300, seed=3)
    expected, end = _expected_frames(blob, 0, 500)
    frames, kept = tables.read_frames_until_problem(blob, 0, 500)
    _same(frames, expected)
    assert kept.end == end == len(blob) and kept.problem is None
    starts = list(kept.offsets)
    frames, kept = tables.read_frames_until_problem(blob, 0, 500, end=starts[200] + 1)
    assert kept.count == len(frames) == 201 and kept.problem is None
    assert kept.end == starts[201]
    _same(frames, _expected_frames(blob, 0, 201)[0])


@pytest.mark.parametrize("engine", FAST_SCANS)
@pytest.mark.parametrize(("head", "name"), [(b"", "filename"), (b"\x80\x00", "funcname")])
def test_a_table_of_continuation_bytes_breaks_at_its_first_field(monkeypatch, engine, head, name):
    """Megabytes with no entry in them (no terminator at all, or a field of 2 bytes then a
    long run): the first field that breaks is named, in both modes, and nothing is kept."""
    monkeypatch.setenv(engines.ENVIRONMENT, engine)
    blob = b"\x05" * 7 + head + b"\xff" * (3 << 20)
    frames, kept = tables.read_frames_until_problem(blob, 7, 1000)
    assert len(frames) == 0 and (kept.problem.offset, kept.problem.field) == (
        7 + len(head), f"frame_table -> [0] -> {name}")
    frames, kept = tables.read_frames_until_problem(blob, 0, 1000)
    assert len(frames) == 1 and kept.problem.field.startswith("frame_table -> [1] -> ")
    with pytest.raises(FormatError, match=f"Malformed varint in frame table \\({name}\\)"):
        tables.read_frames(blob, 7, 1000, legacy=False)
    assert len(tables.read_frames(blob, 7, 0, legacy=False)[0]) == 0


@pytest.mark.parametrize("engine", FAST_SCANS)
def test_count_beyond_the_bytes_left_allocates_nothing_more(monkeypatch, engine):
    """A count of 4 G entries over a few bytes: the truncation is reported, nothing of the
    count's size allocated."""
    monkeypatch.setenv(engines.ENVIRONMENT, engine)
    blob = frame_table_bytes(10, 5)
    tracemalloc.start()
    frames, kept = tables.read_frames_until_problem(blob, 0, 0xFFFFFFFF)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(frames) == 10 and kept.problem.message.startswith("Malformed varint")
    assert peak < 1 << 20


@given(st.integers(1, 7), st.data(), st.integers(7, 40))
def test_walk_short_steps_equals_a_loop(min_step, data, block):
    steps = data.draw(st.lists(st.integers(min_step, 7), max_size=300))
    size = sum(steps) + data.draw(st.integers(0, 8))
    nxt = np.full(size, size, np.int64)
    at = 0
    path = []
    for step in steps:
        if at >= size:
            break
        path.append(at)
        nxt[at] = at + step
        at += step
    # the places off the path step anywhere allowed, or stop
    rng = np.random.default_rng(len(steps))
    off = np.setdiff1d(np.arange(size), path)
    nxt[off] = np.where(rng.random(off.size) < 0.1, size,
                        off + rng.integers(min_step, 8, off.size))
    if at < size:  # the path ends here
        path.append(at)
        nxt[at] = size + data.draw(st.integers(0, 3))
    assert walk_short_steps(nxt, 7, min_step, block).tolist() == path


@pytest.mark.parametrize("engine", FAST_SCANS)
def test_table_memory_per_entry(engine):
    """200 k entries, each scan in both modes: the frame table's columns (26 bytes an entry,
    and 4 for the entries' offsets), the string table's bytes and two int64 an entry, and
    a constant (the compiled loops' scratch; numpy's windows); the same entries by each."""
    count = 200_000
    blob = frame_table_bytes(count, 300)
    rng = np.random.default_rng(0)
    strings = b"".join(bytes([k]) + b"x" * k for k in rng.integers(0, 40, count).tolist())
    slack = 1 << 20 if engine == "compiled" else 8 << 20
    found = []
    for read, per_entry in [
            (lambda: tables.read_frames(blob, 0, count, legacy=False, engine=engine)[0], 26),
            (lambda: tables.read_frames_until_problem(blob, 0, count, engine=engine)[0], 30),
            (lambda: tables.read_strings(strings, 0, count, engine=engine), None),
            (lambda: tables.read_strings_until_problem(strings, 0, count, engine=engine)[0],
             None)]:
        tracemalloc.start()
        table = read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(table) == count
        bound = per_entry * count if per_entry else len(strings) + 20 * count
        assert peak < bound + slack, (peak, bound)
        found.append(table)
    _same(found[0], found[1])
    assert found[2].raws() == found[3].raws()


@pytest.mark.parametrize("engine", FAST_SCANS)
def test_frame_table_memory_per_entry(monkeypatch, engine):
    """200 k entries: the read holds its columns (26 bytes an entry) and a window, not a
    Python object or an int64 row per entry (about 580 bytes an entry before)."""
    monkeypatch.setenv(engines.ENVIRONMENT, engine)
    count = 200_000
    data = with_frames(count)
    tracemalloc.start()
    profile = tachyon_format.read(data)
    read_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    tachyon_format.validate(data, format="tachyon")
    validate_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(profile.frames) == count + 17
    # columns 26 B/entry + the file's bytes (~8 B/entry) + windows: 80 B/entry is generous
    assert read_peak < 80 * count + (32 << 20), read_peak
    assert validate_peak < 120 * count + (32 << 20), validate_peak


@pytest.mark.slow
@pytest.mark.parametrize("engine", FAST_SCANS)
@pytest.mark.parametrize("count", [2_000_000, 5_000_000])
def test_frame_table_memory_at_full_size(monkeypatch, engine, count):
    monkeypatch.setenv(engines.ENVIRONMENT, engine)
    data = with_frames(count)
    tracemalloc.start()
    profile = tachyon_format.read(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(profile.frames) == count + 17
    assert peak < 60 * count + (64 << 20), peak
