"""The public verbs with gperftools files: sniffed by content (whatever the name, in every
layout), written by name or ``format=``, ``info`` and ``validate``; and sniffing claims no
other format's files."""

from __future__ import annotations

import gzip
import io
import struct

import pytest

import tachyon_format
from tachyon_format import FORMATS, FormatError
from tachyon_format.formats import format_for_extension
from tests.helpers.libprofiler import COMMITTED
from tests.helpers.paths import DATA_DIR
from tests.helpers.pprof_text import go_profile_string

MIXED = COMMITTED / "libprofiler_mixed.prof"


@pytest.mark.parametrize("name", ["x.cpu", "x.prof", "x.bin", "x"])
def test_read_sniffs_the_content_whatever_the_name(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(MIXED.read_bytes())
    assert tachyon_format.sniff(path) == "gperftools"
    profile = tachyon_format.read(path)
    assert "gperftools" in profile.extras and len(profile.samples) == 19


def test_bytes_and_streams_read_alike():
    by_path = tachyon_format.read(MIXED)
    by_bytes = tachyon_format.read(MIXED.read_bytes())
    with open(MIXED, "rb") as f:
        by_stream = tachyon_format.read(f)
    for other in (by_bytes, by_stream):
        assert other.samples.values.tolist() == by_path.samples.values.tolist()
        assert other.frames.address.tolist() == by_path.frames.address.tolist()


@pytest.mark.parametrize("layout", ["<I", ">I", "<Q", ">Q"])
@pytest.mark.parametrize("version", [0, 1])
def test_sniff_every_layout(layout, version):
    order, code = layout
    head = struct.pack(f"{order}8{code}", 0, 3, version, 10000, 0, 0, 1, 0)
    assert tachyon_format.sniff(head) == "gperftools"
    assert tachyon_format.read(head).meta.period == 10_000_000


def test_sniffing_claims_no_other_format():
    for golden in sorted(DATA_DIR.glob("*.bin")):
        assert tachyon_format.sniff(golden) == "tachyon", golden.name
    others = [gzip.compress(b"\x0a\x02\x08\x01"), b"\x0a\x04\x08\x01\x10\x02", bytes(64),
              b"main;f 1\n", b'{"$schema": "https://www.speedscope.app/"}',
              struct.pack("<5Q", 0, 3, 0, 0, 0), struct.pack("<5Q", 0, 3, 2, 10, 0),
              struct.pack("<5Q", 0, 4, 0, 10, 0)]
    for data in others:
        assert tachyon_format.sniff(data) != "gperftools", data[:16]


def test_write_by_format_and_by_extension(tmp_path):
    python = tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin")
    tachyon_format.write(python, tmp_path / "y.prof", format="gperftools")
    written = tachyon_format.read(tmp_path / "y.prof")
    assert written.extras["gperftools"].layout.variant.name == "JAVA"
    assert format_for_extension("out.cpu") is FORMATS["gperftools"]
    tachyon_format.write(written, tmp_path / "again.cpu")
    again = tachyon_format.read(tmp_path / "again.cpu")
    assert go_profile_string(again) == go_profile_string(written)
    profile = tachyon_format.read(MIXED)
    tachyon_format.write(profile, tmp_path / "copy.out")  # the profile's own format
    assert (tmp_path / "copy.out").read_bytes() == MIXED.read_bytes()
    tachyon_format.write(profile, tmp_path / "big.cpu", format="gperftools", word_size=8,
                         byte_order=">")
    assert tachyon_format.info(tmp_path / "big.cpu")["byte_order"] == "big"


def test_info_of_a_file_and_of_a_profile():
    facts = tachyon_format.info(MIXED)
    assert facts == {"format": "gperftools", "variant": "cpp", "word_size": 8,
                     "byte_order": "little", "period_us": 10000, "num_records": 19,
                     "text_bytes": facts["text_bytes"]}
    assert facts["text_bytes"] > 1000
    assert tachyon_format.info(tachyon_format.read(MIXED)) == facts


def test_validate_through_the_verbs(tmp_path):
    assert tachyon_format.validate(MIXED) == []
    cut = tmp_path / "cut.prof"
    cut.write_bytes(MIXED.read_bytes()[:100])
    (problem,) = tachyon_format.validate(cut)
    assert "records -> " in problem.field
    assert tachyon_format.validate(io.BytesIO(MIXED.read_bytes()[:30])) != []


def test_a_prof_file_that_is_nothing_gets_the_gperftools_reader_s_words(tmp_path):
    odd = tmp_path / "odd.prof"
    odd.write_bytes(b"XXXXXXXX" + bytes(100))
    with pytest.raises(FormatError, match="not a gperftools CPU profile") as caught:
        tachyon_format.read(odd)
    assert caught.value.path == "header -> header_count"
