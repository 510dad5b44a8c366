"""What counts as "the same function": frame rows grouped by a few frame fields.

``by`` names the fields that make a key (or one of the named groupings):

==================  ==============================================================
``"function"``      the function name alone (``funcname``)
``"file_function"`` ``(filename, funcname)``
``"line"``          ``(filename, funcname, lineno)``: the key of a pstats entry
``"opcode"``        ``(filename, funcname, lineno, opcode)``
==================  ==============================================================

or any tuple of ``filename``, ``funcname``, ``lineno``, ``column``, ``opcode``. Two frame
rows whose strings differ but show as the same text count as one key. A frame without a
location (``lineno`` -1) has line 0, as in CPython's collectors; a native frame without a
name (an address only) is named ``0x<address>``.

Python touches each string and each distinct key once; the per-frame work is numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile

FIELDS = ("filename", "funcname", "lineno", "column", "opcode")
GROUPINGS: dict[str, tuple[str, ...]] = {
    "function": ("funcname",),
    "file_function": ("filename", "funcname"),
    "line": ("filename", "funcname", "lineno"),
    "opcode": ("filename", "funcname", "lineno", "opcode"),
}
By = str | tuple[str, ...]


def fields_of(by: By) -> tuple[str, ...]:
    """The frame fields of the grouping *by*; ValueError for an unknown one."""
    fields = GROUPINGS.get(by) if isinstance(by, str) else tuple(by)
    if not fields or any(f not in FIELDS for f in fields):
        raise ValueError(f"unknown grouping {by!r}: one of {', '.join(GROUPINGS)} or a tuple "
                         f"of {', '.join(FIELDS)}")
    return fields


@dataclass(frozen=True)
class FrameKeys:
    """``key[row]``: the key of each frame row; ``columns``: per key, its field values
    (texts as object arrays, numbers as int64)."""

    key: npt.NDArray[np.int64]
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))


def frame_keys(profile: Profile, by: By = "function") -> FrameKeys:
    """Every frame row's key under the grouping *by*, and the distinct keys' values."""
    fields = fields_of(by)
    frames = profile.frames
    strings = profile.strings
    texts = [*strings.texts(), ""]  # (the last for the id of an index past the table)
    codes: list[np.ndarray] = []
    for name in fields:
        column = getattr(frames, name).astype(np.int64)
        if name in ("filename", "funcname"):
            column = strings.text_ids(column)
        elif name == "lineno":
            column = np.where(column == -1, 0, column)
        codes.append(column)
    native = frames.address is not None and "funcname" in fields
    if native:  # an unnamed native frame is named by its address
        unnamed = strings.text_ids(frames.funcname) == strings.text_ids(len(strings))
        codes.append(np.where(unnamed, frames.address, 0).astype(np.int64))
    n = len(frames.lineno)
    if n == 0:
        empty = {name: np.zeros(0, object if name in ("filename", "funcname") else np.int64)
                 for name in fields}
        return FrameKeys(np.zeros(0, np.int64), empty)
    _, rows, key = np.unique(np.stack(codes, axis=1), axis=0, return_index=True,
                             return_inverse=True)
    columns: dict[str, np.ndarray] = {}
    for name, code in zip(fields, codes, strict=False):
        if name in ("filename", "funcname"):
            columns[name] = np.array([texts[i] for i in code[rows].tolist()], dtype=object)
        else:
            columns[name] = code[rows]
    if native:
        address = codes[-1][rows].tolist()
        columns["funcname"] = np.array(
            [f"0x{a:x}" if a and not t else t
             for t, a in zip(columns["funcname"].tolist(), address, strict=True)], dtype=object)
    return FrameKeys(key.reshape(-1).astype(np.int64), columns)
