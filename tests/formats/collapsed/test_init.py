"""Sniffing collapsed stacks: every collapsed file here and in the shared fixtures, and none of
the other formats' files."""

from __future__ import annotations

import codecs

import pytest

import tachyon_format
from tachyon_format.formats.collapsed import sniff
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES


def test_files_of_every_format():
    files = [p for p in [*DATA_DIR.rglob("*"), *SHARED_FIXTURES.rglob("*")] if p.is_file()]
    collapsed = [p for p in files if p.name.endswith(".collapsed.txt")
                 or "stackcollapse" in p.parts]
    for path in files:
        expected = "collapsed" if path in collapsed and path.stat().st_size else None
        if expected or tachyon_format.sniff(path) == "collapsed":
            assert tachyon_format.sniff(path) == expected, path


@pytest.mark.parametrize("head, expected", [
    (b"a;b 1\n", True),
    (b"a;b 1", True),                                  # a whole file without a final \n
    (b"# comment\n// comment\n\nmain;f 3\r\n", True),
    (codecs.BOM_UTF16_BE + "a;b 2\n".encode("utf-16-be"), True),
    (b"a;b 1\nx\n", False),                            # one line in two is no stack line
    (b"a;b\n", False),
    (b'{"a": 1\n', False),                             # JSON
    (b"  1   10000000: 1 2 3\n", False),               # pprof's text view
    (b"a;b 1\n\x00\x01", False),
    (b"x" * 2000 + b";" + b"y" * 3000, True),          # a first line longer than the head
    (b"\xff\xfe\x00", False),
])
def test_heads(head, expected):
    assert sniff(head) is expected
