"""``profile.proto`` at the wire level, as numpy columns (tier c): no object per sample.

1. :func:`scan_profile` walks the top-level ``Profile`` message: the long repeated fields
   (samples, mappings, locations, functions, strings) as vectorised runs
   (:func:`~tachyon_format.kernels.protowire.find_len_run`), the few others one by one.
2. The tables (mappings, locations with their lines, functions) are decoded field by field
   for all entries at once (:func:`~tachyon_format.kernels.protowire.decode_fields`), and so
   is the small rest (sample types, period, scalars, comments: :func:`decode_head`), each
   by the message declarations (:mod:`tachyon_format.schema.pprof_plain`, the plain twin of
   :mod:`tachyon_format.schema.pprof`); no protobuf runtime, no construct.
3. Samples are decoded in chunks by :mod:`.samples`, with the helpers here.

Why not let protobuf (upb) parse it all: upb parses ``large.cpu`` (20k samples) in 30 ms, but
reading the parsed samples back creates a Python wrapper per sample and per list, 5 us per
sample (25 s for 5 M samples); see docs/formats/pprof.md#performance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError, LimitError
from tachyon_format.kernels.protowire import (
    FieldTable,
    TooManyFields,
    WireError,
    decode_fields,
    decode_packed_ranges,
    find_len_run,
)
from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.kernels.varint import decode_uleb128_from
from tachyon_format.model import Strings
from tachyon_format.schema import pprof_plain as spec
from tachyon_format.schema.leb128 import I32, I64, LEN, VARINT
from tachyon_format.schema.protobuf_plain import Message, key_of

from ..sources import MAX_STACK_DEPTH

RUN_FIELDS = {spec.PROFILE.field(name).number: name
              for name in ("sample", "mapping", "location", "function", "string_table")}
"""Top-level repeated LEN fields read as vectorised runs, by field number."""
SAMPLES, MAPPINGS, LOCATIONS, FUNCTIONS, STRINGS = RUN_FIELDS
LOCATION_IDS, VALUES, LABELS = (spec.SAMPLE.field(name).number
                                for name in ("location_id", "value", "label"))
RUN_KEYS = tuple(key_of(spec.PROFILE, name) for name in RUN_FIELDS.values())
GATHER_BYTES = 1 << 24
"""Bytes copied per vectorised gather of :func:`gather_ranges` (its index array is 8 times
this)."""
FIRST_WINDOW = 1 << 12
MAX_WINDOW = 1 << 23
"""Bytes a run search looks at, at most: bounds its candidate arrays."""
MAX_SAMPLES = 1 << 27
"""Samples ``read()`` takes at most by default (``max_samples``, as for Tachyon): each costs
some 40 bytes of columns and ranges."""
MAX_STRINGS = 1 << 24
"""Strings ``read()`` takes at most by default (``max_strings``): an empty string is 2 bytes
of message but 16 bytes of offsets, so 1 GiB of them would ask for 8 GiB."""
MAX_LOCATIONS = 1 << 24
"""Locations ``read()`` takes at most by default (``max_locations``): an empty one is 2 bytes
of message but some 60 bytes of ranges, fields and columns, and a frame."""
MAX_FUNCTIONS = 1 << 24
"""Functions ``read()`` takes at most by default (``max_functions``), as locations."""
MAX_MAPPINGS = 1 << 20
"""Mappings ``read()`` takes at most by default (``max_mappings``): a program maps a few
hundred files."""
MAX_LINES = 1 << 25
"""Lines of all locations ``read()`` takes at most by default (``max_lines``): an empty one is
2 bytes of message but some 100 bytes of fields, columns and its frame."""


@dataclass
class TopLevel:
    """Where the top-level fields are: for each run field, payload ``(starts, ends)``; the
    bytes of every other field, for :func:`decode_head`."""

    runs: dict[int, tuple[np.ndarray, np.ndarray]]
    rest: bytes


def fail(text: str, path: str, offset: int | None = None) -> FormatError:
    return FormatError(f"pprof: {text}", offset=offset, path=path)


def scan_profile(buf: npt.NDArray[np.uint8], *, max_samples: int = MAX_SAMPLES,
                 max_strings: int = MAX_STRINGS, max_mappings: int = MAX_MAPPINGS,
                 max_locations: int = MAX_LOCATIONS,
                 max_functions: int = MAX_FUNCTIONS) -> TopLevel:
    """Step 1: the top-level fields of a serialized ``Profile`` (offsets into *buf*). More
    samples, strings, mappings, locations or functions than their ``max_*`` raise
    :class:`LimitError` as soon as the scan has seen them, before their offsets are all
    held."""
    runs: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {n: [] for n in RUN_FIELDS}
    counts = dict.fromkeys(RUN_FIELDS, 0)
    limits = {SAMPLES: ("max_samples", max_samples), STRINGS: ("max_strings", max_strings),
              MAPPINGS: ("max_mappings", max_mappings),
              LOCATIONS: ("max_locations", max_locations),
              FUNCTIONS: ("max_functions", max_functions)}

    def add(number: int, starts: np.ndarray, ends: np.ndarray) -> None:
        runs[number].append((starts, ends))
        counts[number] += starts.size
        if number in limits and counts[number] > limits[number][1]:
            keyword, value = limits[number]
            raise LimitError(f"pprof: more than {value} {RUN_FIELDS[number]} entries, more "
                             f"than read() takes ({keyword}={value}); pass a larger "
                             f"{keyword} to read them", limit=keyword, value=value,
                             offset=int(starts[-1]), path=_path(number))
    rest: list[bytes] = []
    data = buf.tobytes() if buf.size < 1 << 16 else None
    pos, size = 0, buf.size
    window = FIRST_WINDOW
    while pos < size:
        key = int(buf[pos])
        number, wire = key >> 3, key & 7
        if number in RUN_FIELDS and wire == LEN:
            keys, starts, ends, nxt = find_len_run(buf, pos, RUN_KEYS, window)
            if starts.size:
                for run_key in np.unique(keys).tolist():
                    mine = keys == run_key
                    add(run_key >> 3, starts[mine], ends[mine])
                # a run that reached the window's end probably goes on: look further next time
                window = min(window * 4, MAX_WINDOW) if nxt >= pos + window // 2 else FIRST_WINDOW
                pos = nxt
                continue
        start = pos
        one = np.array([pos], np.int64)
        k, klen, ok = decode_uleb128_from(buf, one, np.array([size]))
        if not ok[0] or k[0] >> np.uint64(3) == 0:
            raise fail("invalid field key", "Profile", pos)
        number, wire = int(k[0] >> np.uint64(3)), int(k[0] & np.uint64(7))
        pos += int(klen[0])
        if wire in (VARINT, LEN):
            v, vlen, ok = decode_uleb128_from(buf, np.array([pos], np.int64), np.array([size]))
            if not ok[0]:
                raise fail("truncated varint", _path(number), pos)
            pos += int(vlen[0])
            if wire == LEN:
                if int(v[0]) > size - pos:
                    raise fail(f"length {int(v[0])} runs past the end of the data",
                               _path(number), pos)
                if number in RUN_FIELDS:  # a run of one (a run's first byte was not the key)
                    add(number, np.array([pos], np.int64),
                        np.array([pos + int(v[0])], np.int64))
                    pos += int(v[0])
                    continue
                pos += int(v[0])
        elif wire in (I64, I32):
            pos += 8 if wire == I64 else 4
            if pos > size:
                raise fail("truncated fixed-width field", _path(number), start)
        else:
            raise fail(f"wire type {wire} is not used by profile.proto", _path(number), start)
        rest.append(data[start:pos] if data is not None else buf[start:pos].tobytes())
    out = {}
    for number, parts in runs.items():
        if parts:
            out[number] = (np.concatenate([s for s, _ in parts]),
                           np.concatenate([e for _, e in parts]))
        else:
            out[number] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return TopLevel(out, b"".join(rest))


def _path(number: int) -> str:
    for f in spec.PROFILE.fields:
        if f.number == number:
            return f"Profile -> {f.name}"
    return f"Profile -> field {number}"


# --- step 2: tables --------------------------------------------------------------------------


def gather_ranges(buf: npt.NDArray[np.uint8], starts: np.ndarray, lengths: np.ndarray,
                  step: int = GATHER_BYTES) -> bytes:
    """``buf[starts[i]:starts[i] + lengths[i]]`` for every ``i``, concatenated: the short
    ranges gathered with numpy, *step* bytes at a time, a range longer than *step* as a
    slice, so that no index array is ever 8 bytes per byte of a long range (one 900 MiB
    string asked for 7 GiB that way)."""
    ends = np.cumsum(lengths)
    if not ends.size or ends[-1] <= step:
        return buf[decode_ragged_ranges(starts, lengths)].tobytes()
    view = memoryview(buf)
    pieces: list[bytes | memoryview] = []
    i = 0
    while i < starts.size:
        before = int(ends[i] - lengths[i])
        j = int(np.searchsorted(ends, before + step, side="right"))
        if j == i:  # one range longer than a step
            start = int(starts[i])
            pieces.append(view[start:start + int(lengths[i])])
            i += 1
            continue
        pieces.append(buf[decode_ragged_ranges(starts[i:j], lengths[i:j])].tobytes())
        i = j
    return b"".join(pieces)


def decode_strings(buf: npt.NDArray[np.uint8], starts, ends) -> Strings:
    """The string table, bytes kept (invalid UTF-8 survives, as in Go's decoder), copied
    into a buffer of its own so that the decompressed message can be freed."""
    lengths = ends - starts
    new_ends = np.cumsum(lengths)
    return Strings(gather_ranges(buf, starts, lengths), new_ends - lengths, new_ends)


def decode_table(buf, starts, ends, message: Message, path: str, *,
                 max_fields: int | None = None) -> dict[str, np.ndarray]:
    """Every scalar field of *message* for each entry ``buf[starts[i]:ends[i]]``: one column
    per field (int64 for int64, uint64 for uint64, bool), 0 where absent; the last
    occurrence wins, as protobuf merges. Repeated message fields come back as the field table
    rows (``"<name>:fields"``) for the caller.

    An entry may have :data:`MAX_STACK_DEPTH` fields more than *message* declares (a
    location's lines are frames of every stack through it), and all of them together
    *max_fields* (None: any); more raise :class:`TooManyFields` before they are held."""
    try:
        ft = decode_fields(buf, starts, ends, max_fields=max_fields,
                           max_per_message=MAX_STACK_DEPTH + len(message.fields))
    except TooManyFields as exc:
        if exc.message is None:
            raise
        raise fail(f"{exc.text} (a stack is at most {MAX_STACK_DEPTH} frames deep: "
                   "MAX_STACK_DEPTH)", f"{path} -> {exc.message}", exc.offset) from None
    except WireError as exc:
        raise fail(exc.text, f"{path} -> {exc.message}", exc.offset) from None
    n = starts.size
    out: dict[str, np.ndarray] = {}
    for f in message.fields:
        rows = ft.number == f.number
        if f.type in ("int64", "uint64", "bool") and not f.repeated:
            sel = ft.select(rows)
            expect_wire(sel, VARINT, f"{path} -> {{}} -> {f.name}")
            dtype = {"int64": np.int64, "uint64": np.uint64, "bool": bool}[f.type]
            column = np.zeros(n, np.uint64)
            column[sel.message] = sel.value  # fancy assignment: the last one wins
            out[f.name] = column.view(np.int64) if dtype is np.int64 else column.astype(dtype)
        else:
            out[f"{f.name}:fields"] = ft.select(rows)
    return out


def expect_wire(sel: FieldTable, wire: int, path: str, base: int = 0) -> None:
    bad = sel.wire_type != wire
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise fail(f"wire type {int(sel.wire_type[i])}, expected {wire}",
                   path.format(base + int(sel.message[i])), int(sel.start[i]))


def repeated_uint64(buf, sel: FieldTable, n: int, path: str,
                    base: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A repeated varint field of *n* messages, packed (LEN) or not (VARINT) or both, in CSR
    form ``(offsets, values)`` in stored order."""
    if sel.wire_type.size and (sel.wire_type == LEN).all():
        try:
            inner, values = decode_packed_ranges(buf, sel.start, sel.end)
        except WireError as exc:
            raise fail(exc.text, path.format(base + int(sel.message[exc.message or 0])),
                       exc.offset) from None
        counts = np.diff(inner)
    else:
        bad = (sel.wire_type != LEN) & (sel.wire_type != VARINT)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise fail(f"wire type {int(sel.wire_type[i])} for a repeated varint",
                       path.format(base + int(sel.message[i])), int(sel.start[i]))
        packed = sel.wire_type == LEN
        try:
            inner, packed_values = decode_packed_ranges(buf, sel.start[packed], sel.end[packed])
        except WireError as exc:
            raise fail(exc.text, path.format("?"), exc.offset) from None
        counts = np.ones(sel.message.size, np.int64)
        counts[packed] = np.diff(inner)
        values = np.empty(int(counts.sum()), np.uint64)
        at = np.cumsum(counts) - counts
        values[at[~packed]] = sel.value[~packed]
        values[decode_ragged_ranges(at[packed], counts[packed])] = packed_values
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(sel.message, weights=counts, minlength=n).astype(np.int64),
              out=offsets[1:])
    return offsets, values


class ValueTypeIds(NamedTuple):
    """A ``ValueType`` as stored: string indices of its type and unit."""

    type: int
    unit: int


@dataclass(frozen=True)
class Head:
    """The top-level fields of a ``Profile`` but the big tables, as stored (string indices;
    0 where absent, as proto3 reads them)."""

    sample_type: tuple[ValueTypeIds, ...]
    period_type: ValueTypeIds | None
    comment: tuple[int, ...]
    period: int = 0
    time_nanos: int = 0
    duration_nanos: int = 0
    drop_frames: int = 0
    keep_frames: int = 0
    default_sample_type: int = 0
    doc_url: int = 0


def decode_head(rest: bytes) -> Head:
    """The fields of *rest* (the top-level fields but the runs), as protobuf merges them:
    the last value of a singular scalar wins, the occurrences of a singular message merge
    (decoded as their payloads back to back), repeated fields add up."""
    buf = np.frombuffer(rest, np.uint8)
    try:
        ft = decode_fields(buf, np.zeros(1, np.int64), np.full(1, buf.size, np.int64))
    except WireError as exc:
        raise fail(f"malformed profile fields ({exc.text})", "Profile") from None
    scalars: dict[str, int] = {}
    for f in spec.PROFILE.fields:
        sel = ft.select(ft.number == f.number)
        if f.type == "int64" and not f.repeated and sel.message.size:
            expect_wire(sel, VARINT, f"Profile -> {f.name}")
            scalars[f.name] = int(sel.value[-1:].view(np.int64)[0])
    sample_type = ft.select(ft.number == spec.PROFILE.field("sample_type").number)
    expect_wire(sample_type, LEN, "Profile -> sample_type -> {}")
    types = decode_table(buf, sample_type.start, sample_type.end, spec.VALUE_TYPE,
                         "Profile -> sample_type")
    period_type = ft.select(ft.number == spec.PROFILE.field("period_type").number)
    expect_wire(period_type, LEN, "Profile -> period_type")
    merged = None
    if period_type.message.size:
        payload = np.frombuffer(gather_ranges(buf, period_type.start,
                                              period_type.end - period_type.start), np.uint8)
        one = decode_table(payload, np.zeros(1, np.int64), np.full(1, payload.size, np.int64),
                           spec.VALUE_TYPE, "Profile -> period_type")
        merged = ValueTypeIds(int(one["type"][0]), int(one["unit"][0]))
    comments = ft.select(ft.number == spec.PROFILE.field("comment").number)
    _, comment = repeated_uint64(buf, comments, 1, "Profile -> comment")
    return Head(tuple(ValueTypeIds(int(t), int(u))
                      for t, u in zip(types["type"], types["unit"], strict=True)),
                merged, tuple(comment.view(np.int64).tolist()), **scalars)


@dataclass
class Tables:
    """The profile's tables as columns, ids and string indices as stored."""

    strings: Strings
    mappings: dict[str, np.ndarray]
    locations: dict[str, np.ndarray]
    lines: dict[str, np.ndarray]  # + "offsets": location i has lines offsets[i]:offsets[i+1]
    functions: dict[str, np.ndarray]
    head: Head  # everything else
    sample_ranges: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0), np.zeros(0)))


def decode_tables(buf: npt.NDArray[np.uint8], top: TopLevel, *,
                  max_lines: int = MAX_LINES) -> Tables:
    """Step 2. More than *max_lines* lines in all raise :class:`LimitError` before they are
    all held."""
    head = decode_head(top.rest)
    strings = decode_strings(buf, *top.runs[STRINGS])
    mappings = decode_table(buf, *top.runs[MAPPINGS], spec.MAPPING, "Profile -> mapping")
    functions = decode_table(buf, *top.runs[FUNCTIONS], spec.FUNCTION, "Profile -> function")
    location_starts, location_ends = top.runs[LOCATIONS]
    other_fields = len(spec.LOCATION.fields) - 1  # all but the lines, each once
    try:
        locations = decode_table(buf, location_starts, location_ends, spec.LOCATION,
                                 "Profile -> location",
                                 max_fields=max_lines + other_fields * location_starts.size)
    except TooManyFields as exc:
        raise LimitError(f"pprof: more than {max_lines} lines in the locations, more than "
                         f"read() takes (max_lines={max_lines}); pass a larger max_lines to "
                         "read them", limit="max_lines", value=max_lines, offset=exc.offset,
                         path="Profile -> location -> line") from None
    line_fields = locations.pop("line:fields")
    expect_wire(line_fields, LEN, "Profile -> location -> {} -> line")
    lines = decode_table(buf, line_fields.start, line_fields.end, spec.LINE,
                         "Profile -> location -> line")
    offsets = np.zeros(top.runs[LOCATIONS][0].size + 1, np.int64)
    np.cumsum(np.bincount(line_fields.message, minlength=offsets.size - 1), out=offsets[1:])
    lines["offsets"] = offsets
    for table in (mappings, functions, locations, lines):
        for name in [k for k in table if k.endswith(":fields")]:
            del table[name]
    return Tables(strings, mappings, locations, lines, functions, head, top.runs[SAMPLES])
