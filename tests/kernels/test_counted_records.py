"""The counted-record kernels against construct's declaration of gperftools records.

The oracle is ``schema.gperftools.profile(word_size, order)``, which parses the same bytes
record by record; hypothesis draws records (including empty ones and the trailer's look-alikes
inside pcs) in every layout.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.kernels.counted_records import (
    encode_counted_records,
    gather_counted_records,
    scan_counted_records,
)
from tachyon_format.schema import gperftools as G

LAYOUTS = [(4, "<"), (4, ">"), (8, "<"), (8, ">")]
TRAILER = (0, 1, 0)


def layout_and_records():
    def records(layout):
        top = (1 << (8 * layout[0])) - 1
        word = st.integers(0, top) | st.sampled_from([0, 1, 2])
        record = st.tuples(st.integers(1, top) | st.just(0), st.lists(word, max_size=6))
        return st.tuples(st.just(layout), st.lists(record, max_size=12).filter(
            lambda rs: all(not (c == 0 and pcs == [0]) for c, pcs in rs)))
    return st.sampled_from(LAYOUTS).flatmap(records)


def file_bytes(layout, records, text=b"") -> bytes:
    size, order = layout
    code = {4: "I", 8: "Q"}[size]
    values = [0, 3, 0, 1, 0]
    for count, pcs in records:
        values += [count, len(pcs), *pcs]
    values += list(TRAILER)
    return struct.pack(f"{order}{len(values)}{code}", *values) + text


def as_words(data: bytes, layout) -> np.ndarray:
    size, order = layout
    return np.frombuffer(data, dtype=f"{order}u{size}", count=len(data) // size)


@settings(max_examples=200)
@given(layout_and_records(), st.binary(max_size=9))
def test_scan_and_gather_agree_with_the_declaration(drawn, text):
    layout, records = drawn
    data = file_bytes(layout, records, text)
    words = as_words(data, layout)
    walk = scan_counted_records(words, G.HEADER_WORDS, terminator=TRAILER)
    parsed = G.profile(*layout).parse(data)
    assert walk.stop == "terminator"
    assert walk.end * layout[0] == len(data) - len(parsed.text)
    heads, offsets, payload = gather_counted_records(words, walk.starts)
    got = [(int(h[0]), payload[offsets[i] : offsets[i + 1]].tolist())
           for i, h in enumerate(heads)]
    assert got == [(r.count, list(r.pcs)) for r in parsed.records[:-1]]
    assert heads.shape == (len(records), 2)


@settings(max_examples=200)
@given(layout_and_records())
def test_encode_is_the_inverse_of_gather(drawn):
    layout, records = drawn
    heads = np.array([(c, len(p)) for c, p in records], np.uint64).reshape(-1, 2)
    offsets = np.concatenate([[0], np.cumsum([len(p) for _, p in records])]).astype(np.int64)
    payload = np.array([w for _, p in records for w in p], np.uint64)
    dtype = np.dtype(f"{layout[1]}u{layout[0]}")
    encoded = encode_counted_records(heads, offsets, payload, dtype)
    assert encoded.tobytes() == file_bytes(layout, records)[5 * layout[0] : -3 * layout[0]]
    walk = scan_counted_records(encoded, 0)
    assert walk.stop == "end" and walk.end == encoded.size
    again = gather_counted_records(encoded, walk.starts)
    assert np.array_equal(again[0], heads) and np.array_equal(again[1], offsets)
    assert np.array_equal(again[2], payload)


def test_the_walk_reports_where_it_stops():
    words = np.array([5, 2, 7, 8, 3, 4, 1], np.uint64)  # record 1 wants 4 words, 1 is left
    walk = scan_counted_records(words, 0)
    assert (walk.stop, walk.end, walk.starts.tolist()) == ("overrun", 4, [0])
    walk = scan_counted_records(words[:5], 0)
    assert (walk.stop, walk.end, walk.starts.tolist()) == ("short", 4, [0])
    walk = scan_counted_records(words[:4], 0)
    assert (walk.stop, walk.end) == ("end", 4)
    huge = np.array([1, 2**64 - 1, 0], np.uint64)  # an absurd length is refused, not allocated
    assert scan_counted_records(huge, 0).stop == "overrun"


def test_a_terminator_inside_a_payload_is_data():
    words = np.array([1, 3, 0, 1, 0, 0, 1, 0, 9, 9], np.uint64)
    walk = scan_counted_records(words, 0, terminator=TRAILER)
    assert (walk.stop, walk.end, walk.starts.tolist()) == ("terminator", 8, [0])


def test_encode_checks_the_length_slot():
    with pytest.raises(ValueError):
        encode_counted_records(np.array([[1, 2]], np.uint64), np.array([0, 1]),
                               np.array([5], np.uint64), np.uint64)
