"""File-level reading: info() against CPython's get_info(), byte orders, legacy layouts, and
the open-time checks of docs/format/reader.md#checks-at-open against CPython's own messages."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

import pytest

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.formats.tachyon.file import open_file
from tests.helpers.legacy_layouts import downgrade
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR
from tests.helpers.reference import requires_reference, run_reference

DATA = DATA_DIR
SHARED = CPYTHON_FIXTURES


def _golden_files() -> list[Path]:
    files = sorted(DATA.glob("*.bin"))
    if SHARED.is_dir():
        files += sorted(SHARED.glob("*.bin"))
    return files


GOLDEN = _golden_files()
IDS = [f"{p.parent.name}/{p.name}" for p in GOLDEN]


def reference_info_line(path: Path) -> str:
    """Line 1 of the committed CPython decode: ``json.dumps(get_info(), sort_keys=True)``."""
    with gzip.open(path.with_name(path.name.replace(".bin", ".ref.jsonl.gz")), "rt") as f:
        return f.readline().rstrip("\n")


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_info_equals_cpython_get_info(path):
    assert json.dumps(tachyon_format.info(path), sort_keys=True) == reference_info_line(path)


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_info_on_big_endian_copy(path):
    data = path.read_bytes()
    swapped = swap_byte_order(data)
    assert swapped[:4] == b"TACH"
    assert json.dumps(tachyon_format.info(swapped), sort_keys=True) == reference_info_line(path)
    assert swap_byte_order(swapped) == data


def test_info_accepts_paths_bytes_and_streams(tmp_path):
    path = GOLDEN[0]
    expected = tachyon_format.info(path)
    assert tachyon_format.info(str(path)) == expected
    assert tachyon_format.info(path.read_bytes()) == expected
    with path.open("rb") as stream:
        assert tachyon_format.info(stream) == expected


@pytest.mark.parametrize("layout", ["L2", "L1"])
@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_legacy_layouts_are_sniffed(path, layout):
    legacy = downgrade(path.read_bytes(), layout)
    expected = json.loads(reference_info_line(path))
    for key in ("duration_sec", "sample_rate", "error_rate", "missed_samples", "mode",
                "capture_features"):
        expected[key] = None  # neither layout had a stats block or a config word
    meta = open_file(legacy)
    # without frames the two layouts are the same bytes
    assert meta.layout == layout or (len(meta.frames) == 0 and meta.layout in ("L1", "L2"))
    assert json.loads(json.dumps(meta.info())) == expected


# -- corruption: every open-time check, compared with CPython's own reader ------------------


def _patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _stats_file() -> bytes:
    """A small raw golden file that carries a 56-byte statistics block."""
    return (DATA / "synthetic_edges_raw.bin").read_bytes()


def _corruptions() -> dict[str, bytes]:
    base = _stats_file()
    size = len(base)
    str_off, frame_off = struct.unpack_from("<QQ", base, 40)
    strings, frames = struct.unpack_from("<II", base, size - 32)
    legacy_stats = bytearray(base)
    # a 32-byte stats block: rewrite the trailer size, keep duration and rate in place
    struct.pack_into("<I", legacy_stats, size - 36, 32)
    return {
        "empty": b"",
        "short": base[:63],
        "bad magic": b"XXXX" + base[4:],
        "version 2": _patch(base, 4, "<I", 2),
        "version 0": _patch(base, 4, "<I", 0),
        "mode 6": _patch(base, 60, "<I", 6),
        "mode 7 with features": _patch(base, 60, "<I", 0xFF),
        "config high bits ignored": _patch(base, 60, "<I", 0xFFFFFFF8),
        "stats size too small": _patch(base, size - 36, "<I", 31),
        "stats size too large": _patch(base, size - 36, "<I", size - 31),
        "stats version 2 ignored": _patch(base, size - 40, "<I", 2),
        "stats legacy 32": bytes(legacy_stats),
        "stats negative duration": _patch(base, size - 88, "<d", -1.0),
        "stats nan rate": _patch(base, size - 80, "<d", float("nan")),
        "stats infinite missed": _patch(base, size - 64, "<d", float("inf")),
        "stats absent error not checked": _patch(
            _patch(base, size - 56, "<I", 2), size - 72, "<d", float("nan")
        ),
        "string offset past end": _patch(base, 40, "<Q", size + 1),
        "frame offset past end": _patch(base, 48, "<Q", size + 1),
        "string offset in header": _patch(base, 40, "<Q", 10),
        "frame offset in header": _patch(base, 48, "<Q", 10),
        "tables swapped": _patch(_patch(base, 40, "<Q", frame_off), 48, "<Q", str_off),
        "string count huge": _patch(base, size - 32, "<I", 0xFFFFFFFF),
        "string count at cap": _patch(base, size - 32, "<I", size - str_off),
        "frame count huge": _patch(base, size - 28, "<I", 0xFFFFFFFF),
        "frame count at cap": _patch(base, size - 28, "<I", (size - frame_off) // 7),
        "frame count over cap": _patch(base, size - 28, "<I", (size - frame_off) // 7 + 1),
        "frame count into stats": _patch(base, size - 28, "<I", frames + 2),
        "string table overflow": _patch(base, str_off, "<B", 0x7F),
        "string varint malformed": base[:str_off] + b"\xff" * (size - str_off),
        "frame varint malformed": base[:frame_off] + b"\xff" * (size - frame_off),
        "strings counted": _patch(base, size - 32, "<I", strings),
    }


CORRUPTIONS = _corruptions()
_OPEN_ALL = """
import json, sys, _remote_debugging as r
for path in sys.argv[1:]:
    try:
        with r.BinaryReader(path) as reader:
            print(json.dumps(["ok", reader.get_info()], sort_keys=True))
    except Exception as exc:
        print(json.dumps(["error", type(exc).__name__, str(exc)]))
"""


def _ours(data: bytes):
    try:
        meta = open_file(data)
    except FormatError as exc:
        return ["error", exc.message]
    return ["ok", json.loads(json.dumps(meta.info(), sort_keys=True))]


@requires_reference
def test_open_checks_match_cpython(tmp_path):
    paths = []
    for index, data in enumerate(CORRUPTIONS.values()):
        path = tmp_path / f"case{index}.bin"
        path.write_bytes(data)
        paths.append(str(path))
    lines = run_reference(_OPEN_ALL, *paths).stdout.splitlines()
    for (name, data), line in zip(CORRUPTIONS.items(), lines, strict=True):
        theirs = json.loads(line)
        ours = _ours(data)
        if theirs[0] == "ok":
            assert ours == ["ok", theirs[1]], name
        else:
            assert ours[0] == "error", name
            # our version message names the reader, not an interpreter version
            expected = theirs[2].split(", but this is Python")[0]
            assert ours[1].startswith(expected), (name, ours[1], theirs[2])


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruption_gives_format_error_or_opens(name):
    data = CORRUPTIONS[name]
    try:
        meta = open_file(data)
    except FormatError as exc:
        assert exc.offset is not None and exc.path, name
        assert str(exc).startswith(exc.message)
    else:
        assert meta.info()["version"] == 1


def test_error_names_offset_and_field():
    with pytest.raises(FormatError) as caught:
        open_file(CORRUPTIONS["string offset past end"])
    assert caught.value.offset == 40
    assert caught.value.path == "header -> string_table_offset"
    assert "(offset 40, header -> string_table_offset)" in str(caught.value)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("cut", [64, 100, 200, 400, 600, 1000, 1200, 1300])
def test_truncated_file_gives_format_error(cut):
    data = _stats_file()[:cut]
    with pytest.raises(FormatError):
        tachyon_format.read(data)


@requires_reference
@pytest.mark.parametrize("path", GOLDEN[:4], ids=IDS[:4])
def test_cpython_reads_big_endian_copies_identically(path, tmp_path):
    from tests.helpers.reference import reference_decode

    swapped = tmp_path / "be.bin"
    swapped.write_bytes(swap_byte_order(path.read_bytes()))
    with gzip.open(path.with_name(path.name.replace(".bin", ".ref.jsonl.gz")), "rt") as f:
        assert reference_decode(swapped) == f.read()


@requires_reference
def test_cpython_rejects_legacy_layouts(tmp_path):
    legacy = tmp_path / "l2.bin"
    legacy.write_bytes(downgrade(_stats_file(), "L2"))
    result = json.loads(run_reference(_OPEN_ALL, str(legacy)).stdout)
    assert result[0] == "error" and "Invalid string table offset" in result[2]


def test_string_table_errors_come_before_the_frame_count_check():
    base = _stats_file()
    size = len(base)
    str_off = struct.unpack_from("<Q", base, 40)[0]
    broken = _patch(_patch(base, str_off, "<B", 0x7F), size - 28, "<I", 0xFFFFFF)
    with pytest.raises(FormatError, match="String table overflow"):
        open_file(broken)
    # info() does not parse the tables, so the frame count cap is what it sees
    with pytest.raises(FormatError, match="Invalid frame count"):
        tachyon_format.info(broken)
