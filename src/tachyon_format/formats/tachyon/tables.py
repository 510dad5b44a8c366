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

Tier (c): the frame table is decoded a window of bytes at a time with numpy (the entries'
boundaries by :func:`~tachyon_format.kernels.short_steps.walk_short_steps` over the varint
terminators, then each field from its first and last byte, widened to 64 bits only where it
is longer than one byte), into columns allocated once from the entry count capped by the
bytes left; a broken entry is then parsed alone to say what breaks. The
string table (a length then that many bytes: each entry's start depends on the previous one's
length) is a tier (d) scan, one short loop iteration per entry into arrays of C integers.
Pre-release layouts (L2, L1) go through the construct declarations.
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
from tachyon_format.kernels.short_steps import walk_short_steps
from tachyon_format.kernels.varint import decode_uleb128_at, decode_zigzag
from tachyon_format.model import Frames, Strings
from tachyon_format.problems import Problem
from tachyon_format.schema.leb128 import U32_MAX, ULEB128_MAX_BYTES, LEB128Error, scan_uleb128
from tachyon_format.schema.tachyon_values import (
    FOOTER_SIZE,
    MIN_FRAME_SIZE,
    OPCODE_NONE,
)

Layout = Literal["L3", "L2", "L1"]
"""L3: CPython 3.15.2 (u64 sample count); L2/L1: pre-release u32 count, 7-/3-field frames."""

FRAME_FIELDS = ("filename", "funcname", "lineno", "end_lineno_delta", "column",
                "end_column_delta")
"""The varint fields of a frame entry, named as CPython's messages name them."""

WINDOW = 1 << 19
"""Bytes of a table decoded at a time: what the read holds beyond its columns is a few times
this, whatever the table's size (and a window that stays in cache is faster than a larger
one: 512 KiB measured best of 256 KiB to 2 MiB)."""


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

def read_strings(data, start: int, count: int) -> Strings:
    """The string table at file offset *start* of *data* (the whole file); like CPython's
    parser it is bounded only by the end of the file. Raises the first problem."""
    strings, kept = _scan_strings(data, start, count, None, offsets=False)
    _raise(kept.problem)
    return strings


def read_frames(data, start: int, count: int, *, legacy: bool) -> tuple[Frames, Layout]:
    """The frame table at file offset *start* of *data* (the whole file), and the layout it
    settles: L3, or for a file sniffed as a pre-release one (*legacy*) L2 or L1, whichever
    table ends exactly at the footer (docs/format/layout-history.md#sniffing, rule 3).
    Raises the first problem (of an L3 table)."""
    if legacy:
        found = _read_legacy_frames(data, start, count, len(data) - FOOTER_SIZE)
        if found is not None:
            return found
    frames, kept = _decode_frames(data, start, count, None, offsets=False)
    _raise(kept.problem)
    return frames, "L3"


def read_strings_until_problem(data, start: int, count: int,
                               end: int | None = None) -> tuple[Strings, KeptEntries]:
    """Up to *count* entries of the string table at file offset *start* of *data* (the whole
    file; like CPython's parser bounded only by its end), none starting at or after *end*."""
    return _scan_strings(data, start, count, end, offsets=True)


def read_frames_until_problem(data, start: int, count: int,
                              end: int | None = None) -> tuple[Frames, KeptEntries]:
    """Up to *count* entries (layout L3, 7 fields) of the frame table at file offset *start*
    of *data* (the whole file), none starting at or after *end*."""
    return _decode_frames(data, start, count, end, offsets=True)


def frame_strings_ok(frames: Frames, string_count: int) -> np.ndarray:
    """Per frame: do both string indices point into the string table?"""
    return (frames.filename < string_count) & (frames.funcname < string_count)


def _raise(problem: Problem | None) -> None:
    if problem is not None:
        raise FormatError(problem.message, offset=problem.offset, path=problem.field)


# --- the string table ---------------------------------------------------------------------------

def _scan_strings(data, start: int, count: int, stop: int | None,
                  *, offsets: bool) -> tuple[Strings, KeptEntries]:
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    n = len(view)
    # where each entry starts and where its bytes start, as C integers (its bytes end where
    # the next entry starts); the columns grow with the entries found, never with the count
    at, text_at = array.array("q"), array.array("q")
    problem = None
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
                length = None
            if length is None or length > U32_MAX:
                problem = Problem("unreadable", "Malformed varint in string table", offset=p,
                                  field=f"string_table -> [{index}]")
                break
            after += window_at
        if after + length > n:
            problem = Problem("unreadable", "String table overflow", offset=p,
                              field=f"string_table -> [{index}]",
                              expected=f"{length} bytes", found=f"{n - after} before the end")
            break
        at.append(p)
        text_at.append(after)
        p = after + length
        index += 1
    entry_at = np.frombuffer(at, np.int64) if index else np.zeros(0, np.int64)
    starts = np.frombuffer(text_at, np.int64) - start if index else entry_at
    ends = np.append(entry_at[1:], p) - start if index else entry_at
    strings = Strings(bytes(view[start:p]), starts, ends)
    found = EntryOffsets(_narrow(entry_at, n) if offsets else entry_at[:0])
    return strings, KeptEntries(index, p, problem, found)


# --- the frame table ----------------------------------------------------------------------------

def _decode_frames(data, start: int, count: int, stop: int | None,
                   *, offsets: bool) -> tuple[Frames, KeptEntries]:
    b = np.frombuffer(data, np.uint8)
    n = b.size
    # the count is capped by the bytes left before the columns are allocated
    cap = min(count, max(n - start, 0) // MIN_FRAME_SIZE)
    columns = _FrameColumns(cap, n if offsets else None)
    problem = None
    p = start
    while columns.count < cap and (stop is None or p < stop):
        window = b[p : min(p + WINDOW, n)]
        entries = _window_entries(window, cap - columns.count)
        if entries is None:
            # no whole entry in the window: at the end of the file the entry is cut short,
            # elsewhere one of its fields is longer than 10 bytes
            problem = _frame_problem(data, p, columns.count)
            break
        term, rank = entries
        starts = _entry_starts(term, rank)
        keep = rank.size if stop is None else int(np.searchsorted(starts, stop - p))
        bad = columns.add(window, p, term, rank[:keep], starts[:keep])
        if bad is not None:
            p += int(starts[bad])
            problem = _frame_problem(data, p, columns.count)
            break
        if keep < rank.size:
            p += int(starts[keep])
            break
        p += int(term[rank[-1] + 5]) + 2
    if problem is None and cap == columns.count < count and (stop is None or p < stop):
        problem = _frame_problem(data, p, cap)  # more entries than the bytes left can hold
    frames, found = columns.done()
    return frames, KeptEntries(columns.count, p, problem, EntryOffsets(found))


def _window_entries(window: npt.NDArray[np.uint8], limit: int):
    """The whole entries (at most *limit*) that start at the start of *window*: the positions
    of the varint terminators (bytes below 0x80) and the rank among them of each entry's
    first terminator; None if not even one entry fits."""
    term = np.flatnonzero(window < 0x80).astype(np.int32)  # (a window is far below 2 GiB)
    t = term.size
    if t < 6:
        return None
    # from the entry whose first field ends at terminator r, the next one's first field ends
    # at r + 6, or at r + 7 when the opcode byte after the sixth is itself below 0x80
    nxt = np.arange(6, t + 6, dtype=np.int32)
    nxt[: t - 6] += np.diff(term[5:]) == 1
    nxt[t - 5 :] = t  # t: the path stops (not six varints left in the window)
    rank = walk_short_steps(nxt, 7, 6)
    del nxt
    # the path ends with the entry that is not whole within the window, if any
    whole = rank.size
    if whole and (rank[-1] + 5 >= t or term[rank[-1] + 5] + 1 >= window.size):
        whole -= 1
    if not whole:
        return None
    return term, rank[: min(whole, limit)]


def _entry_starts(term: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Where each entry starts in its window: 0, then two bytes after the previous entry's
    sixth terminator (past its opcode byte)."""
    starts = np.empty(rank.size, np.int32)
    starts[0] = 0
    np.add(term[rank[:-1] + 5], 2, out=starts[1:])
    return starts


class _FrameColumns:
    """The frame table's columns, allocated once for *cap* entries and filled a window at a
    time (and the entries' offsets in a file of *size* bytes, when asked)."""

    def __init__(self, cap: int, size: int | None) -> None:
        self.cap = cap
        self.count = 0
        self.filename = np.empty(cap, np.uint32)
        self.funcname = np.empty(cap, np.uint32)
        self.lineno = np.empty(cap, np.int32)
        self.end_lineno = np.empty(cap, np.int32)
        self.column = np.empty(cap, np.int32)
        self.end_column = np.empty(cap, np.int32)
        self.opcode = np.empty(cap, np.int16)
        self.offsets = np.empty(cap if size is not None else 0, _offset_dtype(size or 0))

    def add(self, window, at: int, term, rank, starts) -> int | None:
        """Decode the entries of *window* (at file offset *at*) up to the first that is not
        valid, whose index in the window it returns (None if all are)."""
        count = rank.size
        bad = np.zeros(count, bool)
        values = []
        first = starts
        for k in range(6):
            last = term[rank + k]
            values.append(_u32_varints(window, first, last, bad))
            first = last + 1
        opcode_at = last + 1
        stop = int(np.argmax(bad)) if bad.any() else count
        i = slice(self.count, self.count + stop)
        self.filename[i] = values[0][:stop]
        self.funcname[i] = values[1][:stop]
        lineno, end_delta, column, end_column_delta = (decode_zigzag(v[:stop]) for v in values[2:])
        _rebase(lineno, end_delta, out=self.end_lineno[i])
        _rebase(column, end_column_delta, out=self.end_column[i])
        self.lineno[i] = lineno
        self.column[i] = column
        opcode = self.opcode[i]
        opcode[:] = window[opcode_at[:stop]]
        opcode[opcode == OPCODE_NONE] = -1
        if self.offsets.size:
            np.add(starts[:stop], at, out=self.offsets[i], casting="unsafe")
        self.count += stop
        return None if stop == count else stop

    def done(self) -> tuple[Frames, np.ndarray]:
        """The columns (copied when the table came out shorter than allocated)."""
        n = self.count
        cut = (lambda a: a[:n].copy()) if n < self.cap else (lambda a: a)
        frames = Frames(*(cut(a) for a in (self.filename, self.funcname, self.lineno,
                                            self.end_lineno, self.column, self.end_column,
                                            self.opcode)))
        return frames, cut(self.offsets) if self.offsets.size else self.offsets


def _u32_varints(window, first, last, bad) -> npt.NDArray[np.uint32]:
    """The u32 varints from *first* to *last* (their terminator) in *window*, marking in *bad*
    those that are not one (over 10 bytes, or a value beyond u32)."""
    values = window[last].astype(np.uint32)  # one byte: the terminator is the value
    multi = np.flatnonzero(last != first)
    if not multi.size:
        return values
    end = last[multi]
    length = end - first[multi] + 1
    wide = decode_uleb128_at(window, end, length)  # (mod 2**64, like CPython's reader)
    bad[multi[(length > ULEB128_MAX_BYTES) | (wide > U32_MAX)]] = True
    values[multi] = wide.astype(np.uint32)
    return values


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




def _rebase(start: np.ndarray, delta: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``-1 if start == -1 else start + delta`` in int32 arithmetic (C's wrap-around)."""
    end = np.add(start, delta, out=out, dtype=np.int32, casting="unsafe")  # wraps like C
    end[start == -1] = -1
    return end


def _offset_dtype(size: int) -> type[np.integer]:
    return np.uint32 if size <= U32_MAX else np.int64


def _narrow(offsets: np.ndarray, size: int) -> np.ndarray:
    return offsets.astype(_offset_dtype(size))


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
        end_lineno = _rebase(lineno, np.fromiter((e.end_lineno_delta for e in entries),
                                                 np.int64, n))
        column = np.fromiter((e.column for e in entries), np.int32, n)
        end_column = _rebase(column, np.fromiter((e.end_column_delta for e in entries),
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
