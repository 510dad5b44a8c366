"""Words added to an error about a file, where the library's message (CPython's own, for a
Tachyon file) does not say what probably happened."""

from __future__ import annotations

import os

HEADER_SIZE = 64
"""A Tachyon header's size: CPython's writer leaves it zero until the profile is finished."""

UNFINISHED = (
    "the header is all zeros: the profiler was stopped before it finished writing this file "
    "(CPython writes the header last); `tachyon-format validate` tells what is left, and "
    "--salvage reads the samples that can be read")
CUT_SHORT = (
    "the file is shorter than its header says (it was probably cut short, e.g. copied while "
    "being written): `tachyon-format validate` tells what is left, and --salvage reads the "
    "samples that can be read")
MAGICS = {b"HCAT": "little", b"TACH": "big"}


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
    order = MAGICS.get(head[:4])
    if order is not None and len(head) == HEADER_SIZE:
        # the table offsets of the current layout (docs/format/header.md): past the end?
        tables = (int.from_bytes(head[40:48], order), int.from_bytes(head[48:56], order))
        try:
            size = os.path.getsize(path)
        except OSError:
            return None
        if max(tables) > size and max(tables) < 1 << 40:  # (a plausible offset, not noise)
            return CUT_SHORT
    return None


def with_hint(path: object, message: str) -> str:
    """*message*, and the hint on *path* if there is one."""
    note = hint(path)
    return message if note is None else f"{message}; {note}"
