"""One frame's text in each dialect, and back: parse_frame inverts frame_text; detection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tachyon_format.formats.collapsed.frames import (
    NO_FILE,
    STYLES,
    detect_style,
    frame_text,
    parse_frame,
)

NAMES = st.text(st.characters(exclude_characters=":;() /\n\r\t", exclude_categories=("Cs",)),
                min_size=1, max_size=8)


@settings(max_examples=300)
@given(NAMES | st.just(NO_FILE), NAMES, st.integers(0, 2**31 - 1), st.sampled_from(STYLES),
       st.booleans())
def test_parse_inverts_render(file, name, line, style, lines):
    text = frame_text(file, line, name, style, lines)
    parsed_file, parsed_name, parsed_line = parse_frame(text, style, lines)
    assert parsed_name == name
    if style == "function" or file == NO_FILE and (style == "py-spy" or line == 0 or not lines):
        assert (parsed_file, parsed_line) == (NO_FILE, -1)
    else:
        assert parsed_file == file  # (no "/" in these names: the base name is the name)
        shown = lines and not (style == "py-spy" and line == 0)
        assert parsed_line == (line if shown else -1)
    assert frame_text(parsed_file, max(parsed_line, 0), parsed_name, style, lines) == text


@pytest.mark.parametrize("texts, style", [
    (["a.py:f:1", "<native>"], "cpython"),
    (["f (a.py:1)", "g (b.py)", "<GC>"], "py-spy"),
    (["main", "std::vector<int>::push_back"], "function"),
    (["a.py:f:1", "g (b.py:2)"], "py-spy"),        # (py-spy's native names have colons)
    (["a.py:f:1", "g (b.py:2)", "h (x"], "function"),
    (["<native>"], "function"),                     # nothing with a file: names only
])
def test_detect_style(texts, style):
    assert detect_style(texts) == style
