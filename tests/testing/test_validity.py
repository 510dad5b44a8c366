"""assert_valid: passes valid files of every readable format, and fails broken ones with
every problem validate reports, each with its offset and field."""

from __future__ import annotations

import re

import pytest

import tachyon_format
from tachyon_format import Problem
from tachyon_format.testing import ProfileBuilder, assert_valid
from tests.helpers.paths import DATA_DIR

GOLDEN = DATA_DIR / "exceptions_mode_zstd.bin"


@pytest.mark.parametrize("fmt", ["tachyon", "pprof", "collapsed", "speedscope", "gperftools",
                                 "pstats", "jsonl"])
def test_valid_files_pass(fmt):
    builder = ProfileBuilder(mode="wall").sample(stack=["app.py:1 main", "app.py:2 f"])
    assert assert_valid(builder.to_bytes(fmt)) == []


def test_golden_files_pass():
    for path in sorted(DATA_DIR.glob("*.bin")):
        assert_valid(path)


def test_a_truncated_file_fails_with_offset_and_field():
    with pytest.raises(AssertionError) as caught:
        assert_valid(GOLDEN.read_bytes()[:100])
    message = str(caught.value)
    # every problem validate finds: both table offsets lie past the end, and the footer
    # (the last bytes of what is left) does not give the file's size
    assert message.startswith("<100 bytes> is not valid: 3 problems\n  1. ")
    assert "exceeds file size 100" in message
    assert "(offset 40, header -> string_table_offset)" in message


def test_the_message_names_a_path(tmp_path):
    path = tmp_path / "broken.bin"
    path.write_bytes(b"XXXX" + GOLDEN.read_bytes()[4:])
    with pytest.raises(AssertionError, match=rf"^{re.escape(str(path))} is not valid: 1 "
                                             r"problem\n  1\. Invalid magic number: "
                                             r"0x58585858 \(offset 0, header -> magic\)"):
        assert_valid(path)
    with pytest.raises(AssertionError, match=r"cannot read: .*No such file"):
        assert_valid(tmp_path / "missing.bin")


def test_a_format_can_be_named():
    with pytest.raises(AssertionError, match=r"expected 'https://www.speedscope.app/file-"
                                             r"format-schema.json', found None \(\$schema\)"):
        assert_valid(b'{"x": 1}', format="speedscope")


PROBLEMS = [
    Problem("unreadable", "Invalid record type 9", offset=12, field="sample -> encoding",
            record=3, region=True),
    Problem("inconsistent", "sample count differs", offset=16, field="header -> sample_count",
            expected="120", found="118"),
    Problem("note", "layout older than 3.15.2's", offset=0, field="header"),
]


def test_every_problem_is_listed_with_its_facts(monkeypatch):
    """validate as it reports Problem objects (tachyon_format.Problem)."""
    monkeypatch.setattr(tachyon_format, "validate", lambda source, format=None: PROBLEMS)
    with pytest.raises(AssertionError) as caught:
        assert_valid(b"any")
    assert str(caught.value).splitlines() == [
        "<3 bytes> is not valid: 2 problems",
        "  1. Invalid record type 9 (region offset 12, record 3, sample -> encoding)",
        "     severity unreadable; region offset 12; field sample -> encoding; record 3",
        "  2. inconsistent: sample count differs: expected 120, found 118 (offset 16, "
        "header -> sample_count)",
        "     severity inconsistent; offset 16; field header -> sample_count; expected 120; "
        "found 118",
        "  (and 1 note, not failing)",
    ]


def test_notes_alone_pass_unless_asked(monkeypatch):
    monkeypatch.setattr(tachyon_format, "validate", lambda source, format=None: PROBLEMS[2:])
    assert assert_valid(b"any") == PROBLEMS[2:]
    with pytest.raises(AssertionError, match=r"1 problem\n  1\. note: layout older"):
        assert_valid(b"any", notes=True)
