"""The string and frame tables of a Tachyon file (docs/format/tables.md): one reader per table,
reading as CPython's reader reads them, with its messages for what it rejects.

Each table is read once and the read stops at the first entry that does not parse (an
entry has no length of its own, so nothing after a broken one can be found again), keeping
every entry before it and the problem that stopped it. The two modes differ only in what they
do with that problem: ``read_strings``/``read_frames`` (``read``) raise it as a
:class:`~tachyon_format.FormatError`, ``read_strings_until_problem``/
``read_frames_until_problem`` (``validate`` and salvage) return it as a
:class:`~tachyon_format.problems.Problem` beside the entries kept and where each
one starts. Messages, offsets and field paths are the same in both (docs/validation.md):
``string_table -> [i]``, ``frame_table -> [i] -> <field>`` at the offset of the field that
breaks.

Two scans, with the same results (the tests compare them), chosen as the sample region's
decoder is (:func:`~.region.engines.table_scans`, ``TACHYON_FORMAT_DECODER``): where the
record walk is compiled, its tier (d) loops (:func:`~.region.walk.scan_string_table`,
:func:`~.region.walk.scan_frame_table`); elsewhere the frame table with numpy
(:mod:`.frame_columns`, tier c) and the string table (each entry's start depends on the
previous one's length) by a loop in Python. Either way the columns grow with the entries
found, or are allocated once from the count capped by the bytes left. A broken entry is
then parsed alone to say what breaks. Pre-release layouts (L2, L1) go through the construct
declarations.
"""

from __future__ import annotations

import array
import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.model import Frames, Strings
from tachyon_format.problems import Problem
from tachyon_format.schema.leb128 import U32_MAX, ULEB128_MAX_BYTES, LEB128Error, scan_uleb128
from tachyon_format.schema.tachyon_values import FOOTER_SIZE, MIN_FRAME_SIZE

from .frame_columns import FrameColumns, offset_dtype, rebase_positions
from .region.engines import table_scans

Layout = Literal["L3", "L2", "L1"]
"""L3: CPython 3.15.2 (u64 sample count); L2/L1: pre-release u32 count, 7-/3-field frames."""

FRAME_FIELDS = ("filename", "funcname", "lineno", "end_lineno_delta", "column",
                "end_column_delta")
"""The varint fields of a frame entry, named as CPython's messages name them."""

CHUNK = 1 << 16
"""Entries the compiled string-table scan finds per call: its arrays grow with the entries
found, never with the count the footer claims."""

WINDOW = 1 << 19
"""Bytes of the string table copied at a time by the loop in Python."""


class EntryOffsets(Sequence[int]):
    """Where each entry of a table starts in the file, kept in the narrowest array that holds
    them and read as ints."""

    __slots__ = ("array",)

    def __init__(self, array: npt.NDArray[np.integer]) -> None:
        self.array = array

    def __len__(self) -> int:
        return int(self.array.size)

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> EntryOffsets: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return EntryOffsets(self.array[index])
        return int(self.array[index])


@dataclass
class KeptEntries:
    """What a table read kept: ``count`` whole entries, the offset just after the last of
    them (``end``), the problem that stopped the read (None if every entry asked for parsed)
    and where each entry starts."""

    count: int
    end: int
    problem: Problem | None = None
    offsets: EntryOffsets = field(default_factory=lambda: EntryOffsets(np.zeros(0, np.int64)))


# --- the two modes ------------------------------------------------------------------------------

def read_strings(data, start: int, count: int, *, engine: str | None = None) -> Strings:
    """The string table at file offset *start* of *data* (the whole file); like CPython's
    parser it is bounded only by the end of the file. Raises the first problem. *engine*:
    which scan (module docs)."""
    strings, kept = _scan_strings(data, start, count, None, offsets=False, engine=engine)
    _raise(kept.problem)
    return strings


def read_frames(data, start: int, count: int, *, legacy: bool,
                engine: str | None = None) -> tuple[Frames, Layout]:
    """The frame table at file offset *start* of *data* (the whole file), and the layout it
    settles: L3, or for a file sniffed as a pre-release one (*legacy*) L2 or L1, whichever
    table ends exactly at the footer (docs/format/layout-history.md#sniffing, rule 3).
    Raises the first problem (of an L3 table)."""
    if legacy:
        found = _read_legacy_frames(data, start, count, len(data) - FOOTER_SIZE)
        if found is not None:
            return found
    frames, kept = _decode_frames(data, start, count, None, offsets=False, engine=engine)
    _raise(kept.problem)
    return frames, "L3"


def read_strings_until_problem(data, start: int, count: int, end: int | None = None, *,
                               engine: str | None = None) -> tuple[Strings, KeptEntries]:
    """Up to *count* entries of the string table at file offset *start* of *data* (the whole
    file; like CPython's parser bounded only by its end), none starting at or after *end*."""
    return _scan_strings(data, start, count, end, offsets=True, engine=engine)


def read_frames_until_problem(data, start: int, count: int, end: int | None = None, *,
                              engine: str | None = None) -> tuple[Frames, KeptEntries]:
    """Up to *count* entries (layout L3, 7 fields) of the frame table at file offset *start*
    of *data* (the whole file), none starting at or after *end*."""
    return _decode_frames(data, start, count, end, offsets=True, engine=engine)


def frame_strings_ok(frames: Frames, string_count: int) -> np.ndarray:
    """Per frame: do both string indices point into the string table?"""
    return (frames.filename < string_count) & (frames.funcname < string_count)


def _raise(problem: Problem | None) -> None:
    if problem is not None:
        raise FormatError(problem.message, offset=problem.offset, path=problem.field)


# --- the string table ---------------------------------------------------------------------------

def _scan_strings(data, start: int, count: int, stop: int | None, *, offsets: bool,
                  engine: str | None) -> tuple[Strings, KeptEntries]:
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    n = len(view)
    walk = table_scans(engine)
    if walk is not None:
        entry_at, text_at, p = _walk_strings(walk, view, start, count, stop)
    else:
        entry_at, text_at, p = _loop_strings(view, start, count, stop)
    index = entry_at.size
    problem = None
    if index < count and (stop is None or p < stop):
        problem = _string_problem(view, p, index)
    starts = text_at - start
    ends = np.append(entry_at[1:], p) - start if index else entry_at
    strings = Strings(bytes(view[start:p]), starts, ends)
    found = EntryOffsets(_narrow(entry_at, n) if offsets else entry_at[:0])
    return strings, KeptEntries(index, p, problem, found)


def _walk_strings(walk, view, start: int, count: int, stop: int | None):
    """The entries' starts and their texts' starts (int64), and where the scan stopped,
    :mod:`~.region.walk`'s scan a chunk of entries at a time (arrays grow with the entries
    found, never with the count)."""
    data = memoryview(np.frombuffer(view, np.uint8))
    limit = len(view) if stop is None else stop
    entry_chunks, text_chunks = [], []
    p = start
    index = 0
    while index < count:
        room = min(count - index, CHUNK)
        entry_at, text_at = np.empty(room, np.int64), np.empty(room, np.int64)
        found, p = walk.scan_string_table(data, p, limit, entry_at, text_at)
        entry_chunks.append(entry_at[:found])
        text_chunks.append(text_at[:found])
        index += found
        if found < room:
            break
    if len(entry_chunks) == 1:
        return entry_chunks[0], text_chunks[0], p
    return np.concatenate(entry_chunks or [np.zeros(0, np.int64)]), np.concatenate(
        text_chunks or [np.zeros(0, np.int64)]), p


def _loop_strings(view, start: int, count: int, stop: int | None):
    """:func:`_walk_strings` as a loop in Python, one short iteration per entry into arrays
    of C integers."""
    n = len(view)
    at, text_at = array.array("q"), array.array("q")
    index = 0
    p = start
    window_at, window, window_end = p, b"", p
    while index < count and (stop is None or p < stop):
        if p + ULEB128_MAX_BYTES > window_end and window_end < n:
            window_at, window = p, bytes(view[p : p + WINDOW])  # (a copy of a window only)
            window_end = p + len(window)
        local = p - window_at
        if p < window_end and window[local] < 0x80:  # a one-byte length, the usual case
            length, after = window[local], p + 1
        else:
            try:
                length, after = scan_uleb128(window, local, len(window))
            except LEB128Error:
                break
            if length > U32_MAX:
                break
            after += window_at
        if after + length > n:
            break
        at.append(p)
        text_at.append(after)
        p = after + length
        index += 1
    if not index:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), p
    return np.frombuffer(at, np.int64), np.frombuffer(text_at, np.int64), p


def _string_problem(view, at: int, index: int) -> Problem:
    """What breaks in the string-table entry at file offset *at*, or that none starts
    there."""
    n = len(view)
    try:
        length, after = scan_uleb128(view, at, n)
    except LEB128Error:
        length = None
    if length is None or length > U32_MAX:
        return Problem("unreadable", "Malformed varint in string table", offset=at,
                       field=f"string_table -> [{index}]")
    return Problem("unreadable", "String table overflow", offset=at,
                   field=f"string_table -> [{index}]",
                   expected=f"{length} bytes", found=f"{n - after} before the end")


# --- the frame table ----------------------------------------------------------------------------

def _decode_frames(data, start: int, count: int, stop: int | None, *, offsets: bool,
                   engine: str | None) -> tuple[Frames, KeptEntries]:
    b = np.frombuffer(data, np.uint8)
    n = b.size
    # the count is capped by the bytes left before the columns are allocated
    cap = min(count, max(n - start, 0) // MIN_FRAME_SIZE)
    columns = FrameColumns(cap, n if offsets else None)
    walk = table_scans(engine)
    if walk is not None:
        p = columns.scan(walk, memoryview(b), start, n if stop is None else stop)
    else:
        p = columns.scan_windows(b, start, stop)
    # stopped before the count and *stop*: at a broken entry, or where the bytes left cannot
    # hold another
    problem = None
    if columns.count < count and (stop is None or p < stop):
        problem = _frame_problem(data, p, columns.count)
    frames, found = columns.done()
    return frames, KeptEntries(columns.count, p, problem, EntryOffsets(found))


def _frame_problem(data, at: int, index: int) -> Problem:
    """What breaks in the entry at file offset *at*, parsed alone as CPython parses it."""
    n = len(data)
    p = at
    for name in FRAME_FIELDS:
        field_at = p
        try:
            value, p = scan_uleb128(data, p, n)
        except LEB128Error:
            value = None
        if value is None or value > U32_MAX:
            return Problem("unreadable", f"Malformed varint in frame table ({name})",
                           offset=field_at, field=f"frame_table -> [{index}] -> {name}")
    if p >= n:
        return Problem("unreadable", "Unexpected end of frame table (opcode)", offset=p,
                       field=f"frame_table -> [{index}] -> opcode")
    raise AssertionError(f"frame entry {index} at {at} is valid")




def _narrow(offsets: np.ndarray, size: int) -> np.ndarray:
    return offsets.astype(offset_dtype(size))


# --- pre-release layouts, through the declarations -----------------------------------------------

@functools.cache
def _declared():
    """construct and the compiled frame-table parsers (L3/L2, L1)."""
    import construct as cs

    from tachyon_format.schema import tachyon as spec

    return (cs, cs.Array(cs.this.count, spec.FRAME).compile(),
            cs.Array(cs.this.count, spec.LEGACY_FRAME).compile())


def frames_from_entries(entries: list, *, legacy: bool = False) -> Frames:
    """Frame-table entries parsed by the declarations as columns, positions reconstructed as
    CPython's reader does: ``end_lineno = -1 if lineno == -1 else lineno + delta`` (columns
    alike), opcode -1 when absent. Layout L1 entries have a line only: its end is the line,
    columns are absent."""
    n = len(entries)
    filename = np.fromiter((e.filename_idx for e in entries), np.uint32, n)
    funcname = np.fromiter((e.funcname_idx for e in entries), np.uint32, n)
    lineno = np.fromiter((e.lineno for e in entries), np.int32, n)
    if legacy:
        end_lineno = lineno.copy()
        column = np.full(n, -1, np.int32)
        end_column = column.copy()
        opcode = np.full(n, -1, np.int16)
    else:
        end_lineno = rebase_positions(lineno, np.fromiter((e.end_lineno_delta for e in entries),
                                                 np.int64, n))
        column = np.fromiter((e.column for e in entries), np.int32, n)
        end_column = rebase_positions(column, np.fromiter((e.end_column_delta for e in entries),
                                                 np.int64, n))
        opcode = np.fromiter((-1 if e.opcode is None else e.opcode for e in entries), np.int16, n)
    return Frames(filename, funcname, lineno, end_lineno, column, end_column, opcode)


def _read_legacy_frames(data, start: int, count: int, end: int):
    """The frame-table variant whose parse ends exactly at the footer, and its layout."""
    cs, frame_table, legacy_frame_table = _declared()
    for parser, layout in ((frame_table, "L2"), (legacy_frame_table, "L1")):
        stream = io.BytesIO(memoryview(data)[start:])
        try:
            entries = parser.parse_stream(stream, count=count)
        except cs.ConstructError:
            continue
        if start + stream.tell() == end:
            return frames_from_entries(entries, legacy=layout == "L1"), layout
    return None
