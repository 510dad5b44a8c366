"""The writer's tables: strings, functions, locations, mappings, and the top-level fields.

A profile read from pprof (with :class:`.facts.PprofFacts` that still fit its frames) gets
its tables back as they were: the same ids, flags, lines and string indices. Any other
profile gets one Location per frame (id = frame row + 1, one Line) and one Function per
(name, file) (``system_name`` left empty: Python has no separate system name), with the
conversions of docs/formats/pprof.md (lines 0 = unknown, columns 1-based).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tachyon_format.kernels.protowire import Part, encode_len_fields, encode_messages
from tachyon_format.model import Profile, Strings, ValueType
from tachyon_format.schema import pprof_plain as spec
from tachyon_format.schema.leb128 import encode_uleb128
from tachyon_format.schema.protobuf_plain import Message, key_of

from .facts import PprofFacts

LOCATION_KEY, FUNCTION_KEY, STRING_KEY = (key_of(spec.PROFILE, name)
                                          for name in ("location", "function", "string_table"))
LINE_KEY = key_of(spec.LOCATION, "line")


class StringTable:
    """The profile's strings as pprof's table: entry 0 is ``""`` (one is put in front if the
    profile's first string is not empty, and every index shifts by ``shift``); strings the
    writer needs are appended once each."""

    def __init__(self, strings: Strings) -> None:
        self.base = strings
        self.shift = 0 if len(strings) and strings.raw(0) == b"" else 1
        self.added: list[bytes] = []
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        """The index of *text*: an existing entry if the profile has it, else a new one."""
        found = self._index.get(text)
        if found is not None:
            return found
        if text == "":
            found = 0
        elif text in self.base:
            found = self.base.index(text) + self.shift
        else:
            found = len(self.base) + self.shift + len(self.added)
            self.added.append(text.encode("utf-8", "surrogateescape"))
        self._index[text] = found
        return found

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """String indices of the profile's string rows."""
        return np.asarray(rows, np.int64) + self.shift

    def row(self, row: int) -> int:
        """The string index of one row, 0 for an empty string."""
        return row + self.shift if self.base.raw(row) else 0

    def encode(self) -> bytes:
        raws = ([b""] if self.shift else []) + self.base.raws() + self.added
        lengths = np.fromiter(map(len, raws), np.int64, len(raws))
        offsets = np.zeros(len(raws) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        payload = np.frombuffer(b"".join(raws), np.uint8)
        return encode_len_fields(STRING_KEY, payload, offsets).tobytes()


@dataclass
class EncodedTables:
    mappings: bytes
    locations: bytes
    functions: bytes
    location_of_frame: np.ndarray  # location id of each frame
    is_head: np.ndarray  # frame is its location's first (innermost) line


def _facts_fit(profile: Profile, facts: PprofFacts | None) -> bool:
    if facts is None:
        return False
    c = facts.columns
    return (c["frame_line"].size == len(profile.frames)
            and c["mapping_id"].size == len(profile.mappings))


def encode_tables(profile: Profile, facts: PprofFacts | None,
                  strings: StringTable) -> EncodedTables:
    if _facts_fit(profile, facts):
        return _tables_as_read(profile, facts, strings)
    return _tables_made(profile, strings)


def _tables_made(profile: Profile, strings: StringTable) -> EncodedTables:
    frames = profile.frames
    n = len(frames)
    # a frame with neither name nor file (an unsymbolized address) gets a Location without
    # lines, as pprof writes them; the others one Line of the Function (name, file)
    raws = profile.strings.raws()
    named = np.fromiter((bool(raws[a]) or bool(raws[b]) for a, b in zip(
        frames.funcname.tolist(), frames.filename.tolist(), strict=True)), bool, n)
    rows = np.flatnonzero(named)
    pair = np.stack([frames.funcname[rows].astype(np.int64),
                     frames.filename[rows].astype(np.int64)])
    if rows.size:
        _, first, inverse = np.unique(pair, axis=1, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(order.size, np.int64)
        rank[order] = np.arange(order.size)
        function_of_line = rank[inverse.ravel()]
        fn_first = rows[first[order]]
    else:
        function_of_line = fn_first = np.zeros(0, np.int64)
    functions = _encode_functions(
        np.arange(1, fn_first.size + 1, dtype=np.uint64),
        strings.rows(frames.funcname[fn_first]), np.zeros(fn_first.size, np.int64),
        strings.rows(frames.filename[fn_first]), np.zeros(fn_first.size, np.int64))
    line = np.where(frames.lineno > 0, frames.lineno, 0).astype(np.int64)[rows]
    column = np.where(frames.column >= 0, frames.column.astype(np.int64) + 1, 0)[rows]
    mapping_id = (frames.mapping.astype(np.int64) + 1 if frames.mapping is not None
                  else np.zeros(n, np.int64))
    address = frames.address if frames.address is not None else np.zeros(n, np.uint64)
    location_of_frame = np.arange(1, n + 1, dtype=np.uint64)
    line_offsets = np.zeros(n + 1, np.int64)
    np.cumsum(named, out=line_offsets[1:])
    locations = _encode_locations(
        location_of_frame, mapping_id.astype(np.uint64), address, np.zeros(n, bool),
        line_offsets, function_of_line.astype(np.uint64) + 1, line, column)
    m = profile.mappings
    mappings = _encode_mappings(profile, np.arange(1, len(m) + 1), None, strings)
    return EncodedTables(mappings, locations, functions, location_of_frame, np.ones(n, bool))


def _tables_as_read(profile: Profile, facts: PprofFacts, strings: StringTable) -> EncodedTables:
    c = facts.columns
    frames = profile.frames
    n = len(frames)
    first, num_lines = c["location_first_frame"], c["location_num_lines"]
    per_location = np.maximum(num_lines, 1)
    location_of_frame_row = np.repeat(np.arange(first.size), per_location)
    is_head = np.zeros(n, bool)
    is_head[first] = True
    fn_row = c["frame_function"]
    fn_ids = c["function_id"]
    function_id = np.where(fn_row >= 0, fn_ids[np.maximum(fn_row, 0)] if fn_ids.size else 0, 0)
    with_line = np.ones(n, bool)
    with_line[first[num_lines == 0]] = False
    line_offsets = np.zeros(first.size + 1, np.int64)
    np.cumsum(num_lines, out=line_offsets[1:])
    mapping_ids = c["mapping_id"]
    mapping = frames.mapping if frames.mapping is not None else np.full(n, -1, np.int32)
    head_mapping = mapping[first]
    mapping_id = np.where(head_mapping >= 0, mapping_ids[np.maximum(head_mapping, 0)]
                          if mapping_ids.size else 0, 0)
    address = frames.address[first] if frames.address is not None else np.zeros(
        first.size, np.uint64)
    locations = _encode_locations(
        c["location_id"], mapping_id.astype(np.uint64), address, c["location_is_folded"],
        line_offsets, function_id[with_line].astype(np.uint64), c["frame_line"][with_line],
        c["frame_column"][with_line])
    functions = _encode_functions(
        c["function_id"], strings.rows(c["function_name"]),
        strings.rows(c["function_system_name"]) * (c["function_system_name"] != 0),
        strings.rows(c["function_filename"]), c["function_start_line"])
    mappings = _encode_mappings(profile, mapping_ids, c, strings)
    return EncodedTables(mappings, locations, functions,
                         c["location_id"][location_of_frame_row], is_head)


def _encode_functions(ids, name, system_name, filename, start_line) -> bytes:
    n = ids.size
    int64s = {"name": name, "system_name": system_name, "filename": filename,
              "start_line": start_line}
    message, offsets = encode_messages(n, [
        Part(key_of(spec.FUNCTION, "id"), values=ids.astype(np.uint64)),
        *(Part(key_of(spec.FUNCTION, field), values=column.astype(np.int64).view(np.uint64))
          for field, column in int64s.items()),
    ])
    return encode_len_fields(FUNCTION_KEY, message, offsets).tobytes()


def _encode_locations(ids, mapping_id, address, is_folded, line_offsets, function_id, line,
                      column) -> bytes:
    num_lines = function_id.size
    line_msg, line_off = encode_messages(num_lines, [
        Part(key_of(spec.LINE, "function_id"), values=function_id),
        Part(key_of(spec.LINE, "line"), values=np.asarray(line, np.int64).view(np.uint64)),
        Part(key_of(spec.LINE, "column"), values=np.asarray(column, np.int64).view(np.uint64)),
    ])
    # each line as a `line` field; a location's lines are consecutive
    line_fields, line_field_off = encode_messages(num_lines, [
        Part.of(LINE_KEY, line_msg, line_off, keep_zero=True)])
    n = ids.size
    message, offsets = encode_messages(n, [
        Part(key_of(spec.LOCATION, "id"), values=np.asarray(ids, np.uint64)),
        Part(key_of(spec.LOCATION, "mapping_id"), values=mapping_id),
        Part(key_of(spec.LOCATION, "address"), values=np.asarray(address, np.uint64)),
        Part(0, payload=line_fields, starts=line_field_off[line_offsets[:-1]],
             lengths=line_field_off[line_offsets[1:]] - line_field_off[line_offsets[:-1]],
             raw=True),
        Part(key_of(spec.LOCATION, "is_folded"), values=np.asarray(is_folded, np.uint64)),
    ])
    return encode_len_fields(LOCATION_KEY, message, offsets).tobytes()


def _key(message: Message, name: str) -> bytes:
    """The encoded key of field *name* of *message*, from its declaration."""
    return encode_uleb128(key_of(message, name))


def _message(message: Message, values: dict[str, Any]) -> bytes:
    """One message of a few fields, encoded in field-number order as protobuf serializes
    proto3: an integer field left out where 0 (int64 as its two's complement), a
    submessage or packed run (bytes) written whenever given (not None; an empty packed run
    is left out)."""
    out = bytearray()
    for f in message.fields:
        value = values.get(f.name)
        if value is None or (f.repeated and not value):
            continue
        if isinstance(value, bytes):
            out += _key(message, f.name) + encode_uleb128(len(value)) + value
        elif value:
            out += _key(message, f.name) + encode_uleb128(int(value) & 0xFFFF_FFFF_FFFF_FFFF)
    return bytes(out)


def _repeated(message: Message, name: str, payloads) -> bytes:
    """The occurrences of repeated message field *name*, each ``key length payload``."""
    key = _key(message, name)
    return b"".join(key + encode_uleb128(len(p)) + p for p in payloads)


def _encode_mappings(profile: Profile, ids, c, strings: StringTable) -> bytes:
    """Mappings, a message each (a profile has a handful)."""
    m = profile.mappings
    flags = ("has_functions", "has_filenames", "has_line_numbers", "has_inline_frames")
    return _repeated(spec.PROFILE, "mapping", (_message(spec.MAPPING, {
        "id": int(ids[i]), "memory_start": int(m.start[i]), "memory_limit": int(m.limit[i]),
        "file_offset": int(m.offset[i]), "filename": strings.row(int(m.filename[i])),
        "build_id": strings.row(int(m.build_id[i])),
        **({flag: bool(c[flag][i]) for flag in flags} if c is not None else {}),
    }) for i in range(len(m))))


def encode_head(profile: Profile, facts: PprofFacts | None, strings: StringTable,
                sample_types: tuple[ValueType, ...], overrides: dict[str, Any]) -> bytes:
    """The top-level fields but the big tables: the sample types, then the scalars and the
    period type (``Profile`` fields 7 to 15) as one message."""
    meta = profile.meta
    of = facts.strings_of if facts is not None else {}
    kept_types = of.get("sample_type")
    if kept_types is not None and len(kept_types) == len(sample_types) and [
            (profile.strings[int(t)], profile.strings[int(u)]) for t, u in kept_types] == [
            (v.type, v.unit) for v in sample_types]:
        types = [(int(strings.rows(t)), int(strings.rows(u))) for t, u in kept_types]
    else:
        types = [(strings.add(v.type), strings.add(v.unit)) for v in sample_types]
    fields: dict[str, Any] = {
        "period": _int64(meta.period, "period"),
        "time_nanos": _int64(meta.time_ns or 0, "time_nanos"),
        "duration_nanos": _int64(meta.duration_ns or 0, "duration_nanos"),
    }
    if meta.period_type is not None:
        fields["period_type"] = _message(spec.VALUE_TYPE, {
            "type": strings.add(meta.period_type.type),
            "unit": strings.add(meta.period_type.unit)})
    default = overrides.get("default_sample_type") or meta.default_sample_type
    if default:
        fields["default_sample_type"] = strings.add(default)
    for name in ("doc_url", "drop_frames", "keep_frames"):
        text = overrides.get(name)
        if text:
            fields[name] = strings.add(text)
        elif of.get(name):
            fields[name] = int(strings.rows(of[name]))
    comments = overrides.get("comments")
    if comments is not None:
        comment = [strings.add(text) for text in comments]
    elif of.get("comment") is not None:
        comment = [int(i) for i in strings.rows(of["comment"])]
    else:
        comment = []
    fields["comment"] = b"".join(encode_uleb128(i & 0xFFFF_FFFF_FFFF_FFFF) for i in comment)
    head = _repeated(spec.PROFILE, "sample_type", (
        _message(spec.VALUE_TYPE, {"type": t, "unit": u}) for t, u in types))
    return head + _message(spec.PROFILE, fields)


def _int64(value: int, field: str) -> int:
    """*value* for one of pprof's int64 fields; a ValueError naming the field if it does not
    fit (never a value silently cut)."""
    value = int(value)
    if not -(1 << 63) <= value < 1 << 63:
        raise ValueError(f"pprof cannot hold this profile's {field}: {value} does not fit "
                         "its int64")
    return value
