"""The declared file-level checks (``checks.py``) and the walk that makes them (``file.walk``):
each check names a real field of the construct declarations at the offset they give it, and
``read``, ``validate`` and salvage report the same field path and offset for the same problem
(every file-level case of ``validate``'s tests)."""

from __future__ import annotations

import construct as cs
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import FormatError
from tachyon_format.formats.tachyon import checks
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.file import open_file, walk
from tachyon_format.schema import tachyon as schema
from tests.formats.tachyon.test_validation import CASES, EDGES, RAW

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


FILE_LEVEL = [case for case in CASES if case[2] == "unreadable" and fails_at_open(case[1])]


def where_read_fails(data: bytes) -> tuple[str | None, int | None]:
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(data, format="tachyon")
    return caught.value.path, caught.value.offset


def where_validate_fails(data: bytes) -> tuple[str | None, int | None]:
    first = next(p for p in tachyon_format.validate(data, format="tachyon") if p.fatal)
    return first.field, first.offset


def where_salvage_fails(data: bytes) -> tuple[str | None, int | None]:
    try:
        profile = tachyon_format.read(data, format="tachyon", strict=False)
    except FormatError as exc:  # nothing could be recovered: the error says why
        return exc.path, exc.offset
    first = profile.extras["salvage"][0]
    return first.field, first.offset


@pytest.mark.parametrize("name, data, field, offset", [
    (name, data, field, offset) for name, data, _, _, offset, field, _, _ in FILE_LEVEL],
    ids=[c[0] for c in FILE_LEVEL])
def test_read_validate_and_salvage_name_the_same_field_and_offset(name, data, field, offset):
    assert where_validate_fails(data) == (field, offset)
    assert where_read_fails(data) == (field, offset)
    assert where_salvage_fails(data) == (field, offset)


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
