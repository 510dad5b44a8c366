"""The records of a JSONL file, parsed and checked line by line (tier d: one sequential
scan; each line is one small JSON object).

Every problem raises :class:`~tachyon_format.errors.FormatError` with the byte offset of the
line, and a path ``line N -> field`` naming the 1-based line and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tachyon_format.errors import FormatError

from .facts import SCHEMA_VERSION

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
COUNT = (0, 2**63 - 1)
FRAME_KEYS = ("line", "end_line", "col", "end_col")


@dataclass
class Parsed:
    """What the records say: ``strings`` and ``frames`` (dicts of the frame records, by id),
    per-frame ``counts`` (``(self, cumulative)`` by frame id), the ``meta`` record and the
    ``end`` record's ``samples_total``."""

    meta: dict[str, Any]
    strings: dict[int, str] = field(default_factory=dict)
    frames: dict[int, dict[str, int]] = field(default_factory=dict)
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)
    agg_totals: set[int] = field(default_factory=set)
    samples_total: int | None = None


class _Line:
    """One line being checked: raises FormatErrors that name it."""

    def __init__(self, number: int, offset: int) -> None:
        self.number = number
        self.offset = offset

    def error(self, message: str, where: str = "") -> FormatError:
        path = f"line {self.number}" + (f" -> {where}" if where else "")
        return FormatError(f"line {self.number}: {message}", offset=self.offset, path=path)

    def integer(self, record: dict, key: str, where: str, bounds: tuple[int, int],
                optional: bool = False) -> int | None:
        value = record.get(key)
        if value is None and optional and key not in record:
            return None
        if type(value) is not int:
            raise self.error(f"{key} must be an integer, not {json.dumps(value)}",
                             f"{where}{key}")
        if not bounds[0] <= value <= bounds[1]:
            raise self.error(f"{key} {value} out of range [{bounds[0]}, {bounds[1]}]",
                             f"{where}{key}")
        return value

    def items(self, record: dict, key: str) -> list[dict]:
        items = record.get(key)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise self.error(f"{key} must be a list of objects", key)
        return items


def parse_records(data: bytes) -> Parsed:
    """Every record of *data*, checked; the file must end with the ``end`` record."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise FormatError("line 1: starts with a UTF-8 byte-order mark", offset=0,
                          path="line 1")
    parsed: Parsed | None = None
    run_id = None
    offset = 0
    number = 0
    ended = False
    for raw in data.splitlines(keepends=True):
        number += 1
        line = _Line(number, offset)
        offset += len(raw)
        if ended:
            raise line.error("a record after the end record (concatenated runs are not "
                             "supported: split the stream by run_id)")
        if not raw.endswith(b"\n"):
            raise line.error("truncated: the line has no final newline")
        record = _decode(line, raw)
        kind = record.get("type")
        if parsed is None:
            if kind != "meta":
                raise line.error(f"the first record must be meta, not {json.dumps(kind)}",
                                 "type")
            run_id = _check_meta(line, record)
            parsed = Parsed(meta=record)
            continue
        if record.get("run_id") != run_id:
            raise line.error(f"run_id {json.dumps(record.get('run_id'))} differs from the "
                             f"meta record's {run_id!r}", "run_id")
        if record.get("v") != SCHEMA_VERSION:
            raise line.error(f"unsupported record schema version {record.get('v')!r}", "v")
        if kind == "string_table":
            _strings(line, record, parsed)
        elif kind == "frame_table":
            _frames(line, record, parsed)
        elif kind == "agg":
            _agg(line, record, parsed)
        elif kind == "end":
            parsed.samples_total = line.integer(record, "samples_total", "", COUNT)
            ended = True
        elif kind == "meta":
            raise line.error("a second meta record", "type")
        # other types: ignored, as the schema tells consumers to
    if parsed is None:
        raise FormatError("empty file: no meta record", offset=0, path="line 1")
    if not ended:
        raise FormatError(f"truncated: no end record after line {number}", offset=offset,
                          path=f"line {number + 1}")
    return parsed


def _decode(line: _Line, raw: bytes) -> dict:
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError is a ValueError)
        raise line.error(f"not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise line.error("a record must be a JSON object")
    return record


def _check_meta(line: _Line, record: dict) -> str:
    if record.get("v") != SCHEMA_VERSION:
        raise line.error(f"unsupported record schema version {record.get('v')!r}", "v")
    run_id = record.get("run_id")
    if not isinstance(run_id, str):
        raise line.error("run_id must be a string", "run_id")
    line.integer(record, "sample_interval_usec", "", (0, 2**64 - 1), optional=True)
    if "mode" in record and not isinstance(record["mode"], str):
        raise line.error("mode must be a string", "mode")
    return run_id


def _strings(line: _Line, record: dict, parsed: Parsed) -> None:
    for i, item in enumerate(line.items(record, "strings")):
        where = f"strings[{i}] -> "
        str_id = line.integer(item, "str_id", where, COUNT)
        value = item.get("value")
        if not isinstance(value, str):
            raise line.error("value must be a string", f"{where}value")
        if str_id in parsed.strings:
            raise line.error(f"string {str_id} given twice", f"{where}str_id")
        parsed.strings[str_id] = value


def _frames(line: _Line, record: dict, parsed: Parsed) -> None:
    for i, item in enumerate(line.items(record, "frames")):
        where = f"frames[{i}] -> "
        frame_id = line.integer(item, "frame_id", where, COUNT)
        if frame_id in parsed.frames:
            raise line.error(f"frame {frame_id} given twice", f"{where}frame_id")
        frame = {"path": line.integer(item, "path_str_id", where, COUNT),
                 "func": line.integer(item, "func_str_id", where, COUNT)}
        for key in FRAME_KEYS:
            value = line.integer(item, key, where, INT32, optional=key != "line")
            if value is not None:
                frame[key] = value
        for key in ("path", "func"):
            if frame[key] not in parsed.strings:
                raise line.error(f"no string {frame[key]} (strings must come before the "
                                 f"frames that use them)", f"{where}{key}_str_id")
        parsed.frames[frame_id] = frame


def _agg(line: _Line, record: dict, parsed: Parsed) -> None:
    if record.get("kind") != "frame" or record.get("scope") != "final":
        return  # another aggregation: ignored, as an unknown record type
    parsed.agg_totals.add(line.integer(record, "samples_total", "", COUNT))
    for i, item in enumerate(line.items(record, "entries")):
        where = f"entries[{i}] -> "
        frame_id = line.integer(item, "frame_id", where, COUNT)
        counts = (line.integer(item, "self", where, COUNT),
                  line.integer(item, "cumulative", where, COUNT))
        if frame_id not in parsed.frames:
            raise line.error(f"no frame {frame_id} (frames must come before their counts)",
                             f"{where}frame_id")
        if frame_id in parsed.counts:
            raise line.error(f"frame {frame_id} counted twice", f"{where}frame_id")
        parsed.counts[frame_id] = counts
