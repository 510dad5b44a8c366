"""The frame and status notation: read and printed back, and in step with the library."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.testing.notation import (
    STATUS_BITS,
    Frame,
    frame_text,
    parse_frame,
    parse_status,
    status_text,
)


def test_status_names_are_thread_status_names():
    assert tuple(bit.name for bit in tachyon_format.ThreadStatus) == STATUS_BITS
    for bit in tachyon_format.ThreadStatus:
        assert parse_status(bit.name.lower()) == bit == parse_status(int(bit))


@given(st.integers(0, 255))
def test_status_text_reads_back(status):
    text = status_text(status)
    assert parse_status(text) == status
    assert (status >= 64) == text.endswith(hex(status & 0xC0))


@pytest.mark.parametrize(("text", "frame"), [
    ("app.py:10 main", Frame("app.py", "main", 10)),
    ("C:\\src\\app.py:7 Parser.parse", Frame("C:\\src\\app.py", "Parser.parse", 7)),
    ("app.py main", Frame("app.py", "main")),
    ("<GC>", Frame("~", "<GC>")),
    ("app.py:0 <module> @RESUME", Frame("app.py", "<module>", 0, opcode="RESUME")),
    ("<native> @12", Frame("~", "<native>", opcode="12")),
])
def test_frames_read(text, frame):
    assert parse_frame(text) == frame
    parsed = parse_frame(text)
    assert frame_text(parsed.filename, parsed.funcname, parsed.lineno,
                      parsed.key()[6]) == text.replace("@12", "@" + tachyon_format.opcode_name(12))


def test_a_frame_needs_a_function():
    with pytest.raises(ValueError, match="cannot read frame 'app.py:10 main extra words'"):
        parse_frame("app.py:10 main extra words")
