"""The one way input is opened (``sources.load``, ``read_head``) and whole files are written
(``whole_file_writer``): each kind of source gives the file's bytes, bytes given are viewed,
not copied, and a whole-file writer keeps its builder's options."""

from __future__ import annotations

import inspect
import io
import mmap

import pytest

from tachyon_format import FORMATS
from tachyon_format.formats.sources import (
    load,
    loaded,
    read_bytes,
    read_ends,
    read_head,
    write_bytes,
)
from tests.helpers.paths import DATA_DIR

GOLDEN = DATA_DIR / "threads_wall_zstd.bin"


def test_every_kind_of_source_gives_the_file_s_bytes():
    data = GOLDEN.read_bytes()
    with open(GOLDEN, "rb") as f:
        by_stream = load(f)
    by_path = load(GOLDEN)
    by_str = load(str(GOLDEN))
    assert bytes(by_path.data) == bytes(by_str.data) == bytes(by_stream.data) == data
    assert by_path.name == by_str.name == str(GOLDEN) == by_stream.name
    assert by_path.mapping is None
    assert load(bytearray(data)).name == "<bytes>"
    assert load(io.BytesIO(data)).name == "<stream>"
    assert read_bytes(memoryview(data)) == read_bytes(GOLDEN) == data


def test_bytes_given_are_viewed_not_copied():
    data = bytearray(b"HCAT" + bytes(60))
    view = load(data).data
    data[0] = ord("X")
    assert bytes(view[:4]) == b"XCAT"


def test_a_path_is_mapped_on_request_and_unmapped_after(tmp_path):
    with loaded(GOLDEN, mapped=True) as file:
        assert isinstance(file.mapping, mmap.mmap)
        assert file.data[:] == GOLDEN.read_bytes()
    assert file.mapping.closed
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with loaded(empty, mapped=True) as file:  # (mmap cannot map an empty file)
        assert file.data == b"" and file.mapping is None


@pytest.mark.parametrize("source", [io.StringIO("HCAT"), 42, None])
def test_what_is_no_binary_source_is_refused(source):
    with pytest.raises(TypeError, match="binary"):
        load(source)


def test_the_head_of_a_stream_leaves_the_whole_to_read():
    data = GOLDEN.read_bytes()
    head, rest = read_head(io.BytesIO(data), 16)
    assert head == data[:16] and read_bytes(rest) == data
    head, rest = read_head(GOLDEN, 16)
    assert head == data[:16] and rest == GOLDEN
    head, rest = read_head(data, 1 << 30)
    assert head == data and rest is data


@pytest.mark.parametrize(("head", "tail"), [(64, 88), (16, 10_000), (10_000, 1)])
def test_the_ends_of_a_path_or_bytes_and_none_of_a_stream(head, tail):
    data = GOLDEN.read_bytes()
    expected = (data[:head], data[max(0, len(data) - tail):], len(data))
    assert read_ends(GOLDEN, head, tail) == read_ends(bytearray(data), head, tail) == expected
    assert read_ends(io.BytesIO(data), head, tail) is None


def test_bytes_go_to_a_path_or_a_stream(tmp_path):
    out = io.BytesIO()
    write_bytes(b"abc", out)
    write_bytes(b"abc", tmp_path / "out")
    assert out.getvalue() == (tmp_path / "out").read_bytes() == b"abc"
    assert not out.closed


@pytest.mark.parametrize("name", ["gecko", "pstats", "speedscope", "jsonl", "callgrind",
                                  "chrome-trace", "gperftools"])
def test_a_whole_file_writer_takes_its_builder_s_options(name):
    write = FORMATS[name].verb("write")
    builder = getattr(inspect.getmodule(write), "build", None) or \
        inspect.getmodule(write).dumps
    expected = [p.name for p in inspect.signature(builder).parameters.values()
                if p.kind is p.KEYWORD_ONLY]
    assert expected and list(FORMATS[name].write_options()) == expected
