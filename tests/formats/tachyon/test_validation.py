"""``validate`` on Tachyon files: every check made to fire on a real file written by CPython,
patched at the offset the check reads; several problems in one file all reported; the
severities against CPython's own reader (``unreadable`` exactly when it rejects the file); and
the never-raises contract on paths, directories and garbage."""

from __future__ import annotations

import json
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError, Problem
from tests.helpers.paths import DATA_DIR
from tests.helpers.reference import requires_reference, run_reference

RAW = (DATA_DIR / "threads_cpu_opcodes_raw.bin").read_bytes()  # 4 threads, stats, raw
EDGES = (DATA_DIR / "synthetic_edges_raw.bin").read_bytes()  # 19 strings, 17 frames, 5 threads
ZSTD = (DATA_DIR / "threads_wall_zstd.bin").read_bytes()


def u32(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 4], "little")


def u64(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 8], "little")


def patch(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new):]


def first_full_record_frame(data: bytes) -> int:
    """File offset of the first frame index of the region's first record (a FULL one)."""
    assert data[64 + 12] == 1  # FULL: delta, status, depth, frames
    p = 64 + 13
    while data[p] & 0x80:
        p += 1
    return p + 1 + 1 + 1  # the delta's last byte, the status, a 1-byte depth


def with_region_tail(data: bytes, tail: bytes) -> bytes:
    """*data* with *tail* appended to its (raw) sample region, every offset moved to match."""
    strings_at = u64(data, 40)
    out = bytearray(data[:strings_at] + tail + data[strings_at:])
    out[40:48] = (strings_at + len(tail)).to_bytes(8, "little")
    out[48:56] = (u64(data, 48) + len(tail)).to_bytes(8, "little")
    out[-24:-16] = len(out).to_bytes(8, "little")
    return bytes(out)


def first_record_of_thread(data: bytes, row: int) -> int:
    """Region offset of the first record of the thread in row *row* (as read() numbers them)."""
    profile = tachyon_format.read(data)
    records = profile.extras["tachyon"].records
    sample = int((profile.samples.thread == row).argmax())
    return int(records.offset[records.first_sample.searchsorted(sample, side="right") - 1])


def stats_at(data: bytes) -> int:
    assert data[-48:-40] == b"TACHSTAT"
    return len(data) - 32 - u32(data, len(data) - 36)


def problems_of(data: bytes) -> list[Problem]:
    problems = tachyon_format.validate(data, format="tachyon")
    assert all(isinstance(p, Problem) for p in problems)
    return problems


def only(problems: list[Problem], fragment: str) -> Problem:
    found = [p for p in problems if fragment in p.message]
    assert len(found) == 1, (fragment, [str(p) for p in problems])
    return found[0]


# -- every check, one at a time ------------------------------------------------------------------
# (name, file bytes, severity, message fragment, offset, field, expected, found)
CASES = [
    ("too small", RAW[:50], "unreadable", "File too small for header", 0, "header",
     "at least 64 bytes", "50"),
    ("magic", patch(RAW, 0, b"XXXX"), "unreadable", "Invalid magic number: 0x58585858", 0,
     "header -> magic", None, None),
    ("newer version", patch(RAW, 4, (2).to_bytes(4, "little")), "unreadable",
     "Binary file was created with Python 3.15.2 (format version 2)", 4,
     "header -> format_version", "1", "2"),
    ("older version", patch(RAW, 4, bytes(4)), "unreadable", "Unsupported format version 0", 4,
     "header -> format_version", "1", "0"),
    ("mode", patch(RAW, 60, bytes([RAW[60] & ~7 | 6])), "unreadable",
     "Invalid profiling mode in header: 6", 60, "header -> profiling_config -> mode_plus_one",
     "0 to 5", "6"),
    ("reserved byte", patch(RAW, 11, b"\xab"), "note", "reserved header byte", 11,
     "header -> reserved", None, "171"),
    ("config high bits", patch(RAW, 62, b"\x01"), "note", "bits 9 to 31", 60,
     "header -> profiling_config", None, f"0x{u32(RAW, 60) | 1 << 16:08x}"),
    ("features without known bit", patch(EDGES, 60, bytes([EDGES[60] & ~8])), "note",
     "without the features-known bit", 60, "header -> profiling_config", None,
     f"0x{u32(EDGES, 60) & ~8:08x}"),
    ("compression value", patch(RAW, 56, (7).to_bytes(4, "little")), "note",
     "unknown compression value", 56, "header -> compression", "0 or 1", "7"),
    ("stats size", patch(RAW, len(RAW) - 36, (8).to_bytes(4, "little")), "unreadable",
     "Invalid profiling statistics size", len(RAW) - 36, "stats -> trailer -> size", None, None),
    ("stats values", patch(RAW, stats_at(RAW), struct.pack("<d", -1.0)), "unreadable",
     "Invalid profiling statistics values", stats_at(RAW), "stats", None, None),
    ("string table beyond the file", patch(RAW, 40, (10**6).to_bytes(8, "little")), "unreadable",
     f"Invalid string table offset: 1000000 exceeds file size {len(RAW)}", 40,
     "header -> string_table_offset", None, None),
    ("frame table beyond the file", patch(RAW, 48, (10**6).to_bytes(8, "little")), "unreadable",
     f"Invalid frame table offset: 1000000 exceeds file size {len(RAW)}", 48,
     "header -> frame_table_offset", None, None),
    ("string table in the header", patch(RAW, 40, (10).to_bytes(8, "little")), "unreadable",
     "Invalid string table offset: 10 is before data section", 40,
     "header -> string_table_offset", None, None),
    ("tables swapped", patch(RAW, 40, (u64(RAW, 48) + 1).to_bytes(8, "little")), "unreadable",
     "is after frame table", 40, "header -> string_table_offset", None, None),
    ("string count", patch(RAW, len(RAW) - 32, b"\xff\xff\xff\xff"), "unreadable",
     f"Invalid string count 4294967295 exceeds maximum possible {len(RAW) - u64(RAW, 40)}",
     len(RAW) - 32, "footer -> string_count", f"at most {len(RAW) - u64(RAW, 40)}",
     "4294967295"),
    ("frame count", patch(RAW, len(RAW) - 28, b"\xff\xff\xff\xff"), "unreadable",
     "Invalid frame count 4294967295 exceeds maximum possible", len(RAW) - 28,
     "footer -> frame_count", f"at most {(len(RAW) - u64(RAW, 48)) // 7}", "4294967295"),
    ("string entry", patch(RAW, u64(RAW, 40), b"\xff\xff\xff\x0f"), "unreadable",
     "String table overflow", u64(RAW, 40), "string_table -> [0]", "33554431 bytes", None),
    ("frame entry", patch(RAW, u64(RAW, 48), b"\xff" * 10), "unreadable",
     "Malformed varint in frame table (filename)", u64(RAW, 48),
     "frame_table -> [0] -> filename", None, None),
    ("footer file size", patch(RAW, len(RAW) - 24, (5).to_bytes(8, "little")), "inconsistent",
     "footer's file size", len(RAW) - 24, "footer -> file_size", str(len(RAW)), "5"),
    ("checksum", patch(RAW, len(RAW) - 1, b"\x01"), "note", "checksum bytes", len(RAW) - 16,
     "footer -> checksum", None, None),
    ("more threads declared", patch(RAW, 36, (6).to_bytes(4, "little")), "inconsistent",
     "declares more threads", 36, "header -> thread_count", "4", "6"),
    ("fewer threads declared", patch(RAW, 36, (2).to_bytes(4, "little")), "unreadable",
     "Invalid thread count: sample data contains more unique threads than declared in header "
     "(declared 2, found at least 3)", first_record_of_thread(RAW, 2), "header -> thread_count",
     None, None),
    ("sample count", patch(RAW, 28, (u64(RAW, 28) + 2).to_bytes(8, "little")), "unreadable",
     f"Sample count mismatch: header declares {u64(RAW, 28) + 2} samples but replay decoded "
     f"{u64(RAW, 28)}", 28, "header -> sample_count", str(u64(RAW, 28) + 2), str(u64(RAW, 28))),
    ("record encoding", patch(RAW, 64 + 12, b"\x09"), "unreadable", "Unknown stack encoding: 9",
     0, None, None, None),
    ("trailing bytes", with_region_tail(RAW, b"\x01" * 5), "unreadable",
     "Truncated sample data: 5 trailing bytes", u64(RAW, 40) - 64, None, None, None),
    ("frame index", patch(RAW, first_full_record_frame(RAW), b"\x7f"), "unreadable",
     "Invalid frame index: 127", 0, "frame_table", "below 96", "127"),
    ("stats duration", patch(RAW, stats_at(RAW), struct.pack("<d", 0.01)), "inconsistent",
     "span more time than the statistics block's duration", None, "stats -> duration_sec",
     "at most 0.01 s", None),
    ("zstd region", patch(ZSTD, 64 + 40, b"\xff" * 40), "unreadable", "zstd decompression error",
     64, "sample_region (zstd)", None, None),
]


@pytest.mark.parametrize("name, data, severity, message, offset, field, expected, found",
                         CASES, ids=[case[0] for case in CASES])
def test_each_check_fires(name, data, severity, message, offset, field, expected, found):
    problem = only(problems_of(data), message)
    assert (problem.severity, problem.offset, problem.field) == (severity, offset, field)
    assert problem.expected == expected
    if found is not None:
        assert problem.found == found
    if severity == "unreadable":
        with pytest.raises(FormatError):
            tachyon_format.read(data, format="tachyon")
    else:  # a readable file: read() takes it as it is
        tachyon_format.read(data, format="tachyon")


def test_the_golden_files_are_valid():
    for path in sorted(DATA_DIR.glob("*.bin")):
        problems = tachyon_format.validate(path)
        assert all(p.severity == "note" for p in problems), (path, [str(p) for p in problems])


def test_a_clock_going_backwards_makes_the_duration_check_a_note():
    [problem] = problems_of(EDGES)
    assert problem.severity == "note" and "clock goes backwards" in problem.message


def test_each_bad_frame_entry_is_listed_with_its_index_and_offset():
    frames_at = u64(EDGES, 48)
    data = bytearray(EDGES)
    offsets = []
    p = frames_at
    for _ in range(3):  # the first three entries' filename indices, beyond the 19 strings
        offsets.append(p)
        data[p] = 0x7F
        p = next_frame(EDGES, p)
    problems = problems_of(bytes(data))
    listed = [p for p in problems if "names a string beyond" in p.message]
    assert [(p.severity, p.offset, p.field) for p in listed] == [
        ("inconsistent", at, f"frame_table -> [{i}]") for i, at in enumerate(offsets)]
    assert listed[0].found.startswith("filename 127")
    # the records that use those frames make the file unreadable, each frame said once
    used = [p for p in problems if p.message == "Invalid string index in frame"]
    assert used and all(p.severity == "unreadable" and p.region for p in used)
    assert len({p.field for p in used}) == len(used)


def next_frame(data: bytes, p: int) -> int:
    for _ in range(6):  # six varints, then the opcode byte
        while data[p] & 0x80:
            p += 1
        p += 1
    return p + 1


def test_several_problems_in_one_file_are_all_reported():
    data = patch(RAW, 60, bytes([RAW[60] & ~7 | 7]))  # mode 7
    data = patch(data, len(data) - 24, (1).to_bytes(8, "little"))  # footer file size
    data = patch(data, len(data) - 1, b"\x01")  # checksum
    data = patch(data, stats_at(data), struct.pack("<d", float("nan")))  # stats values
    data = patch(data, first_full_record_frame(data), b"\x7f")  # a frame index
    data = patch(data, 36, (3).to_bytes(4, "little"))  # one thread too few
    data = patch(data, 28, (1).to_bytes(8, "little"))  # the sample count
    problems = problems_of(data)
    messages = [p.message for p in problems]
    for fragment in ("Invalid profiling mode in header: 7", "footer's file size",
                     "checksum bytes", "Invalid profiling statistics values",
                     "Invalid frame index: 127", "declared 3, found at least 4",
                     "Sample count mismatch: header declares 1 samples"):
        assert sum(fragment in m for m in messages) == 1, (fragment, messages)
    assert [p.severity for p in problems].count("unreadable") == 5


def test_the_walk_goes_past_problems_that_leave_the_syntax_whole():
    """Two different bad frame indices in two records: both reported, in record order."""
    records = tachyon_format.read(RAW).extras["tachyon"].records
    data = bytearray(RAW)
    fulls = [int(o) for o, e in zip(records.offset, records.encoding, strict=True)
             if e == 1][:2]
    for offset, bad in zip(fulls, (0x7E, 0x7F), strict=True):
        p = 64 + offset + 13
        while data[p] & 0x80:
            p += 1
        assert data[p + 2] < 0x80  # a 1-byte depth
        data[p + 3] = bad
    bad = [p for p in problems_of(bytes(data)) if p.message.startswith("Invalid frame index")]
    assert [(p.message, p.offset) for p in bad] == [("Invalid frame index: 126", fulls[0]),
                                                    ("Invalid frame index: 127", fulls[1])]
    assert bad[0].record < bad[1].record


def test_a_pre_release_layout_is_unreadable_for_cpython():
    from tests.helpers.legacy_layouts import downgrade  # (made from a real file)

    legacy = downgrade(RAW, "L2")
    problems = problems_of(legacy)
    assert [p.severity for p in problems] == ["unreadable"]
    assert "pre-release layout" in problems[0].message
    tachyon_format.read(legacy)  # this library reads it


# -- never raises ---------------------------------------------------------------------------------


def test_paths_directories_and_garbage(tmp_path):
    assert problems_of(b"") == [Problem("unreadable", "File too small for header", offset=0,
                                        field="header", expected="at least 64 bytes",
                                        found="0")]
    for source in (tmp_path, tmp_path / "absent.bin"):
        [problem] = tachyon_format.validate(source, format="tachyon")
        assert problem.severity == "unreadable" and problem.message.startswith("cannot read")
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert tachyon_format.validate(empty)[0].severity == "unreadable"
    if os.geteuid() != 0:  # (root reads anything)
        locked = tmp_path / "locked.bin"
        locked.write_bytes(RAW)
        locked.chmod(0)
        assert "Permission denied" in tachyon_format.validate(locked)[0].message


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["RAW", "EDGES", "ZSTD"]), at=st.integers(0, 100_000),
       value=st.binary(min_size=1, max_size=4), cut=st.integers(0, 100_000))
def test_mutations_unreadable_exactly_when_read_fails(name, at, value, cut):
    """validate never raises, and says "unreadable" exactly when read() fails (both follow
    CPython's reader), for a pre-release layout aside (read() reads those)."""
    data = {"RAW": RAW, "EDGES": EDGES, "ZSTD": ZSTD}[name]
    data = patch(data, at % len(data), value)[: len(data) - cut % 200]
    problems = problems_of(data)
    try:
        tachyon_format.read(data, format="tachyon")
        failed = False
    except FormatError:
        failed = True
    legacy = any("pre-release layout" in p.message for p in problems)
    assert failed == any(p.fatal for p in problems) or legacy, [str(p) for p in problems]


# -- against CPython's reader ---------------------------------------------------------------------

_REPLAY = """
import json, sys
from _remote_debugging import BinaryReader

class Collector:
    def collect(self, *args):
        pass

for path in sys.argv[1:]:
    try:
        with BinaryReader(path) as reader:
            reader.replay(Collector())
        print(json.dumps(None))
    except (ValueError, MemoryError, OverflowError) as exc:
        print(json.dumps(str(exc)))
"""


@requires_reference
def test_unreadable_exactly_when_cpython_rejects(tmp_path):
    """Every case above (and the all-zero header of a killed profiler) through CPython's own
    reader: it rejects the file exactly when validate finds an "unreadable" problem, and its
    message is one of those problems'."""
    cases = [(name, data) for name, data, *_ in CASES]
    cases.append(("killed", (DATA_DIR / "killed" / "killed_zstd.bin").read_bytes()))
    paths = []
    for i, (_, data) in enumerate(cases):
        path = tmp_path / f"case{i}.bin"
        path.write_bytes(data)
        paths.append(str(path))
    verdicts = [json.loads(line) for line in run_reference(_REPLAY, *paths).stdout.splitlines()]
    for (name, data), verdict in zip(cases, verdicts, strict=True):
        unreadable = [p.message for p in problems_of(data) if p.fatal]
        assert bool(unreadable) == (verdict is not None), (name, verdict, unreadable)
        if verdict is not None:
            # (a newer version: CPython names the running Python, this library its reader; a
            # killed profiler's file: this library says more after CPython's words)
            said = verdict.split(", but")[0]
            assert any(m.split(", but")[0] in (said, f"{said}: {m[len(said) + 2:]}")
                       for m in unreadable), (name, verdict, unreadable)


def test_records_resume_after_a_broken_one():
    """A record whose type byte is broken ends its syntax; the walk finds where the next
    record starts (the prefix of a known thread that parses) and reports a later problem."""
    profile = tachyon_format.read(RAW)
    records = profile.extras["tachyon"].records
    k = len(records) // 3
    later = next(i for i in range(k + 5, len(records)) if records.encoding[i] == 1)
    data = bytearray(RAW)
    data[64 + int(records.offset[k]) + 12] = 0x44
    p = 64 + int(records.offset[later]) + 13
    while data[p] & 0x80:
        p += 1
    data[p + 3] = 0x7F  # the later FULL record's first frame index
    problems = problems_of(bytes(data))
    broken = only(problems, "Unknown stack encoding: 68")
    skipped = only(problems, "bytes skipped")
    bad_frame = only(problems, "Invalid frame index: 127")
    assert (broken.offset, broken.record) == (int(records.offset[k]), k)
    assert skipped.severity == "note" and skipped.offset == int(records.offset[k + 1])
    assert bad_frame.offset == int(records.offset[later])
    assert bad_frame.record is None  # (the records skipped are not counted)
    assert not any("Sample count mismatch" in p.message for p in problems)  # (not countable)


def test_a_large_region_is_walked_from_the_first_problem(monkeypatch):
    """Past WALK_ALL_LIMIT the plain walk starts where the fast decoder stopped: the same
    problems (record numbers included), and a note that the sample count was not compared."""
    from tachyon_format.formats.tachyon import validation

    records = tachyon_format.read(RAW).extras["tachyon"].records
    data = bytearray(RAW)
    fulls = [int(o) for o, e in zip(records.offset, records.encoding, strict=True) if e == 1]
    for offset in (fulls[len(fulls) // 3], fulls[len(fulls) // 2]):
        data[64 + offset + 12] = 0x44 if offset == fulls[len(fulls) // 2] else 1
        p = 64 + offset + 13
        while data[p] & 0x80:
            p += 1
        data[p + 3] = 0x7E
    whole = problems_of(bytes(data))
    monkeypatch.setattr(validation, "WALK_ALL_LIMIT", 0)
    partial = problems_of(bytes(data))
    note = only(partial, "checked by the fast decoder")
    assert note.offset == fulls[len(fulls) // 3]
    assert [p for p in partial if p is not note] == whole


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.binary(max_size=200).map(lambda b: b"HCAT" + b),
                 st.binary(max_size=200).map(lambda b: bytes(64) + b)),
       st.binary(max_size=200))
def test_garbage_through_the_top_level_verb(tachyon_start, anything):
    """Garbage that starts like a Tachyon file (or a killed one's zero header), sniffed; and any
    bytes at all, named Tachyon: problems, one unreadable, never an exception."""
    for problems in (tachyon_format.validate(tachyon_start),
                     tachyon_format.validate(anything, format="tachyon")):
        assert problems and all(isinstance(p, Problem) for p in problems)
        assert any(p.severity == "unreadable" for p in problems)


def test_a_large_broken_zstd_region_is_not_walked(monkeypatch):
    from tachyon_format.formats.tachyon import validation

    data = patch(ZSTD, len(ZSTD) // 2, b"\xff" * 40)  # (inside the zstd region)
    assert u64(ZSTD, 40) > len(ZSTD) // 2 + 40
    monkeypatch.setattr(validation, "WALK_ALL_LIMIT", -1)
    problems = problems_of(data)
    assert problems[0].severity == "unreadable" and "zstd" in problems[0].message
    assert problems[1].severity == "note" and "not checked one by one" in problems[1].message


@pytest.mark.parametrize(("body", "expected"), [
    (b"\x01\x00\x00" + bytes([0xAC, 0x02]) + b"\x80", "Stack depth 300 exceeds capacity 256"),
    (b"\x03\x00\x00\x00" + bytes([0xAC, 0x02]) + b"\x80", "Final stack depth 300 exceeds "
                                                          "capacity 256"),
    (b"\x02\x00\x00\x05" + bytes([0xAC, 0x02]) + b"\x80", "Shared count 5 exceeds current "
                                                          "stack depth 0"),
], ids=["full", "pop_push", "suffix"])
def test_too_many_frames_is_one_verdict_for_read_and_validate(body, expected):
    """Found by the differential attack (issue 21): a stack change listing more than 256
    frames, whose frames are then broken, fails on its counts in CPython (and read), before
    any frame is read: validate says the same, not "Invalid or incomplete varint"."""
    from tests.formats.tachyon.region.helpers import tachyon_file

    data = tachyon_file(struct.pack("<QIB", 1, 0, body[0]) + body[1:], sample_count=1,
                        num_frames=1)
    with pytest.raises(FormatError) as raised:
        tachyon_format.read(data)
    assert raised.value.message == expected
    fatal = [p for p in tachyon_format.validate(data) if p.fatal]
    assert fatal and fatal[0].message == expected
