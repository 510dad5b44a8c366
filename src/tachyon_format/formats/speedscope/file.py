"""A speedscope file as checked JSON: the document, the shared frames, numbers as arrays.

speedscope's format is JSON described by a JSON Schema
(https://www.speedscope.app/file-format-schema.json), generated from
``src/lib/file-format-spec.ts`` in jlfwong/speedscope (followed at commit
3613918de0dd55a263d0d04f85b0c8c2039c7bee; the tests run the npm release 1.25.0); the
reference reader and writer are ``src/lib/file-format.ts`` there. A file is
``{"$schema", "shared": {"frames": [{"name", "file"?, "line"?, "col"?}]}, "profiles": [...],
"name"?, "activeProfileIndex"?, "exporter"?}``; a
profile is ``sampled`` (``samples``: stacks of frame indices, outermost first, ``weights``)
or ``evented`` (``events``: ``{"type": "O"|"C", "frame", "at"}``), with a ``unit``,
``startValue`` and ``endValue``.

Every check here names the JSON path of what is wrong (``profiles[0].samples[3][1]``);
parse errors name the byte offset and the line. Arrays of numbers are checked for their
types in one pass and converted with numpy, never one Python object per number beyond what
``json`` itself makes.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError

from . import SCHEMA_URL

UNITS = ("none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes")
"""The values of a profile's ``unit`` (the schema's ``ValueUnit``)."""
MAX_INT = 2**63 - 1
MAX_AT = 2**62
"""Event times above this (in magnitude) are refused, so that every difference fits 64 bits."""



def fail(path: str, message: str) -> FormatError:
    return FormatError(message, path=path)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(data: bytes) -> Any:
    """The JSON value of *data* (UTF-8, a BOM allowed); :class:`FormatError` with the byte
    offset and line of the first error."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text: {exc.reason}", offset=bom + exc.start,
                          path="json") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        offset = bom + len(text[:exc.pos].encode("utf-8"))
        raise FormatError(f"not JSON: {exc.msg}", offset=offset,
                          path=f"json (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:  # NaN, Infinity
        raise FormatError(f"not JSON: {exc}", path="json") from None
    except RecursionError:
        raise FormatError("not JSON this reader takes: nested too deeply",
                          path="json") from None


@dataclass(frozen=True)
class SharedFrames:
    """``shared.frames`` as columns: name and file texts, line and col (-1 when absent)."""

    names: list[str]
    files: list[str]
    lines: npt.NDArray[np.int32]
    cols: npt.NDArray[np.int32]

    def __len__(self) -> int:
        return len(self.names)


def document(value: Any) -> tuple[dict, SharedFrames, list]:
    """The top-level object checked: it, its shared frames and its list of profiles."""
    if not isinstance(value, dict):
        raise fail("(document)", f"a speedscope file is a JSON object, not {_kind(value)}")
    schema = value.get("$schema")
    if schema != SCHEMA_URL:
        raise fail("$schema", f"expected {SCHEMA_URL!r}, found {schema!r}")
    shared = value.get("shared")
    if not isinstance(shared, dict) or not isinstance(shared.get("frames"), list):
        raise fail("shared.frames", "missing, or not a list")
    profiles = value.get("profiles")
    if not isinstance(profiles, list):
        raise fail("profiles", "missing, or not a list")
    for key, kind in (("name", str), ("exporter", str), ("activeProfileIndex", int)):
        if key in value and type(value[key]) is not kind:
            raise fail(key, f"must be a {kind.__name__}, not {_kind(value[key])}")
    return value, shared_frames(shared["frames"]), profiles


def shared_frames(frames: list) -> SharedFrames:
    names, files = [], []
    lines = np.full(len(frames), -1, np.int32)
    cols = np.full(len(frames), -1, np.int32)
    for i, frame in enumerate(frames):
        where = f"shared.frames[{i}]"
        if not isinstance(frame, dict):
            raise fail(where, f"a frame is an object, not {_kind(frame)}")
        name = frame.get("name")
        if not isinstance(name, str):
            raise fail(f"{where}.name", f"missing, or not a string ({_kind(name)})")
        file = frame.get("file", "")
        if not isinstance(file, str):
            raise fail(f"{where}.file", f"not a string ({_kind(file)})")
        names.append(name)
        files.append(file)
        for key, column in (("line", lines), ("col", cols)):
            number = frame.get(key)
            if number is None:
                continue
            if type(number) is float and number.is_integer():
                number = int(number)
            if type(number) is not int or not 0 <= number < 2**31:
                raise fail(f"{where}.{key}", f"not a whole number from 0 to 2**31 - 1: "
                           f"{number!r}")
            column[i] = number
    return SharedFrames(names, files, lines, cols)


def field(profile: dict, key: str, where: str, kinds: type | tuple[type, ...]) -> Any:
    """``profile[key]``, which must be one of *kinds* (a bool is never a number)."""
    if key not in profile:
        raise fail(f"{where}.{key}", "missing")
    value = profile[key]
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise fail(f"{where}.{key}", f"wrong type: {_kind(value)}")
    return value


def numbers(values: Any, where: str) -> npt.NDArray[np.float64] | npt.NDArray[np.int64]:
    """A JSON list of finite numbers as int64 (all whole and in range) or float64."""
    if not isinstance(values, list):
        raise fail(where, f"not a list ({_kind(values)})")
    kinds = set(map(type, values))
    if not kinds <= {int, float}:
        raise _first_bad(values, where, (int, float), "a number")
    if kinds <= {int}:
        try:
            return np.fromiter(values, np.int64, len(values))
        except OverflowError:
            bad = next(i for i, v in enumerate(values) if not -MAX_INT - 1 <= v <= MAX_INT)
            raise fail(f"{where}[{bad}]", f"{values[bad]} does not fit 64 bits") from None
    return np.fromiter(values, np.float64, len(values))


def ragged_indices(lists: Any, where: str, bound: int) -> tuple[npt.NDArray[np.int64],
                                                                npt.NDArray[np.int64]]:
    """A JSON list of lists of indices ``0 <= i < bound`` as CSR ``(offsets, flat)``."""
    if not isinstance(lists, list):
        raise fail(where, f"not a list ({_kind(lists)})")
    if not set(map(type, lists)) <= {list}:
        raise _first_bad(lists, where, (list,), "a list of frame indices")
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, lists), np.int64, len(lists)), out=offsets[1:])
    flat = itertools.chain.from_iterable(lists)
    if not set(map(type, flat)) <= {int}:
        for i, inner in enumerate(lists):
            if not set(map(type, inner)) <= {int}:
                raise _first_bad(inner, f"{where}[{i}]", (int,), "a frame index")
    try:
        frames = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(offsets[-1]))
    except OverflowError:
        frames = None
    if frames is None or (frames.size and (frames.min() < 0 or frames.max() >= bound)):
        for i, inner in enumerate(lists):
            for j, index in enumerate(inner):
                if not 0 <= index < bound:
                    raise fail(f"{where}[{i}][{j}]", f"frame index {index} outside the "
                               f"{bound} shared frames")
    return offsets, frames  # type: ignore[return-value]


def _first_bad(values: list, where: str, kinds: tuple[type, ...], what: str) -> FormatError:
    for i, value in enumerate(values):
        if type(value) not in kinds:
            return fail(f"{where}[{i}]", f"expected {what}, found {_kind(value)}")
    return fail(where, f"expected {what}")  # (not reached)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
