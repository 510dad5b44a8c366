"""``assert_valid``: fail a test, listing every problem :func:`tachyon_format.validate`
finds in a file.

``validate`` reports :class:`tachyon_format.Problem` objects (severity, message, offset,
field, expected, found); a library version that reports plain strings is handled too (each
string is a problem that makes the file unreadable).
"""

from __future__ import annotations

import os
from typing import Any

FAILING = ("unreadable", "inconsistent")
"""Severities that fail :func:`assert_valid`; notes fail it only with ``notes=True``."""


def assert_valid(source: Any, *, format: str | None = None, notes: bool = False) -> list:
    """Raise ``AssertionError`` if *source* (a path, bytes or a binary file, of any format
    the library validates; *format* to name it instead of sniffing) has a problem that
    makes it unreadable or inconsistent, or any problem at all with *notes*. The message
    lists every problem, one a line, with its offset, field and what was expected and
    found. Returns the problems that did not fail (the notes)."""
    import tachyon_format

    problems = list(tachyon_format.validate(source, format=format))
    failing = [p for p in problems if notes or _severity(p) in FAILING]
    if failing:
        raise AssertionError(_message(source, failing, len(problems) - len(failing)))
    return problems


def _severity(problem: Any) -> str:
    return getattr(problem, "severity", "unreadable")


def _message(source: Any, failing: list, passed: int) -> str:
    count = len(failing)
    lines = [f"{_name(source)} is not valid: {count} problem{'s' if count > 1 else ''}"]
    for number, problem in enumerate(failing, 1):
        lines.append(f"  {number}. {problem}")
        detail = _detail(problem)
        if detail:
            lines.append(f"     {detail}")
    if passed:
        lines.append(f"  (and {passed} note{'s' if passed > 1 else ''}, not failing)")
    return "\n".join(lines)


def _detail(problem: Any) -> str:
    """A problem's location and comparison as separate facts (only for ``Problem``s, whose
    one-line text packs them)."""
    if not hasattr(problem, "severity"):
        return ""
    parts = [f"severity {problem.severity}"]
    if problem.offset is not None:
        if problem.region and problem.file_offset is not None:
            parts.append(f"file offset {problem.file_offset}")
        parts.append(f"{'region ' if problem.region else ''}offset {problem.offset}")
    if problem.field:
        parts.append(f"field {problem.field}")
    if problem.record is not None:
        parts.append(f"record {problem.record}")
    if problem.expected is not None:
        parts.append(f"expected {problem.expected}")
    if problem.found is not None:
        parts.append(f"found {problem.found}")
    return "; ".join(parts)


def _name(source: Any) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    if isinstance(source, bytes | bytearray | memoryview):
        return f"<{len(source)} bytes>"
    return str(getattr(source, "name", None) or f"<{type(source).__name__}>")
