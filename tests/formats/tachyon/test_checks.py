"""The declared file-level checks (``checks.py``) and the walk that makes them (``file.walk``):
each check names a real field of the construct declarations at the offset they give it; and
``read``, ``validate`` and salvage report the same problem the same way (message, file offset,
record, field path) for every unreadable case of ``validate``'s tests, the file-level ones and
the sample records' (whose checks are ``region.scan.scan_record``'s for read's fallback and
validate's walk alike), for every record error of the region tests, and for records mutated at
random."""

from __future__ import annotations

import random

import construct as cs
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.tachyon import checks
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.file import open_file, walk
from tachyon_format.schema import tachyon as schema
from tests.formats.tachyon import mutations
from tests.formats.tachyon.region.helpers import ERROR_CASES, prefix, tachyon_file, uleb
from tests.formats.tachyon.test_validation import CASES, EDGES, RAW
from tests.helpers.paths import DATA_DIR

DECLARED = [checks.TOO_SMALL, checks.MAGIC, *checks.HEADER_CHECKS, *checks.OFFSET_CHECKS,
            checks.STRING_COUNT, checks.FRAME_COUNT, *checks.FOOTER_CHECKS, checks.LEGACY]
DECLARATIONS = {"header": schema.header, "footer": schema.footer}


def declared_offset(struct: cs.Construct, name: str) -> int:
    """Where field *name* of the construct *struct* starts (as tools/specgen.py finds it)."""
    fields = struct.subcons
    k = [f.name for f in fields].index(name)
    return cs.Struct(*fields[:k]).sizeof()


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("check", DECLARED, ids=lambda c: c.path)
def test_each_check_names_a_declared_field_at_its_offset(check, order):
    size = len(RAW)
    declaration = DECLARATIONS[check.layout.name](order)
    start = size - declaration.sizeof() if check.layout.name == "footer" else 0
    names = check.path.split(" -> ")[1:]
    if names:
        assert check.offset(checks.Facts(size)) == start + declared_offset(declaration, names[0])
    else:
        assert check.offset(checks.Facts(size)) == start
    # the path goes down through the parsed declaration (the bit fields of a word too)
    data = RAW if order == "<" else swap_byte_order(RAW)
    part = declaration.parse(data[start:])
    for name in names:
        assert name in part, (check.path, list(part))
        part = part[name]


def fails_at_open(data: bytes) -> bool:
    try:
        open_file(data).close()
    except FormatError:
        return True
    return False


UNREADABLE = [case for case in CASES if case[2] == "unreadable"]
FILE_LEVEL = [case for case in UNREADABLE if fails_at_open(case[1])]
NOTHING_RECOVERED = "nothing can be recovered: "
Where = tuple[str, int | None, int | None, str | None]
"""(message, file offset or, in a zstd region, region offset, record, field path)"""


def where(message: str, offset: int | None, file_offset: int | None, region: bool,
          record: int | None, field: str | None) -> Where:
    return message, file_offset if file_offset is not None or not region else offset, record, field


def where_read_fails(data: bytes) -> Where:
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(data, format="tachyon")
    e = caught.value
    return where(e.message, e.offset, e.file_offset, e.region, e.record, e.path)


def first_unreadable(data: bytes) -> Where:
    p = next(p for p in tachyon_format.validate(data, format="tachyon") if p.fatal)
    return where(p.message, p.offset, p.file_offset, p.region, p.record, p.field)


def where_salvage_fails(data: bytes) -> Where:
    try:
        profile = tachyon_format.read(data, format="tachyon", strict=False)
    except FormatError as e:  # nothing could be recovered: the error says why
        return where(e.message.removeprefix(NOTHING_RECOVERED), e.offset, e.file_offset,
                     e.region, e.record, e.path)
    p = profile.extras["salvage"][0]
    return where(p.message, p.offset, p.file_offset, p.region, p.record, p.field)


@pytest.mark.parametrize("name, data, message, offset, field", [
    (name, data, message, offset, field) for name, data, _, message, offset, field, _, _
    in UNREADABLE], ids=[c[0] for c in UNREADABLE])
def test_read_validate_and_salvage_report_the_same_problem(name, data, message, offset, field):
    """Every unreadable case of validate's tests (16 at open, 5 in the records)."""
    validated = first_unreadable(data)
    assert message in validated[0] and validated[3] == field  # (the offset: test_validation)
    read = where_read_fails(data)
    assert read == validated
    assert where_salvage_fails(data) == where_read_fails(data)


@pytest.mark.parametrize("region, message", ERROR_CASES, ids=[m for _, m in ERROR_CASES])
def test_each_record_error_is_one_verdict_for_all_three(region, message):
    """The region tests' record errors (4 threads and 10 frames allowed), in a file."""
    data = tachyon_file(region, sample_count=1, thread_count=4, num_frames=10)
    read = where_read_fails(data)
    assert read[0] == message
    assert first_unreadable(data) == read
    assert where_salvage_fails(data) == read


def test_a_check_before_broken_frames_is_said_first():
    """A SUFFIX sharing more frames than the stack holds, whose frame is then cut short:
    CPython (and read) fail on the shared count before reading the frames; validate says so
    first, then the broken varint, as the walk's record checks are read's."""
    data = tachyon_file(prefix(1, 0, 2) + b"\x00\x00\x05\x01\x80", sample_count=1,
                        num_frames=1)
    assert where_read_fails(data)[0] == "Shared count 5 exceeds current stack depth 0"
    fatal = [p.message for p in tachyon_format.validate(data) if p.fatal]
    assert fatal == ["Shared count 5 exceeds current stack depth 0",
                     "Invalid or incomplete varint in binary data"]


def test_every_check_at_open_is_among_the_file_level_cases():
    names = {case[0] for case in FILE_LEVEL}
    assert {"too small", "magic", "newer version", "older version", "mode", "stats size",
            "stats values", "string table beyond the file", "frame table beyond the file",
            "string table in the header", "tables swapped", "string count", "frame count",
            "string entry", "frame entry", "zstd region"} == names


def test_read_looks_only_at_what_cpython_rejects():
    """Every note and inconsistency of the declarations fails on one file; read runs none."""
    data = bytearray(EDGES)
    data[11] = 0xAB  # the reserved header byte
    data[56:60] = (7).to_bytes(4, "little")  # an unknown compression value
    data[62] = 0x01  # profiling_config bits 9..31
    data[60] &= ~8  # capture features without the features-known bit
    data[-24:-16] = (5).to_bytes(8, "little")  # the footer's file size
    data[-1] = 1  # the checksum
    plan = walk(bytes(data), "validate")
    facts = plan.facts
    mild = [c for c in DECLARED if c.severity != "unreadable"]
    assert all(c.fails(facts) for c in mild)
    assert checks.run(mild, facts, "read") == []
    assert len(checks.run(mild, facts, "validate")) == len(mild)
    tachyon_format.read(bytes(data))


def test_salvage_keeps_what_passes():
    """A bad statistics block stops read; validate reports it; salvage keeps the rest."""
    data = next(case[1] for case in CASES if case[0] == "stats values")
    with pytest.raises(FormatError, match="statistics values"):
        walk(data, "read")
    validated = walk(data, "validate")
    salvaged = walk(data, "salvage")
    assert [p.message for p in validated.problems] == ["Invalid profiling statistics values"]
    assert salvaged.stats is None and salvaged.header == walk(RAW, "read").header
    assert salvaged.region == walk(RAW, "read").region


FIELDS = {"format_version": (4, 4), "reserved": (11, 1), "string_table_offset": (40, 8),
          "frame_table_offset": (48, 8), "profiling_config": (60, 4),
          "string_count": (-32, 4), "frame_count": (-28, 4), "stats -> trailer -> size": (-36, 4)}


def near(data: bytes, at: int, width: int) -> st.SearchStrategy[int]:
    """Values around the field's own and around the file's size (where the checks' edges are)."""
    own = int.from_bytes(data[at:at + width], "little")
    top = (1 << 8 * width) - 1
    return st.one_of(st.integers(0, top), *(
        st.integers(max(0, v - 8), min(top, v + 8)) for v in (own, len(data), 64) if v <= top))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_read_and_validate_stop_at_the_same_problem(draw):
    """Header fields, footer counts and the statistics block's size patched at random: when
    the checks at open reject the file, validate's first unreadable problem is read's error
    (message, field, offset)."""
    base = (RAW, EDGES)[draw.draw(st.integers(0, 1))]
    data = bytearray(base)
    for name in draw.draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3)):
        at, width = FIELDS[name]
        at %= len(data)
        data[at:at + width] = draw.draw(near(base, at, width)).to_bytes(width, "little")
    data = bytes(data)
    try:
        open_file(data).close()
    except FormatError as exc:
        error = exc
    else:
        event("opens")
        return
    event(f"rejected at {error.path}")
    first = next(p for p in tachyon_format.validate(data, format="tachyon") if p.fatal)
    if first.message == checks.LEGACY.message(None):
        return  # read() reads a pre-release layout, which validate says CPython rejects
    assert (first.message, first.field, first.offset) == (error.message, error.path, error.offset)


def varint_end(data: bytes, pos: int) -> int:
    while data[pos] & 0x80:
        pos += 1
    return pos + 1


def stack_counts(g: mutations.Golden, rng: random.Random) -> bytes:
    """One count of a stack change (FULL depth; SUFFIX shared or new; POP_PUSH pop or push)
    set around the stacks' depths and the 256 limit: the depth checks, then reading as many
    frames as the last count says."""
    changes = [(at, e) for at, e in zip(g.offsets, g.encodings, strict=True) if e != 0]
    at, encoding = rng.choice(changes)
    p = varint_end(g.region, at + 13) + 1  # the delta, then the status byte
    for _ in range(rng.randrange(1 if encoding == 1 else 2)):
        p = varint_end(g.region, p)
    value = rng.choice([0, 1, 2, 3, 5, 20, 255, 256, 257, 300, 2**32 - 1, 2**32])
    return mutations.embed(g, g.region[:p] + uleb(value) + g.region[varint_end(g.region, p):])


RECORD_MUTATIONS = [mutations.flip_bit, mutations.record_byte, mutations.first_varint,
                    mutations.encoding, mutations.cut_region, mutations.full_record,
                    mutations.huge_repeat, stack_counts]
MUTATED = ["threads_cpu_opcodes_raw.bin", "synthetic_edges_raw.bin", "threads_wall_zstd.bin"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MUTATED), st.sampled_from(RECORD_MUTATIONS),
       st.randoms(use_true_random=False))
def test_read_and_validate_stop_at_the_same_record_problem(name, mutate, rng):
    """Records of real files mutated at random (bytes flipped or set, the region cut, counts
    patched, records inserted): validate's first unreadable problem is read's error (message,
    offset, record, field), and salvage reports it first."""
    data = mutate(mutations.golden(DATA_DIR / name), rng)
    try:
        tachyon_format.read(data, format="tachyon")
    except FormatError:
        pass
    else:
        event("readable")
        assert not any(p.fatal for p in tachyon_format.validate(data, format="tachyon"))
        return
    read = where_read_fails(data)
    event(read[0].split(":")[0].split(" exceeds")[0])
    assert first_unreadable(data) == read
    assert where_salvage_fails(data) == read
