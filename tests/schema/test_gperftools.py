"""Every declaration of ``schema/gperftools.py`` against real bytes, in all four layouts.

``roundtrip()`` is construct's ``common()`` idiom (parse gives the object, build gives the
bytes back, the ``.compile()``d twin agrees). Bytes come from ``struct`` (independent of the
schema), from pprof's test files and the committed libprofiler profiles, and from those files
re-encoded word by word into the other three layouts. The text grammar is checked on lines
libprofiler writes and on pprof's corner cases.
"""

from __future__ import annotations

import struct

import construct as cs
import pytest

from tachyon_format.formats.gperftools.header import layout_of
from tachyon_format.schema import gperftools as G
from tests.helpers.construct_checks import plain, roundtrip
from tests.helpers.libprofiler import COMMITTED_PROFILES, PPROF_PROFILES

LAYOUTS = [(4, "<"), (4, ">"), (8, "<"), (8, ">")]
_CODE = {4: "I", 8: "Q"}


def words(word_size: int, order: str, *values: int) -> bytes:
    return struct.pack(f"{order}{len(values)}{_CODE[word_size]}", *values)


def recode(data: bytes, source: tuple[int, str], target: tuple[int, str]) -> bytes:
    """A file's binary part re-encoded word by word into *target* (the text is copied)."""
    (ws, os_), (wt, ot) = source, target
    n = len(data) // ws
    values = list(struct.unpack(f"{os_}{n}{_CODE[ws]}", data[: n * ws]))
    body = G.profile(ws, os_).parse(data)
    binary_words = G.HEADER_WORDS + sum(2 + r.num_pcs for r in body.records)
    return words(wt, ot, *values[:binary_words]) + body.text


# --- the declarations ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_header(layout):
    header = {"header_count": 0, "num_header_slots": 3, "version": "CPP", "period_us": 10000,
              "padding": 0}
    roundtrip(G.header(*layout), words(*layout, 0, 3, 0, 10000, 0), header,
              size=5 * layout[0])
    java = {**header, "version": "JAVA", "period_us": 1}
    roundtrip(G.header(*layout), words(*layout, 0, 3, 1, 1, 0), java, size=5 * layout[0])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("bad", [(1, 3, 0, 1, 0), (0, 4, 0, 1, 0), (0, 3, 0, 1, 7),
                                 (0, 3, 2, 1, 0), (0, 3, 0, 0, 0)])
def test_header_constants_are_checked(layout, bad):
    with pytest.raises(cs.ValidationError if 2 in bad[2:4] or bad[3] == 0 else cs.ConstError):
        G.header(*layout).parse(words(*layout, *bad))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_record_and_trailer(layout):
    roundtrip(G.record(*layout), words(*layout, 5, 3, 0xA0000, 0xC0000, 0xE0000),
              {"count": 5, "num_pcs": 3, "pcs": [0xA0000, 0xC0000, 0xE0000]})  # the spec's
    roundtrip(G.record(*layout), words(*layout, 0, 0), {"count": 0, "num_pcs": 0, "pcs": []})
    roundtrip(G.trailer(*layout), words(*layout, 0, 1, 0), {"count": 0, "num_pcs": 1, "pc": 0},
              size=3 * layout[0])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_profile_stops_at_the_trailer(layout):
    data = words(*layout, 0, 3, 0, 100, 0, 2, 2, 7, 8, 0, 1, 0) + b"map text\n"
    obj = {"header": {"header_count": 0, "num_header_slots": 3, "version": "CPP",
                      "period_us": 100, "padding": 0},
           "records": [{"count": 2, "num_pcs": 2, "pcs": [7, 8]},
                       {"count": 0, "num_pcs": 1, "pcs": [0]}],
           "text": b"map text\n"}
    roundtrip(G.profile(*layout), data, obj)
    # words after the trailer are text, even when they look like records
    tail = words(*layout, 1, 1, 5)
    parsed = G.profile(*layout).parse(words(*layout, 0, 3, 0, 1, 0, 0, 1, 0) + tail)
    assert len(parsed.records) == 1 and parsed.text == tail


def test_word_rejects_other_sizes():
    with pytest.raises(ValueError):
        G.word(2, "<")
    with pytest.raises(ValueError):
        G.header(8, "=")


# --- real files -----------------------------------------------------------------------------------

REAL = [*PPROF_PROFILES, *COMMITTED_PROFILES]


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_real_files_round_trip_in_every_layout(path):
    data = path.read_bytes()
    source = layout_of(data)[:2]
    for layout in LAYOUTS:
        try:
            copy = recode(data, source, layout)
        except struct.error:  # 64-bit addresses do not fit 32-bit words
            assert layout[0] == 4 and source[0] == 8
            continue
        assert layout_of(copy)[:2] == layout
        parsed = G.profile(*layout).parse(copy)
        assert G.profile(*layout).build(parsed) == copy
        assert plain(G.profile(*layout).compile().parse(copy)) == plain(parsed)
        assert parsed.records[-1] == {"count": 0, "num_pcs": 1, "pcs": [0]}


def test_real_files_layouts():
    layouts = {path.name: layout_of(path.read_bytes()) for path in REAL}
    assert layouts["java.cpu"] == (4, "<", G.Variant.JAVA)
    for name in ("cppbench.cpu", "gobench.cpu", "go.crc32.cpu", "libprofiler_mixed.prof",
                 "libprofiler_hot.prof"):
        if name in layouts:
            assert layouts[name] == (8, "<", G.Variant.CPP)


# --- the text grammar -----------------------------------------------------------------------------


def test_proc_maps_line_as_libprofiler_writes_it():
    old = b"00400000-00fcb000 r-xp 00000000 00:00 21306940    cppbench_server_main"
    new = b"7f5e53883000-7f5e53a31000 r-xp 001a0000 08:01 1234 /lib/libc-2.15.so"
    assert G.PROC_MAPS_LINE.match(old).groups() == (
        b"00400000", b"00fcb000", b"r-xp", b"00000000", b"cppbench_server_main")
    assert G.PROC_MAPS_LINE.match(new).group(4, 5) == (b"001a0000", b"/lib/libc-2.15.so")
    spaced = b"00400000-00500000 r-xp 00000000 00:00 1 /a dir/with spaces"
    assert G.PROC_MAPS_LINE.match(spaced).group(5) == b"/a"  # pprof's \S+ stops at a space


def test_brief_maps_line_with_offset_and_build_id():
    line = b"0x400000-0x500000 r-xp /bin/app (@1000) 0123abcd"
    assert G.PROC_MAPS_LINE.match(line) is None
    assert G.BRIEF_MAPS_LINE.match(line).groups() == (
        b"400000", b"500000", b"r-xp", b"/bin/app", b"1000", b"0123abcd")


def test_go_white_space_has_no_vertical_tab():
    assert G.PROC_MAPS_LINE.match(b"1000-2000 r-xp 0 00:00 0\vfile").group(5) is None
    assert G.PROC_MAPS_LINE.match(b"1000-2000 r-xp 0 00:00 0\tfile").group(5) == b"file"
    assert G.JAVA_SYMBOL_LINE.match(b"0x1\vname") is None
    assert G.JAVA_SYMBOL_LINE.match(b"0x1\tname").group(2) == b"name"


def test_log_prefix_and_java_forms():
    assert G.LOG_PREFIX.match(b"profiler.cc:123] 1000-2000 r-xp").end() == 17
    assert G.JAVA_FILE_LINE.match(b"com.example.f (File.java:12)").groups() == (
        b"com.example.f", b"File.java", b"12")
    # greedy, as in Go: a file name holding " (" is split there (docs/formats/gperftools.md)
    assert G.JAVA_FILE_LINE.match(b"f (a (b):c.java:-3)").groups() == (b"f (a", b"b):c.java",
                                                                        b"-3")
    assert G.JAVA_PATH.match(b"memcpy (/lib/libc.so)").groups() == (b"memcpy", b"/lib/libc.so")
    assert G.LIBRARY_NAME.search(b"/lib/libc-2.15.so") and G.LIBRARY_NAME.search(b"x.so.6")
    assert not G.LIBRARY_NAME.search(b"/usr/bin/sober")
