"""``tachyon_format.write``'s destinations, handled in one place for every writer: a path, a
binary file object, ``"-"`` (standard output) and a ``.gz`` name no format claims get the
same file; a writer that fails leaves no file behind."""

from __future__ import annotations

import gzip
import io
import sys

import pytest

import tachyon_format
from tachyon_format import FORMATS
from tachyon_format.formats import format_for_extension
from tests.helpers.paths import DATA_DIR

GOLDEN = DATA_DIR / "threads_wall_zstd.bin"
WRITERS = [name for name, f in FORMATS.items() if f.verbs.get("write")]
FIXED_OPTIONS = {"gecko": {"start_time_ms": 0.0, "pid": 1}, "jsonl": {"run_id": "run"}}
"""What a writer would otherwise take from this process or the clock."""


@pytest.fixture(scope="module")
def profile():
    return tachyon_format.read(GOLDEN)


@pytest.mark.parametrize("name", WRITERS)
def test_every_destination_gets_the_same_file(name, profile, tmp_path, monkeypatch):
    chosen = FORMATS[name]
    options = FIXED_OPTIONS.get(name, {})
    path = tmp_path / chosen.file_name()
    tachyon_format.write(profile, path, format=name, **options)
    expected = path.read_bytes()
    assert expected

    stream = io.BytesIO()
    tachyon_format.write(profile, stream, format=name, **options)
    assert stream.getvalue() == expected

    standard_output = io.BytesIO()
    text = io.TextIOWrapper(standard_output)
    monkeypatch.setattr(sys, "stdout", text)
    tachyon_format.write(profile, "-", format=name, **options)
    monkeypatch.undo()
    assert standard_output.getvalue() == expected
    text.detach()

    packed = tmp_path / (chosen.file_name("packed") + ".gz")
    if format_for_extension(packed.name) is None:  # (a .gz that a format claims is its own)
        tachyon_format.write(profile, packed, **options)
        assert gzip.decompress(packed.read_bytes()) == expected


@pytest.mark.parametrize("name", ["tachyon", "collapsed", "gecko"])
def test_a_failing_writer_leaves_no_gz_file(name, profile, tmp_path):
    aggregated = tachyon_format.read(GOLDEN, aggregate=True)  # no timeline: Tachyon refuses
    options = {"collapsed": {"sample_type": "no such type"},
               "gecko": {"start_time_ms": "not a number"}}.get(name, {})
    target = tmp_path / (FORMATS[name].file_name() + ".gz")
    with pytest.raises((ValueError, TypeError)):
        tachyon_format.write(aggregated, target, **options)
    assert not target.exists()
