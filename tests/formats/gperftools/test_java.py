"""The Java variant's symbol section, read as pprof's ``parseJavaLocations`` reads it.

Small Java-variant files (built with ``struct``) each exercise one rule; the expected
frames are written out, and Go's ``profile.Parse`` must agree with our whole reading.
"""

from __future__ import annotations

import struct

import pytest

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.gperftools.java import go_base, symbol_line
from tachyon_format.formats.gperftools.reader import parse
from tests.helpers.pprof_text import go_profile_string


def java_file(text: bytes, *stacks: list[int], word: str = "I") -> bytes:
    values = [0, 3, 1, 10000, 0]
    for pcs in stacks or ([1, 2, 3],):
        values += [2, len(pcs), *pcs]
    values += [0, 1, 0]
    return struct.pack(f"<{len(values)}{word}", *values) + text


def frames(profile) -> list[tuple[str, str, int, int]]:
    """Per frame: function, file, line, mapping row."""
    f, s = profile.frames, profile.strings
    return [(s[f.funcname[i]], s[f.filename[i]], int(f.lineno[i]), int(f.mapping[i]))
            for i in range(len(f))]


CASES = {
    "file_and_line": (b"0x1 a.f (A.java:10)\n0x2 b.g (B.java:20)\n0x3 c.h (C.java:30)\n",
                      [("a.f", "A.java", 10, -1), ("b.g", "B.java", 20, -1),
                       ("c.h", "C.java", 30, -1)]),
    "functions_keyed_by_name": (b"0x1 f (A.java:1)\n0x2 f (B.java:2)\n0x3 g (C.java:0)\n",
                                [("f", "A.java", 1, -1), ("f", "A.java", 2, -1),
                                 ("g", "C.java", -1, -1)]),
    "later_line_wins": (b"0x1 f (A.java:1)\n0x1 g (B.java:2)\n0x2 h\n0x3 i\n",
                        [("g", "B.java", 2, -1), ("h", "", -1, -1), ("i", "", -1, -1)]),
    "library_path": (b"0x1 memcpy (/lib/x86_64/libc.so.6)\n0x2 f (/)\n0x3 g ()\n",
                     [("memcpy", "libc.so.6", -1, -1), ("f", "/", -1, -1),
                      ("g", ".", -1, -1)]),
    "stub_and_states": (b"0x1 <generated stub/JIT> foo\n0x2 GC\n0x3 VM\n",
                        [("STUB", "", -1, -1), ("GC", "", -1, -1), ("VM", "", -1, -1)]),
    "unnamed_pc_gets_the_catch_all_mapping": (b"0x1 f (A.java:1)\n",
                                              [("f", "A.java", 1, -1), ("", "", -1, 0),
                                               ("", "", -1, 0)]),
    "white_space_and_crlf": (b"  0x0000001\tf (A.java:-4)\r\n\n0x2 g (B.java:99999999999999999999)"
                             b"\r\n0x3 h\t(C.java:7)  \n",
                             [("f", "A.java", -1, -1), ("g", "B.java", -1, -1),
                              ("h", "C.java", 7, -1)]),
    "leading_zeros_are_fine": (b"0x00000000000000000001 f\n0x2 g\n0x3 h\n",
                               [("f", "", -1, -1), ("g", "", -1, -1), ("h", "", -1, -1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbol_rules(name):
    text, expected = CASES[name]
    profile = parse(java_file(text))
    assert frames(profile) == expected
    assert (profile.frames.address == 0).all()


def test_every_rule_as_go_reads_it(go_oracle):
    paths = []
    for name in sorted(CASES):
        path = go_oracle.workdir / f"java-{name}.cpu"
        path.write_bytes(java_file(CASES[name][0], [1, 2, 3], [3, 0, 2]))
        paths.append(path)
    for path, text in zip(paths, go_oracle.profile_strings(paths), strict=True):
        assert not text.startswith("ERROR"), text
        ours = go_profile_string(tachyon_format.read(path), columns=go_oracle.prints_columns)
        assert ours == text, path.name


def test_a_pc_beyond_64_bits_fails_as_in_go(go_oracle):
    data = java_file(b"0x1 f\n0x10000000000000001 g\n")
    path = go_oracle.workdir / "java-overflow.cpu"
    path.write_bytes(data)
    (text,) = go_oracle.profile_strings([path])
    assert text.startswith("ERROR")
    with pytest.raises(FormatError) as caught:
        parse(data)
    assert caught.value.path == "java_symbols -> line 2 -> pc"
    assert caught.value.offset == data.index(b"0x1000")


def test_symbol_line_reads_back():
    lines = [symbol_line(1, b"f", b"a.py", 3), symbol_line(2, b"g (x)", b"b.py", -1),
             symbol_line(3, b"h", b"", 9)]
    profile = parse(java_file(b"".join(lines)))
    assert frames(profile) == [("f", "a.py", 3, -1), ("g (x)", "b.py", -1, -1),
                               ("h", "", -1, -1)]


def test_go_base():
    assert [go_base(p) for p in (b"", b"/", b"//", b"a/b/", b"a", b"/x/y.so")] == [
        b".", b"/", b"/", b"b", b"a", b"y.so"]
