"""The standard-library ``info`` (``header_info``) against the full reader it stands in for:
the same dict on every golden file, and the same dict or the same error on hypothesis-made
headers, footers and statistics (its layouts against the declarations:
tests/schema/test_plain_layouts.py)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon import file, header_info
from tachyon_format.formats.tachyon.byteswap import swap_byte_order
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema import tachyon_plain as plain
from tests.helpers.paths import CPYTHON_FIXTURES, DATA_DIR, REPO

GOLDEN = sorted(DATA_DIR.glob("*.bin")) + (
    sorted(CPYTHON_FIXTURES.glob("*.bin")) if CPYTHON_FIXTURES.is_dir() else [])
IDS = [f"{p.parent.name}/{p.name}" for p in GOLDEN]


def test_the_names_are_the_schemas():
    modes = tuple(m.name.lower() for m in spec.ProfilingMode)
    features = tuple((f.value, f.name.lower()) for f in spec.CaptureFeature)
    assert (modes, features) == (header_info.MODE_NAMES, header_info.FEATURE_NAMES)
    assert header_info.STATS_KEYS == file.STATS_KEYS


@pytest.mark.parametrize("path", GOLDEN, ids=IDS)
def test_every_golden_file_is_answered_here_as_the_full_reader_does(path):
    data = path.read_bytes()
    for copy in (data, swap_byte_order(data)):
        assert header_info.plain_info(copy) == file.info(copy)
    assert header_info.plain_info(path) == file.info(path)


def outcome(function, data):
    """The dict, or the error's type, message, offset and field path."""
    try:
        return json.dumps(function(data), sort_keys=True)
    except FormatError as exc:
        return ("FormatError", str(exc), exc.offset, exc.path)


BASE = (DATA_DIR / "threads_wall_zstd.bin").read_bytes()
"""A golden file with a statistics block, whose header and tail the property tests rewrite."""
BASES = {"<": BASE, ">": swap_byte_order(BASE)}

u32 = st.one_of(st.sampled_from([0, 1, 2, 5, 6, 55, 56, 64, 1 << 31, (1 << 32) - 1]),
                st.integers(0, (1 << 32) - 1))
u64 = st.one_of(st.sampled_from([0, 1, 63, 64, len(BASE) - 32, len(BASE), 1 << 63]),
                st.integers(0, (1 << 64) - 1))
offsets = st.one_of(st.integers(0, len(BASE) + 8), u64)


@given(order=st.sampled_from(["<", ">"]), version=st.sampled_from([0, 1, 1, 1, 2]),
       py=st.tuples(*[st.integers(0, 255)] * 4), start=u64, interval=u64, samples=u64,
       threads=u32, strings_at=offsets, frames_at=offsets, compression=u32, config=u32)
def test_made_up_headers_get_the_full_readers_answer(order, version, py, start, interval,
                                                     samples, threads, strings_at, frames_at,
                                                     compression, config):
    data = BASES[order]
    head = struct.pack(order + plain.HEADER.format, spec.MAGIC, version, *py, start,
                       interval, samples, threads, strings_at, frames_at, compression, config)
    made = head + data[spec.HEADER_SIZE:]
    assert outcome(header_info.info, made) == outcome(file.info, made)


@given(order=st.sampled_from(["<", ">"]),
       values=st.tuples(*[st.one_of(st.floats(), st.sampled_from([0.0, -0.0, 1.5]))] * 4),
       present=u32, version=st.sampled_from([0, 1, 1, 2]),
       size=st.sampled_from([0, 31, 32, 40, 56, 57, 100, len(BASE)]),
       magic=st.sampled_from([b"TACHSTAT", b"TACHSTAX"]), counts=st.tuples(u32, u32),
       cut=st.sampled_from([0, 0, 0, 40, len(BASE) - 100]))
def test_made_up_tails_get_the_full_readers_answer(order, values, present, version, size, magic,
                                                   counts, cut):
    data = BASES[order]
    stats = struct.pack(order + plain.STATS.format, *values, present, 0, magic, version, size)
    footer = struct.pack(order + "LL", *counts) + data[-24:]
    made = data[: len(data) - 88 - cut] + stats + footer
    assert outcome(header_info.info, made) == outcome(file.info, made)


@pytest.mark.parametrize("path", GOLDEN[:1], ids=IDS[:1])
def test_info_on_the_command_line_loads_neither_numpy_nor_construct(path):
    """The point of this module: ``tachyon-format info`` starts without the heavy imports
    (checked by what a fresh interpreter loaded, not by a timing)."""
    script = ("import sys, runpy; sys.argv = ['tachyon-format', 'info', sys.argv[1]]\n"
              "try:\n    runpy.run_module('tachyon_format', run_name='__main__')\n"
              "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
              "heavy = sorted(m for m in ('numpy', 'construct') if m in sys.modules)\n"
              "print('heavy:', heavy, file=sys.stderr)")
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                         text=True, check=True, cwd=Path(REPO),
                         env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    assert "sample_count" in run.stdout
    assert run.stderr.strip() == "heavy: []"
