"""The string and frame tables entry by entry, keeping whatever parses: for ``validate`` (each
bad entry reported with its index and offset) and for salvage (the entries before a break).

:mod:`.tables` reads a table whole, as CPython does, and fails at the first bad entry; here a
table is scanned one entry at a time and the scan stops at the first entry that does not parse
(an entry has no length of its own, so nothing after a broken one can be found again), having
kept every entry before it. The messages are CPython's (docs/format/reader.md#checks-at-open).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tachyon_format.model import Frames, Strings
from tachyon_format.problems import Problem
from tachyon_format.schema.leb128 import U32_MAX, LEB128Error, scan_uleb128

from .tables import frames_from_entries

FRAME_FIELDS = ("filename", "funcname", "lineno", "end_lineno_delta", "column",
                "end_column_delta")
"""The varint fields of a frame entry, named as CPython's messages name them."""


@dataclass
class ScannedTable:
    """What a table scan kept: ``count`` whole entries, the offset just after the last of
    them (``end``), and the problem that stopped the scan (None if every entry parsed)."""

    count: int
    end: int
    problem: Problem | None = None
    offsets: list[int] = field(default_factory=list)


def scan_strings(data, start: int, count: int,
                 end: int | None = None) -> tuple[Strings, ScannedTable]:
    """Up to *count* entries of the string table at file offset *start* of *data* (the whole
    file; like CPython's parser bounded only by its end), none starting at or after *end*."""
    raw = memoryview(data)
    n = len(raw)
    stop = n if end is None else end
    starts: list[int] = []
    ends: list[int] = []
    offsets: list[int] = []
    p = start
    problem = None
    for index in range(count):
        if p >= stop:
            break
        try:
            length, after = scan_uleb128(raw, p, n)
        except LEB128Error:
            length, after = None, p
        if length is None or length > U32_MAX:
            problem = Problem("unreadable", "Malformed varint in string table", offset=p,
                              field=f"string_table -> [{index}] -> length")
            break
        if after + length > n:
            problem = Problem("unreadable", "String table overflow", offset=p,
                              field=f"string_table -> [{index}]",
                              expected=f"{length} bytes", found=f"{n - after} before the end")
            break
        offsets.append(p)
        starts.append(after - start)
        ends.append(after + length - start)
        p = after + length
    strings = Strings(bytes(raw[start:p]), np.array(starts, np.int64), np.array(ends, np.int64))
    return strings, ScannedTable(len(starts), p, problem, offsets)


@dataclass(frozen=True)
class _Entry:
    filename_idx: int
    funcname_idx: int
    lineno: int
    end_lineno_delta: int
    column: int
    end_column_delta: int
    opcode: int | None


def scan_frames(data, start: int, count: int,
                end: int | None = None) -> tuple[Frames, ScannedTable]:
    """Up to *count* entries (layout L3, 7 fields) of the frame table at file offset *start*
    of *data* (the whole file), none starting at or after *end*."""
    raw = memoryview(data)
    n = len(raw)
    stop = n if end is None else end
    entries: list[_Entry] = []
    offsets: list[int] = []
    p = start
    problem = None
    for index in range(count):
        if p >= stop:
            break
        at = p
        values: list[int] = []
        for name in FRAME_FIELDS:
            try:
                value, p = scan_uleb128(raw, p, n)
            except LEB128Error:
                value = None
            if value is None or value > U32_MAX:
                problem = Problem("unreadable", f"Malformed varint in frame table ({name})",
                                  offset=at, field=f"frame_table -> [{index}] -> {name}")
                break
            values.append(value if name in FRAME_FIELDS[:2] else _unzigzag(value))
        if problem is not None:
            break
        if p >= n:
            problem = Problem("unreadable", "Unexpected end of frame table (opcode)", offset=at,
                              field=f"frame_table -> [{index}] -> opcode")
            break
        opcode = raw[p]
        p += 1
        entries.append(_Entry(*values, None if opcode == 255 else opcode))
        offsets.append(at)
    return frames_from_entries(entries), ScannedTable(len(entries), p, problem, offsets)


def _unzigzag(z: int) -> int:
    return (z >> 1) ^ -(z & 1)
