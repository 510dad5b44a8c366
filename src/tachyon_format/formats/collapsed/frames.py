"""One frame as text, in each dialect, and back.

Dialects (``style``):

* ``"cpython"``: CPython 3.15's ``CollapsedStackCollector``: ``basename(file):function:line``;
  a frame of file ``~`` at line 0 (``<native>``, ``<GC>``; a frame with no location counts as
  line 0) is its function name alone.
* ``"py-spy"``: py-spy's ``function (file:line)``, the file as the profile has it; as py-spy,
  ``function (file)`` for line 0 (and a frame without a location).
* ``"function"``: the function name alone (``flamegraph.pl``'s stackcollapse scripts).

``lines=False`` leaves the line number out (``file.py:function``, ``function (file)``); a
frame of file ``~`` is then its name alone, whatever its line.
A frame without a function name but with an address (native profiles) is named ``0x...``.
A frame without a file is its name alone in ``"py-spy"``, and in ``"cpython"`` when it comes
from a native profile (one with addresses): CPython itself writes ``:name:line`` for a Python
frame whose file is empty, and so does this module.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.internal import internal_strings

Style = Literal["cpython", "py-spy", "function"]
STYLES: tuple[str, ...] = ("cpython", "py-spy", "function")

NO_FILE = "~"
"""The file of a frame that has none (CPython's ``<native>`` and ``<GC>``, pstats' builtins)."""

@dataclass(frozen=True)
class RenderedFrames:
    """Per frame row of a profile: ``key`` (rows with equal keys are one frame in the output:
    CPython's ``(file, line, function)`` in its dialect, the text in the others), ``internal``
    (a frame of the profiler), and per key its ``texts``."""

    key: npt.NDArray[np.int64]
    internal: npt.NDArray[np.bool_]
    texts: list[str]


def render_frames(profile: Profile, style: Style = "cpython", lines: bool = True) -> RenderedFrames:
    """Every frame row's key and whether it is internal (vectorised), and the text of each
    distinct (file, line, function) in *style*, rendered once."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    frames = profile.frames
    strings = profile.strings
    texts = [*strings.texts(), ""]  # (the last one for the id of an index past the table)
    file_id = strings.text_ids(frames.filename)
    name_id = strings.text_ids(frames.funcname)
    # CPython: a frame without a location (lineno -1) has line 0 (collector.extract_lineno)
    line = np.where(frames.lineno == -1, 0, frames.lineno).astype(np.int64)
    columns = [name_id] if style == "function" else [file_id, line if lines else 0 * line,
                                                      name_id]
    native = frames.address is not None
    if native:  # an unnamed native frame is named by its address
        unnamed = name_id == strings.text_ids(len(strings))
        columns.append(np.where(unnamed, frames.address, 0).astype(np.int64))
    if not len(line):
        return RenderedFrames(np.zeros(0, np.int64), np.zeros(0, bool), [])
    _, rows, key = np.unique(np.stack(columns, axis=1), axis=0, return_index=True,
                             return_inverse=True)
    out_texts = []
    for row in rows.tolist():
        name = texts[name_id[row]]
        if native and not name and frames.address[row]:
            name = f"0x{int(frames.address[row]):x}"
        out_texts.append(frame_text(texts[file_id[row]], int(line[row]), name, style, lines,
                                    native))
    key = key.reshape(-1).astype(np.int64)
    if style != "cpython":  # (only CPython counts frames of one text apart: see its key)
        same = {t: i for i, t in enumerate(dict.fromkeys(out_texts))}
        key = np.array([same[t] for t in out_texts], np.int64)[key]
        out_texts = list(same)
    internal_text = internal_strings(texts)
    return RenderedFrames(key, internal_text[file_id], out_texts)


def frame_text(file: str, line: int, name: str, style: Style, lines: bool = True,
               native: bool = False) -> str:
    """One frame as *style* writes it (*line* 0 for a frame without a location)."""
    if style == "cpython":
        if (file == NO_FILE and (line == 0 or not lines)) or (native and not file):
            return name
        base = posixpath.basename(file)
        return f"{base}:{name}:{line}" if lines else f"{base}:{name}"
    if style == "function" or file in ("", NO_FILE):
        return name
    return f"{name} ({file}:{line})" if lines and line != 0 else f"{name} ({file})"


# -- reading ---------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?[0-9]{1,20}")

ParsedFrame = tuple[str, str, int]
"""(file, function, line): :data:`NO_FILE` and -1 where the text has none."""


def _cpython(text: str, lines: bool) -> ParsedFrame | None:
    """``file:function:line`` (``file:function`` without *lines*): the function is what
    follows the file's last ``:`` (Python names have none); None if *text* is not that.
    Partitions, not a backtracking pattern: linear in the text, whatever it holds."""
    number = ""
    if lines:
        text, sep, number = text.rpartition(":")
        if not sep or _NUMBER.fullmatch(number) is None:
            return None
    file, sep, name = text.rpartition(":")
    if not sep:
        return None
    return file, name, int(number) if lines else -1


def _py_spy(text: str, lines: bool) -> ParsedFrame | None:
    """``function (file:line)`` or ``function (file)``, or None."""
    if not text.endswith(")"):
        return None
    name, sep, file = text[:-1].partition(" (")
    if not sep:
        return None
    path, sep, number = file.rpartition(":")
    if not lines or not sep or _NUMBER.fullmatch(number) is None or number.startswith("-"):
        return file, name, -1  # (py-spy writes no line 0)
    return path, name, int(number)


def parse_frame(text: str, style: Style, lines: bool = True) -> ParsedFrame:
    """The file, function and line a frame's *text* in *style* names (the inverse of
    :func:`frame_text` for frames it wrote); a text that is not that is a function name."""
    parsed = None
    if style == "cpython":
        parsed = _cpython(text, lines)
    elif style == "py-spy":
        parsed = _py_spy(text, lines)
    return parsed or (NO_FILE, text, -1)


def detect_style(texts: list[str]) -> Style:
    """The dialect of a file's distinct frame texts: ``"cpython"`` or ``"py-spy"`` if every
    frame fits it (a bare name counts as a frame without a file) and one at least has a file
    and line; else ``"function"``."""
    for style, split, bare in (("cpython", _cpython, ":"), ("py-spy", _py_spy, " (")):
        matched = 0
        for text in texts:
            if split(text, True):
                matched += 1
            elif bare in text:
                break
        else:
            if matched:
                return style  # type: ignore[return-value]
    return "function"
