"""Wrappers and sniffing: gzip, zstd, raw; other gzip'd or zstd'd data is not claimed."""

from __future__ import annotations

import gzip
import json

import pytest

import tachyon_format
from tachyon_format.formats.pprof.compression import (
    compress,
    decompress,
    looks_like_profile,
    sniff,
)
from tachyon_format.formats.pprof.writer import dumps
from tests.helpers.paths import DATA_DIR

PROFILE = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
MESSAGE = dumps(PROFILE, compression="none")


@pytest.mark.parametrize("kind", ["gzip", "zstd", "none"])
def test_every_wrapper_is_sniffed_and_unwrapped(kind):
    data = compress(MESSAGE, kind)
    assert sniff(data[:4096])
    assert tachyon_format.sniff(data) == "pprof"
    assert bytes(decompress(data)[0]) == MESSAGE


def test_concatenated_gzip_members_are_one_message():
    half = len(MESSAGE) // 2
    data = gzip.compress(MESSAGE[:half]) + gzip.compress(MESSAGE[half:])
    assert bytes(decompress(data)[0]) == MESSAGE


@pytest.mark.parametrize("data", [
    gzip.compress(json.dumps({"shared": {"frames": []}}).encode()),
    gzip.compress((DATA_DIR / "threads_wall_zstd.bin").read_bytes()),
    gzip.compress(b"main;work 10\nmain;idle 3\n"),
    compress(b"\x00" * 64 + b"gperftools", "zstd"),
    gzip.compress(b"%PDF-1.7\n"),
    b"HCAT" + bytes(60),
    b"",
    gzip.compress(b""),
], ids=["gzip-json", "gzip-tachyon", "gzip-collapsed", "zstd-zeros", "gzip-pdf",
        "tachyon-magic", "empty", "gzip-empty"])
def test_other_data_is_not_claimed(data):
    assert not sniff(data[:4096])
    assert tachyon_format.sniff(data) != "pprof"


def test_sniff_decompresses_only_a_prefix():
    huge = gzip.compress(MESSAGE * 50)
    assert sniff(huge[:4096])
    assert not looks_like_profile(b"\x0a\x02\x08", complete=True)
    assert looks_like_profile(b"\x0a\x04\x08\x01\x10\x02\x12")


def test_tachyon_files_stay_tachyon():
    for path in DATA_DIR.glob("*.bin"):
        assert tachyon_format.sniff(path) == "tachyon", path.name
