"""The string and frame tables of a Tachyon file (docs/format/tables.md), read as CPython's
reader reads them, with its messages for what it rejects.

Tier (b)/(c): the declarations of :mod:`tachyon_format.schema.tachyon` say what each entry is
and report where a broken one breaks; the usual path scans the string lengths and decodes the
frame fields with the varint kernel, without construct (loaded only for the tables that path
does not take: a legacy layout, an entry to report, a long non-canonical varint).
"""

from __future__ import annotations

import functools
import io
from typing import Literal, NoReturn

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.kernels import varint
from tachyon_format.model import Frames, Strings
from tachyon_format.schema.leb128 import U32_MAX, LEB128Error, scan_uleb128
from tachyon_format.schema.tachyon_values import FOOTER_SIZE, OPCODE_NONE

Layout = Literal["L3", "L2", "L1"]
"""L3: CPython 3.15.2 (u64 sample count); L2/L1: pre-release u32 count, 7-/3-field frames."""


@functools.cache
def _declared():
    """construct, the declarations, and the compiled frame-table parsers (L3/L2, L1)."""
    import construct as cs

    from tachyon_format.schema import primitives
    from tachyon_format.schema import tachyon as spec

    return (cs, primitives, spec, cs.Array(cs.this.count, spec.FRAME).compile(),
            cs.Array(cs.this.count, spec.LEGACY_FRAME).compile())

_FRAME_FIELD_NAMES = {
    "filename_idx": "filename",
    "funcname_idx": "funcname",
    "lineno": "lineno",
    "end_lineno_delta": "end_lineno_delta",
    "column": "column",
    "end_column_delta": "end_column_delta",
}


def frames_from_entries(entries: list, *, legacy: bool = False) -> Frames:
    """Frame-table entries as columns, positions reconstructed as CPython's reader does:
    ``end_lineno = -1 if lineno == -1 else lineno + delta`` (columns alike), opcode -1 when
    absent. Layout L1 entries have a line only: its end is the line, columns are absent."""
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
        end_lineno = _rebase(lineno, (e.end_lineno_delta for e in entries), n)
        column = np.fromiter((e.column for e in entries), np.int32, n)
        end_column = _rebase(column, (e.end_column_delta for e in entries), n)
        opcode = np.fromiter((-1 if e.opcode is None else e.opcode for e in entries), np.int16, n)
    return Frames(filename, funcname, lineno, end_lineno, column, end_column, opcode)


def frame_strings_ok(frames: Frames, string_count: int) -> np.ndarray:
    """Per frame: do both string indices point into the string table?"""
    return (frames.filename < string_count) & (frames.funcname < string_count)


def _rebase(start: np.ndarray, deltas, n: int) -> np.ndarray:
    """``-1 if start == -1 else start + delta`` in int32 arithmetic (C's wrap-around)."""
    delta = np.asarray(deltas, np.int64) if isinstance(deltas, np.ndarray) else np.fromiter(
        deltas, np.int64, n)
    end = (start.astype(np.int64) + delta).astype(np.int32)  # int32 wrap like the C reader
    return np.where(start == -1, np.int32(-1), end).astype(np.int32)


def read_strings(data, start: int, count: int) -> Strings:
    """The string table at file offset *start* of *data* (the whole file); like CPython's
    parser it is bounded only by the end of the file."""
    table = memoryview(data)[start:]
    spans = string_spans(table, count)
    if spans is not None:
        starts, ends = spans
        end = int(ends[-1]) if count else 0
        return Strings(bytes(table[:end]), starts, ends)
    # the declarations read what the scan would not (long non-canonical lengths), or say
    # what is wrong and where
    cs, primitives, *_ = _declared()
    stream = io.BytesIO(table)
    starts = np.empty(count, np.int64)
    ends = np.empty(count, np.int64)
    for index in range(count):
        at = stream.tell()
        try:
            length = primitives.ULEB128_U32.parse_stream(stream)
        except cs.ConstructError:
            raise FormatError(
                "Malformed varint in string table", offset=start + at,
                path=f"string_table -> {index} -> len",
            ) from None
        starts[index] = stream.tell()
        if stream.seek(length, io.SEEK_CUR) > len(table):
            raise FormatError(
                "String table overflow", offset=start + at, path=f"string_table -> {index}"
            )
        ends[index] = stream.tell()
    return Strings(bytes(table[: stream.tell()]), starts, ends)


def read_frames(data, start: int, count: int, *, legacy: bool) -> tuple[Frames, Layout]:
    """The frame table at file offset *start* of *data* (the whole file), and the layout it
    settles: L3, or for a file sniffed as a pre-release one (*legacy*) L2 or L1, whichever
    table ends exactly at the footer (docs/format/layout-history.md#sniffing, rule 3)."""
    if legacy:
        found = _read_legacy_frames(data, start, count, len(data) - FOOTER_SIZE)
        if found is not None:
            return found
    else:
        fast = fast_frames(memoryview(data)[start:], count)
        if fast is not None:
            return fast[0], "L3"
    cs, _, _, frame_table, _ = _declared()
    stream = io.BytesIO(memoryview(data)[start:])
    try:
        entries = frame_table.parse_stream(stream, count=count)
    except cs.ConstructError:
        _raise_frame_error(data, start, count)
    return frames_from_entries(entries), "L3"


def string_spans(data, count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Scan: where the bytes of each of the first *count* entries of a string table
    (:data:`spec.STRING`) lie in *data*, as (starts, ends) int64 arrays; ``None`` if an entry
    is not valid (its length no u32 varint, its bytes not inside *data*): the declarations
    then say what is wrong and where."""
    raw = bytes(data)
    n = len(raw)
    starts = np.empty(count, np.int64)
    ends = np.empty(count, np.int64)
    p = 0
    for i in range(count):
        try:
            length, p = scan_uleb128(raw, p, n)
        except LEB128Error:
            return None
        if length > U32_MAX or p + length > n:
            return None
        starts[i] = p
        p += length
        ends[i] = p
    return starts, ends


def fast_frames(data, count: int) -> tuple[Frames, int] | None:
    """Vectorised: a layout-L3 frame table (``count`` entries of :data:`spec.FRAME`) and the
    size it takes, without construct; ``None`` if any entry is not plainly valid (varints of
    up to 5 bytes within u32, inside *data*): the declarations then parse it and report.

    Only the entry boundaries need a (short) loop: an entry is six varints, so the next one
    starts two bytes after its sixth terminator, or one terminator later when the opcode
    byte is itself below 0x80. The field values are decoded at once by the varint kernel.
    """
    b = np.frombuffer(data, np.uint8)
    n = b.size
    if count == 0:
        return frames_from_entries([]), 0
    ends = np.flatnonzero(b < 0x80)
    last_rank = ends.size - 6
    el = ends.tolist()
    raw = bytes(data)
    ranks = [0] * count
    r = 0
    for i in range(count):
        if r > last_rank:
            return None
        ranks[i] = r
        opcode_at = el[r + 5] + 1
        if opcode_at >= n:
            return None
        r += 7 if raw[opcode_at] < 0x80 else 6
    rank = np.array(ranks, dtype=np.intp)
    pos = ends[rank[:, None] + np.arange(6)]  # (count, 6) terminator of each field
    opcode_at = pos[:, 5] + 1
    first = np.empty_like(pos)
    first[:, 1:] = pos[:, :-1] + 1
    first[0, 0] = 0
    first[1:, 0] = opcode_at[:-1] + 1
    if (pos - first).max() >= 5:  # a field longer than 5 bytes: let construct judge it
        return None
    values = varint.decode_uleb128_ending_at(b, pos.ravel(), first.ravel()).reshape(-1, 6)
    if values.max() > U32_MAX:
        return None
    z = values[:, 2:].astype(np.int64)
    signed = ((z >> 1) ^ -(z & 1)).astype(np.int32)
    lineno, end_delta, column, end_column_delta = signed.T
    opcode = b[opcode_at].astype(np.int16)
    opcode[opcode == OPCODE_NONE] = -1
    frames = Frames(
        values[:, 0].astype(np.uint32),
        values[:, 1].astype(np.uint32),
        lineno.copy(),
        _rebase(lineno, end_delta, count),
        column.copy(),
        _rebase(column, end_column_delta, count),
        opcode,
    )
    return frames, int(opcode_at[-1]) + 1


def _read_legacy_frames(data, start: int, count: int, end: int):
    """The frame-table variant whose parse ends exactly at the footer, and its layout."""
    cs, _, _, frame_table, legacy_frame_table = _declared()
    for parser, layout in ((frame_table, "L2"), (legacy_frame_table, "L1")):
        stream = io.BytesIO(memoryview(data)[start:])
        try:
            entries = parser.parse_stream(stream, count=count)
        except cs.ConstructError:
            continue
        if start + stream.tell() == end:
            return frames_from_entries(entries, legacy=layout == "L1"), layout
    return None


def _raise_frame_error(data, start: int, count: int) -> NoReturn:
    cs, _, spec, _, _ = _declared()
    stream = io.BytesIO(memoryview(data)[start:])
    for index in range(count):
        for sub in spec.FRAME.subcons:
            field_at = stream.tell()
            try:
                sub.parse_stream(stream)
            except cs.ConstructError:
                if sub.name == "opcode":
                    message = "Unexpected end of frame table (opcode)"
                else:
                    message = f"Malformed varint in frame table ({_FRAME_FIELD_NAMES[sub.name]})"
                raise FormatError(
                    message, offset=start + field_at,
                    path=f"frame_table -> {index} -> {sub.name}",
                ) from None
    raise AssertionError("frame table failed to parse but every entry is valid")


