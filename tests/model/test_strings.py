"""Strings: the bytes are kept, text is shown as CPython's reader shows it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tachyon_format
from tachyon_format import Strings
from tests.helpers.paths import DATA_DIR


@given(st.lists(st.binary(max_size=12), max_size=30))
def test_raw_bytes_come_back_and_text_is_cpythons_decode(items):
    strings = Strings.from_raw(items)
    assert len(strings) == len(items)
    assert strings.raws() == items
    assert [strings.raw(i) for i in range(len(items))] == items
    assert list(strings) == [item.decode("utf-8", "replace") for item in items]
    assert strings[:] == strings.texts()
    valid = [_is_utf8(item) for item in items]
    assert strings.is_valid_utf8().tolist() == valid


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@given(st.lists(st.text(max_size=8), max_size=20))
def test_from_texts_is_utf8(texts):
    strings = Strings.from_texts(texts)
    assert strings.texts() == texts
    assert strings.raws() == [t.encode("utf-8", "surrogateescape") for t in texts]
    for text in set(texts):
        assert strings.index(text) == texts.index(text)
        assert text in strings


def test_spans_may_point_into_a_table_as_stored():
    table = b"\x02ab\x01c\x00"
    strings = Strings(table, np.array([1, 4, 6]), np.array([3, 5, 6]))
    assert strings.raws() == [b"ab", b"c", b""]
    assert strings[-1] == "" and strings[0] == "ab"


def test_bad_spans_are_refused():
    with pytest.raises(ValueError):
        Strings(b"abc", np.array([0]), np.array([4]))
    with pytest.raises(ValueError):
        Strings(b"abc", np.array([2]), np.array([1]))
    with pytest.raises(IndexError):
        Strings.from_texts(["a"]).raw(1)
    with pytest.raises(ValueError, match="not in the string table"):
        Strings.from_texts(["a"]).index("b")


def test_equality_is_by_bytes():
    assert Strings.from_raw([b"\xff"]) != Strings.from_raw([b"\xfe"])  # same text, other bytes
    assert Strings.from_raw([b"\xff"]).texts() == Strings.from_raw([b"\xfe"]).texts()
    assert Strings.from_texts(["a", "b"]) == ["a", "b"]


def test_a_real_profile_with_invalid_utf8_keeps_its_bytes():
    """Golden file: three entries patched to invalid UTF-8 (tests/data/README.md)."""
    profile = tachyon_format.read(DATA_DIR / "invalid_utf8_strings.bin")
    strings = profile.strings
    invalid = np.flatnonzero(~strings.is_valid_utf8()).tolist()
    assert len(invalid) == 3
    raws = [strings.raw(i) for i in invalid]
    assert len(set(raws)) == 3
    texts = [strings[i] for i in invalid]
    assert len(set(texts)) == 2 and all("\ufffd" in t for t in texts)


@given(st.lists(st.sampled_from([b"", b"a", b"ab", b"ba", b"\xff", b"a\xff"]), max_size=30),
       st.sampled_from([b"", b"a", b"ab", b"\xff", b"zz"]))
def test_rows_of_finds_the_entries_with_those_bytes(items, raw):
    strings = Strings.from_raw(items)
    assert strings.rows_of(raw).tolist() == [i for i, item in enumerate(items) if item == raw]


@given(st.lists(st.binary(max_size=3), max_size=12), st.data())
def test_text_ids_are_equal_exactly_for_entries_that_show_alike(items, data):
    strings = Strings.from_raw(items)
    shown = [*strings.texts(), ""]  # an index past the table shows as ""
    indices = data.draw(st.lists(st.integers(0, len(items) + 3), max_size=20))
    ids = strings.text_ids(np.array(indices, np.int64)).tolist()
    for index, id_ in zip(indices, ids, strict=True):
        text = shown[min(index, len(items))]
        assert id_ == (strings.index(text) if text in strings else len(items))
    assert strings.text_ids(len(items)) == strings.text_ids(len(items) + 7)
