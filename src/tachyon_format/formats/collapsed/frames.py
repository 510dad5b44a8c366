"""One frame as text, in each dialect, and back.

Dialects (``style``):

* ``"cpython"``: CPython 3.15's ``CollapsedStackCollector``: ``basename(file):function:line``;
  a frame of file ``~`` at line 0 (``<native>``, ``<GC>``; a frame with no location counts as
  line 0) is its function name alone.
* ``"py-spy"``: py-spy's ``function (file:line)``, the file as the profile has it.
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

Style = Literal["cpython", "py-spy", "function"]
STYLES: tuple[str, ...] = ("cpython", "py-spy", "function")

NO_FILE = "~"
"""The file of a frame that has none (CPython's ``<native>`` and ``<GC>``, pstats' builtins)."""

INTERNAL_SUFFIXES = ("_sync_coordinator.py",)
"""Files of the profiler itself, which CPython leaves out of its outputs
(``profiling.sampling.constants._INTERNAL_FRAME_SUFFIXES``)."""


@dataclass(frozen=True)
class RenderedFrames:
    """Per frame row of a profile: ``key`` (rows with equal keys are one frame in the output;
    CPython's ``(file, line, function)``), ``internal`` (a frame of the profiler), and per key
    its ``texts``."""

    key: npt.NDArray[np.int64]
    internal: npt.NDArray[np.bool_]
    texts: list[str]


def render_frames(profile: Profile, style: Style = "cpython", lines: bool = True) -> RenderedFrames:
    """Every frame row's text in *style*: per distinct (file, line, function) once."""
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    frames, texts = profile.frames, profile.strings.texts()
    n_strings = len(texts)
    # CPython: a frame without a location (lineno -1) has line 0 (collector.extract_lineno)
    line = np.where(frames.lineno == -1, 0, frames.lineno).astype(np.int64).tolist()
    filenames = [texts[i] if i < n_strings else "" for i in frames.filename.tolist()]
    funcnames = [texts[i] if i < n_strings else "" for i in frames.funcname.tolist()]
    if frames.address is not None:
        funcnames = [name or (f"0x{address:x}" if address else "")
                     for name, address in zip(funcnames, frames.address.tolist(), strict=True)]
    native = frames.address is not None
    keys: dict[tuple, int] = {}
    out_key = np.empty(len(line), np.int64)
    out_texts: list[str] = []
    for row, (file, number, name) in enumerate(zip(filenames, line, funcnames, strict=True)):
        key = (name,) if style == "function" else (file, number if lines else 0, name)
        found = keys.get(key)
        if found is None:
            found = keys[key] = len(out_texts)
            out_texts.append(frame_text(file, number, name, style, lines, native))
        out_key[row] = found
    internal = np.fromiter((f.endswith(INTERNAL_SUFFIXES) for f in filenames), bool,
                           len(filenames))
    return RenderedFrames(out_key, internal, out_texts)


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
    return f"{name} ({file}:{line})" if lines else f"{name} ({file})"


# -- reading ---------------------------------------------------------------------------------

_CPYTHON = re.compile(r"(.*):([^:]*):(-?\d+)", re.S)
_CPYTHON_NO_LINE = re.compile(r"(.*):([^:]*)", re.S)
_PY_SPY = re.compile(r"(.*) \((.*):(\d+)\)", re.S)
_PY_SPY_NO_LINE = re.compile(r"(.*) \((.*)\)", re.S)

ParsedFrame = tuple[str, str, int]
"""(file, function, line): :data:`NO_FILE` and -1 where the text has none."""


def parse_frame(text: str, style: Style, lines: bool = True) -> ParsedFrame:
    """The file, function and line a frame's *text* in *style* names (the inverse of
    :func:`frame_text` for frames it wrote)."""
    if style == "cpython":
        if lines and (m := _CPYTHON.fullmatch(text)):
            return m[1], m[2], int(m[3])
        if not lines and (m := _CPYTHON_NO_LINE.fullmatch(text)):
            return m[1], m[2], -1
    elif style == "py-spy":
        if lines and (m := _PY_SPY.fullmatch(text)):
            return m[2], m[1], int(m[3])
        if not lines and (m := _PY_SPY_NO_LINE.fullmatch(text)):
            return m[2], m[1], -1
    return NO_FILE, text, -1


def detect_style(texts: list[str]) -> Style:
    """The dialect of a file's distinct frame texts: ``"cpython"`` or ``"py-spy"`` if every
    frame fits it (a bare name counts as a frame without a file) and one at least has a file
    and line; else ``"function"``."""
    for style, full, bare in (("cpython", _CPYTHON, ":"), ("py-spy", _PY_SPY, " (")):
        matched = 0
        for text in texts:
            if full.fullmatch(text):
                matched += 1
            elif bare in text:
                break
        else:
            if matched:
                return style  # type: ignore[return-value]
    return "function"
