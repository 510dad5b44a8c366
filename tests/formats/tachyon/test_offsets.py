"""Where a broken record is, in file terms: every path that reports a problem in the sample
region (``read``, ``read(aggregate=True)``, ``iter_batches``, ``validate``, salvage, CPython's
``BinaryReader``, the CLI) gives its region offset and where the region lies, on every decoder;
for a plain region the file offset points at the broken record's bytes, for a zstd region the
region offset points at them in the decompressed frame."""

from __future__ import annotations

import struct
from typing import NamedTuple

import pytest

import tachyon_format
from tachyon_format import FormatError, Problem, compat
from tachyon_format.cli import main
from tachyon_format.formats.tachyon import zstd
from tachyon_format.formats.tachyon.region.engines import ENGINES, ENVIRONMENT
from tests.formats.tachyon.mutations import embed, golden
from tests.helpers.paths import DATA_DIR

GOLDENS = {False: "threads_cpu_opcodes_raw.bin", True: "threads_wall_zstd.bin"}
RECORD = 3  # the record broken: its type byte set to one that does not exist
MESSAGE = "Unknown stack encoding: 9"


class Broken(NamedTuple):
    data: bytes
    compressed: bool
    at: int  # region offset of the broken record
    prefix: bytes  # its first 13 bytes, as broken


def broken(compressed: bool) -> Broken:
    """A golden with the type byte of record :data:`RECORD` set to 9 (the footer's file size
    kept right, so that the record is the file's only problem)."""
    g = golden(DATA_DIR / GOLDENS[compressed])
    at = g.offsets[RECORD]
    region = bytearray(g.region)
    region[at + 12] = 9
    data = bytearray(embed(g, bytes(region)))
    struct.pack_into("<Q", data, len(data) - 24, len(data))
    return Broken(bytes(data), compressed, at, bytes(region[at:at + 13]))


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT, request.param)
    return request.param


@pytest.fixture(params=[False, True], ids=["plain", "zstd"])
def case(request) -> Broken:
    return broken(request.param)


def place(case: Broken) -> str:
    if case.compressed:
        return (f"offset {case.at} of the decompressed region (zstd frame at file offset 64), "
                f"record {RECORD}")
    return f"file offset {64 + case.at}, region offset {case.at}, record {RECORD}"


def check_placed(found: FormatError | Problem, case: Broken) -> None:
    """*found* names the broken record, in the region and, for a plain region, in the file
    (whose bytes there are the record's)."""
    assert (found.message, found.offset, found.record, found.region) == (
        MESSAGE, case.at, RECORD, True)
    assert (found.region_start, found.compressed) == (64, case.compressed)
    if case.compressed:
        assert found.file_offset is None
        region = zstd.decompress(case.data[64:struct.unpack_from("<Q", case.data, 40)[0]])
        assert region[found.offset:found.offset + 13] == case.prefix
    else:
        assert found.file_offset == 64 + case.at
        assert case.data[found.file_offset:found.file_offset + 13] == case.prefix


@pytest.mark.parametrize("aggregate", [False, True], ids=["read", "aggregate"])
def test_read_says_where_the_record_is(engine, case, aggregate):
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(case.data, aggregate=aggregate)
    check_placed(caught.value, case)
    assert str(caught.value) == f"{MESSAGE} ({place(case)})"


def test_iter_batches_says_where_the_record_is(engine, case):
    with pytest.raises(FormatError) as caught:
        for _ in tachyon_format.iter_batches(case.data, samples_per_batch=2):
            pass
    check_placed(caught.value, case)
    assert str(caught.value) == f"{MESSAGE} ({place(case)})"


def test_validate_says_where_the_record_is(engine, case):
    problems = tachyon_format.validate(case.data)
    check_placed(problems[0], case)
    assert str(problems[0]) == f"{MESSAGE} ({place(case)})"
    assert problems[0].to_dict()["file_offset"] == problems[0].file_offset
    # the walk's note on where records resume is placed the same way
    resumed = [p for p in problems if "bytes skipped" in p.message]
    assert resumed and all(
        (p.region_start, p.compressed) == (64, case.compressed) for p in resumed)


def test_salvage_says_where_the_record_is(engine, case):
    profile = tachyon_format.read(case.data, strict=False)
    first, lost = profile.extras["salvage"][:2]
    check_placed(first, case)  # why the strict read failed
    assert lost.message.startswith(f"the sample region holds a broken record ({MESSAGE})")
    assert (lost.offset, lost.record, lost.region_start, lost.compressed) == (
        case.at, RECORD, 64, case.compressed)
    assert lost.file_offset == (None if case.compressed else 64 + case.at)
    assert str(lost).endswith(f"({place(case)})")


def test_cpythons_reader_keeps_cpythons_message_and_the_place(engine, case, tmp_path):
    path = tmp_path / "broken.bin"
    path.write_bytes(case.data)
    with compat.BinaryReader(str(path)) as reader, pytest.raises(ValueError) as caught:
        reader.replay(type("Collector", (), {"collect": lambda self, *a: None})())
    assert str(caught.value) == MESSAGE  # CPython's text, nothing added
    check_placed(caught.value, case)


def test_the_command_line_says_where_the_record_is(case, tmp_path, capsys):
    path = tmp_path / "broken.bin"
    path.write_bytes(case.data)
    assert main(["dump", str(path)]) == 1
    assert f"{path}: {MESSAGE} ({place(case)})" in capsys.readouterr().err
    assert main(["validate", str(path)]) == 1
    assert f"{path}: unreadable: {MESSAGE} ({place(case)})" in capsys.readouterr().out


def test_a_place_outside_the_region_is_the_file_offset_as_it_was():
    error = FormatError("bad", offset=28, path="header -> sample_count")
    assert error.in_file(64, compressed=True) is error
    assert (str(error), error.file_offset, error.region_start) == (
        "bad (offset 28, header -> sample_count)", 28, None)
    problem = Problem("unreadable", "bad", offset=28)
    assert problem.in_file(64, compressed=False) is problem and problem.file_offset == 28


def test_a_region_place_not_given_stays_a_region_offset():
    """A decoder's own error (no reader told it where the region lies), placed once only."""
    error = FormatError("bad", offset=5, record=0, region=True)
    assert (str(error), error.file_offset) == ("bad (region offset 5, record 0)", None)
    assert str(error.in_file(64, compressed=False)) == (
        "bad (file offset 69, region offset 5, record 0)")
    error.in_file(100, compressed=True)  # already placed: kept
    assert (error.region_start, error.compressed, error.file_offset) == (64, False, 69)
