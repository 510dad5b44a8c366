"""Truncated and corrupted JSONL: ``read`` raises only FormatError, naming the line (and the
field where there is one); ``validate`` never raises."""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.jsonl.reader import parse
from tachyon_format.formats.jsonl.writer import dumps
from tests.helpers.paths import DATA_DIR

DATA = dumps(tachyon_format.read(DATA_DIR / "threads_wall_zstd.bin"), run_id="r")
LINES = DATA.splitlines(keepends=True)


def error_of(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse(data)
    assert list(map(str, tachyon_format.validate(data, format="jsonl"))) == [str(caught.value)]
    return caught.value


@pytest.mark.parametrize("keep", range(len(LINES)))
def test_every_truncation_at_a_line_end_is_reported(keep):
    error = error_of(b"".join(LINES[:keep]))
    assert re.search(r"line \d+", str(error)), error
    assert ("truncated" in str(error)) or keep == 0


def test_truncation_inside_a_line_names_it():
    cut = len(LINES[0]) + len(LINES[1]) // 2
    error = error_of(DATA[:cut])
    assert "line 2" in str(error) and error.offset == len(LINES[0])


@settings(max_examples=60)
@given(st.integers(0, len(DATA) - 1))
def test_any_truncation_is_a_format_error(cut):
    error_of(DATA[:cut])


@settings(max_examples=100)
@given(st.integers(0, len(DATA) - 1), st.binary(min_size=1, max_size=3))
def test_corruption_raises_only_format_errors(at, junk):
    data = DATA[:at] + junk + DATA[at + len(junk):]
    with contextlib.suppress(FormatError):  # anything else fails the test
        parse(data)
    assert isinstance(tachyon_format.validate(data, format="jsonl"), list)


def record_line(record: dict) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def with_line(index: int, change) -> bytes:
    record = json.loads(LINES[index])
    change(record)
    return b"".join([*LINES[:index], record_line(record), *LINES[index + 1:]])


def frames_line() -> int:
    return next(i for i, line in enumerate(LINES) if b'"frame_table"' in line)


def agg_line() -> int:
    return next(i for i, line in enumerate(LINES) if b'"agg"' in line)


@pytest.mark.parametrize(("name", "make", "words"), [
    ("not json", lambda: b"{oops\n" + b"".join(LINES[1:]), ["line 1", "not JSON"]),
    ("first not meta", lambda: b"".join(LINES[1:]), ["line 1", "meta"]),
    ("schema version", lambda: with_line(0, lambda r: r.update(v=1)), ["line 1", "version"]),
    ("run id", lambda: with_line(1, lambda r: r.update(run_id="other")), ["line 2", "run_id"]),
    ("after end", lambda: DATA + LINES[0], [f"line {len(LINES) + 1}", "after the end"]),
    ("line as text", lambda: with_line(frames_line(), lambda r: r["frames"][0].update(
        line="3")), ["frames[0] -> line", "integer"]),
    ("line as bool", lambda: with_line(frames_line(), lambda r: r["frames"][1].update(
        line=True)), ["frames[1] -> line"]),
    ("line too big", lambda: with_line(frames_line(), lambda r: r["frames"][0].update(
        col=2**40)), ["frames[0] -> col", "out of range"]),
    ("unknown string", lambda: with_line(frames_line(), lambda r: r["frames"][0].update(
        path_str_id=10**6)), ["path_str_id", "no string"]),
    ("unknown frame", lambda: with_line(agg_line(), lambda r: r["entries"][0].update(
        frame_id=10**6)), ["entries[0] -> frame_id"]),
    ("negative count", lambda: with_line(agg_line(), lambda r: r["entries"][0].update(
        self=-1)), ["entries[0] -> self"]),
    ("wrong total", lambda: with_line(len(LINES) - 1, lambda r: r.update(samples_total=1)),
     ["samples_total"]),
    ("not a list", lambda: with_line(1, lambda r: r.update(strings={})), ["strings"]),
    ("bom", lambda: b"\xef\xbb\xbf" + DATA, ["byte-order mark"]),
])
def test_malformed_records_name_line_and_field(name, make, words):
    error = error_of(make())
    for word in words:
        assert word in str(error), (name, str(error))


def test_an_empty_file():
    assert "no meta record" in str(error_of(b""))
