"""The string and frame tables: the scanned and vectorised paths against the construct
declarations, which say what each entry is."""

from __future__ import annotations

import construct as cs
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.formats.tachyon import tables
from tachyon_format.schema import tachyon as spec

_U32 = st.integers(0, 0xFFFFFFFF)
_I32 = st.integers(-(2**31), 2**31 - 1)
_FRAME_ENTRY = st.fixed_dictionaries({
    "filename_idx": _U32, "funcname_idx": _U32, "lineno": _I32, "end_lineno_delta": _I32,
    "column": _I32, "end_column_delta": _I32, "opcode": st.none() | st.integers(0, 254),
})


def _padded(varint: bytes, extra: int) -> bytes:
    """The same value with *extra* redundant continuation groups (still <= 10 bytes)."""
    if not extra:
        return varint
    return bytes([b | 0x80 for b in varint]) + b"\x80" * (extra - 1) + b"\x00"


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAME_ENTRY, max_size=40), st.binary(max_size=8), st.data())
def test_fast_frame_table_equals_construct(entries, tail, data):
    raw = b"".join(spec.FRAME.build(e) for e in entries)
    if entries and data.draw(st.booleans()):  # a non-canonical (padded) first field
        first = spec.FRAME.build(entries[0])
        length = len(spec.FRAME.subcons[0].build(entries[0]["filename_idx"]))
        extra = data.draw(st.integers(1, 10 - length))
        raw = _padded(first[:length], extra) + raw[length:]
    cut = data.draw(st.integers(0, len(raw)))  # truncated tables must not pass the fast path
    blob = raw[:cut] + (tail if cut == len(raw) else b"")
    fast = tables.fast_frames(memoryview(blob), len(entries))
    try:
        expected = tables.frames_from_entries(
            cs.Array(len(entries), spec.FRAME).parse(blob))
    except cs.ConstructError:
        assert fast is None
        return
    if fast is None:  # allowed: construct then decides (e.g. a padded varint)
        return
    frames, size = fast
    assert size == len(raw)
    for name, column in expected.columns().items():
        got = frames.columns()[name]
        assert got.dtype == column.dtype, name
        assert got.tolist() == column.tolist(), name


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=20), st.integers(0, 400), st.data())
def test_string_spans_equal_construct(texts, cut, data):
    raw = b"".join(spec.STRING.build({"text": t}) for t in texts)
    blob = raw[: min(cut, len(raw))] if data.draw(st.booleans()) else raw
    spans = tables.string_spans(memoryview(blob), len(texts))
    try:
        expected = [s.text for s in cs.Array(len(texts), spec.STRING).parse(blob)]
    except cs.ConstructError:
        assert spans is None
        return
    assert [blob[a:b] for a, b in zip(*spans, strict=True)] == expected


