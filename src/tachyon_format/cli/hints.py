"""Words added to an error about a file, where the library's message (CPython's own, for a
Tachyon file) does not say what probably happened."""

from __future__ import annotations

import os

HEADER_SIZE = 64
"""A Tachyon header's size: CPython's writer leaves it zero until the profile is finished."""

UNFINISHED = (
    "the header is all zeros: the profiler was stopped before it finished writing this file "
    "(CPython writes the header last); `tachyon-format validate` tells what is left, and "
    "`tachyon_format.read(path, strict=False)` recovers the samples that can be read")


def hint(path: object) -> str | None:
    """A note on *path* for an error message, or None: for now, an unfinished Tachyon file
    (a zero header where the magic should be)."""
    if not isinstance(path, str | os.PathLike) or path == "-":
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
    except OSError:
        return None
    if len(head) == HEADER_SIZE and not any(head):
        return UNFINISHED
    return None


def with_hint(path: object, message: str) -> str:
    """*message*, and the hint on *path* if there is one."""
    note = hint(path)
    return message if note is None else f"{message}; {note}"
