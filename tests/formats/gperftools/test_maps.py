"""The memory map: pprof's line forms and heuristics, each checked against Go's reading.

Every case is a small C++ profile (built here with ``struct``) whose map text exercises one
rule of ``formats/gperftools/maps.py``; the expected mappings are written out, and Go's
``profile.Parse`` must agree with our whole reading (``String()``) when Go is present.
"""

from __future__ import annotations

import struct

import pytest

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.gperftools import maps
from tachyon_format.formats.gperftools.reader import parse
from tests.helpers.pprof_text import go_profile_string


def cpp_file(text: bytes, *stacks: list[int]) -> bytes:
    values = [0, 3, 0, 10000, 0]
    for pcs in stacks or ([0x401234, 0x402000],):
        values += [1, len(pcs), *pcs]
    values += [0, 1, 0]
    return struct.pack(f"<{len(values)}Q", *values) + text


def mapping_rows(profile) -> list[tuple]:
    m, s = profile.mappings, profile.strings
    return [(int(m.start[j]), int(m.limit[j]), int(m.offset[j]), s[m.filename[j]],
             s[m.build_id[j]]) for j in range(len(m.start))]


FAKE = (0, 2**64 - 1, 0, "", "")

CASES = {
    "proc_form": (b"00400000-00500000 r-xp 00000000 08:01 77 /bin/app\n",
                  [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "not_executable_skipped": (b"00400000-00500000 r--p 00000000 00:00 0 /bin/app\n"
                               b"00600000-00700000 rw-p 00000000 00:00 0 [heap]\n", [FAKE]),
    "variables": (b"exe = /bin/app\n00400000-00500000 r-xp 00000000 00:00 0 $exe\n",
                  [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "first_definition_wins": (b"exe=/bin/a\nexe=/bin/b\n"
                              b"00400000-00500000 r-xp 00000000 00:00 0 $exe\n",
                              [(0x400000, 0x500000, 0, "/bin/a", "")]),
    "unicode_space_trimmed": ("exe=\u00a0/bin/app\u3000\n".encode()
                              + b"00400000-00500000 r-xp 00000000 00:00 0 $exe\n",
                              [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "glog_prefix": (b"profiler.cc:42] 00400000-00500000 r-xp 00000000 00:00 0 /bin/app\n",
                    [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "crlf": (b"00400000-00500000 r-xp 00000000 00:00 0 /bin/app\r\n",
             [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "brief_with_build_id": (b"0x400000-0x500000 r-xp /bin/app (@0) 00c0ffee\n",
                            [(0x400000, 0x500000, 0, "/bin/app", "00c0ffee")]),
    "adjacent_merged": (b"00400000-00401000 r-xp 00000000 00:00 0 /bin/app\n"
                        b"00401000-00500000 r-xp 00001000 00:00 0 /bin/app\n",
                        [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "main_binary_first": (b"7f0000000000-7f0000100000 r-xp 00000000 00:00 0 /lib/libc.so.6\n"
                          b"00400000-00500000 r-xp 00000000 00:00 0 /bin/app\n",
                          [(0x400000, 0x500000, 0, "/bin/app", ""),
                           (0x7F0000000000, 0x7F0000100000, 0, "/lib/libc.so.6", "")]),
    "anon_hugepage_dropped": (b"00400000-00401000 r-xp 00000000 00:00 0 /anon_hugepage\n"
                              b"00401000-00500000 r-xp 00001000 00:00 0 /bin/app\n",
                              [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "rebased_to_0x400000": (b"00401000-00500000 r-xp 00001000 00:00 0 /bin/app\n",
                            [(0x400000, 0x500000, 0, "/bin/app", "")]),
    "stretched_by_offset": (b"00402000-00500000 r-xp 00100000 00:00 0 /bin/app\n",
                            [(0x302000, 0x500000, 0, "/bin/app", "")]),
    "numbers_beyond_64_bits_ignored": (b"1ffffffffffffffff-2 r-xp 0 00:00 0 /x\n", [FAKE]),
    "garbage_lines_ignored": (b"hello\n\n--- Memory map: ---\n\xff\xfe\n", [FAKE]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_map_rules(name):
    text, expected = CASES[name]
    assert mapping_rows(parse(cpp_file(text))) == expected


def test_every_rule_as_go_reads_it(go_oracle):
    paths = []
    for name in sorted(CASES):
        path = go_oracle.workdir / f"map-{name}.prof"
        path.write_bytes(cpp_file(CASES[name][0], [0x401234, 0x402000, 0x7F0000000100, 0],
                                  [0x300000]))
        paths.append(path)
    for path, text in zip(paths, go_oracle.profile_strings(paths), strict=True):
        assert not text.startswith("ERROR"), text
        ours = go_profile_string(tachyon_format.read(path), columns=go_oracle.prints_columns)
        assert ours == text, path.name


def test_a_line_too_long_for_go_fails_as_in_go(go_oracle):
    long_line = b"00400000-00500000 r-xp 00000000 00:00 0 /" + b"a" * 70000 + b"\n"
    path = go_oracle.workdir / "map-long-line.prof"
    path.write_bytes(cpp_file(long_line))
    (text,) = go_oracle.profile_strings([path])
    assert text.startswith("ERROR") and "too long" in text
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(path)
    assert caught.value.path == "map_text -> line 1"


def test_longest_line_go_reads():
    line = b"00400000-00500000 r-xp 00000000 00:00 0 /" + b"a" * 100
    line += b"b" * (65535 - len(line))
    assert len(line) == maps.spec.MAX_TEXT_LINE
    assert mapping_rows(parse(cpp_file(line)))[0][3].endswith("b")
    with pytest.raises(FormatError):
        parse(cpp_file(line + b"c\n"))


def test_nul_in_the_map_is_refused_though_go_ignores_it():
    """A deliberate difference (docs/formats/gperftools.md): a NUL byte means the bytes after
    the trailer are not text; pprof would skip such lines."""
    data = cpp_file(b"00400000-00500000 r-xp 00000000 00:00 0 /bin/app\n\0\0\0\0")
    with pytest.raises(FormatError) as caught:
        parse(data)
    assert caught.value.path == "map_text -> line 2"
    assert caught.value.offset == len(data) - 4


def test_text_lines_split_as_go_scanner():
    assert maps.text_lines(b"", 0, "t") == []
    assert maps.text_lines(b"\n", 0, "t") == [(0, b"")]
    assert maps.text_lines(b"a\r\nb", 10, "t") == [(10, b"a"), (13, b"b")]
    assert maps.text_lines(b"a\n\nb\n", 0, "t") == [(0, b"a"), (2, b""), (3, b"b")]


def test_go_trim_space():
    assert maps.go_trim_space(b" \t\v\x85x\x85 ") == b"\x85x\x85"  # a lone byte is no rune
    assert maps.go_trim_space("\u2003x\u00a0".encode()) == b"x"
    assert maps.go_trim_space(b"\xffx") == b"\xffx"
