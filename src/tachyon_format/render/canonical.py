"""The canonical text form of a profile: the decode CPython's own reader gives, one line per
sample, used to compare readers byte for byte.

Line 1 is ``json.dumps(info, sort_keys=True)``; then, in file order, one line per sample:
``[interpreter_id, thread_id, timestamp_us, status, [[filename, funcname, lineno, end_lineno,
column, end_column, opcode], ...]]`` with frames innermost first, the four location fields
``null`` when the frame has no location (lineno -1) and opcode ``null`` when absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from tachyon_format.model import Profile

_COMPACT = {"separators": (",", ":")}


def info_line(info: dict) -> str:
    return json.dumps(info, sort_keys=True)


def sample_lines(profile: Profile) -> Iterator[str]:
    """One canonical line per sample (without newline). Each frame and each distinct stack is
    rendered once; a sample line is then a join of cached pieces."""
    frame_json = _frame_fragments(profile)
    stack_json = _StackFragments(profile, frame_json)
    threads = profile.threads
    ids = zip(threads.interpreter_id.tolist(), threads.thread_id.tolist(), strict=True)
    thread_prefix = [f"[{iid},{tid}," for iid, tid in ids]
    samples = profile.samples
    for thread, timestamp, status, stack in zip(
        samples.thread.tolist(),
        samples.timestamp_us.tolist(),
        samples.status.tolist(),
        samples.stack.tolist(),
        strict=True,
    ):
        yield f"{thread_prefix[thread]}{timestamp},{status},{stack_json[stack]}]"


def _frame_fragments(profile: Profile) -> list[str]:
    strings = profile.strings
    f = profile.frames
    out = []
    for filename, funcname, lineno, end_lineno, column, end_column, opcode in zip(
        *(column.tolist() for column in f.columns().values()), strict=True
    ):
        location = (
            [None] * 4 if lineno == -1 else [lineno, end_lineno, column, end_column]
        )
        names = [
            strings[filename] if filename < len(strings) else None,
            strings[funcname] if funcname < len(strings) else None,
        ]
        out.append(json.dumps([*names, *location, None if opcode < 0 else opcode], **_COMPACT))
    return out


class _StackFragments:
    """``[frame,frame,...]`` text of stack ids, innermost first, memoised along the tree."""

    def __init__(self, profile: Profile, frame_json: list[str]) -> None:
        self._frame = profile.stacks.frame
        self._parent = profile.stacks.parent
        self._frame_json = frame_json
        self._inner: dict[int, str] = {}  # node -> "f0,f1,...,fn" (no brackets)

    def __getitem__(self, node: int) -> str:
        if node < 0:
            return "[]"
        return f"[{self._joined(node)}]"

    def _joined(self, node: int) -> str:
        cached = self._inner.get(node)
        if cached is not None:
            return cached
        chain = []
        while node >= 0 and node not in self._inner:
            chain.append(node)
            node = int(self._parent[node])
        text = self._inner[node] if node >= 0 else ""
        for n in reversed(chain):  # outermost first, so each node extends its parent's text
            piece = self._frame_json[int(self._frame[n])]
            text = f"{piece},{text}" if text else piece
            self._inner[n] = text
        return text


def write_canonical(profile: Profile, out) -> None:
    """Write the canonical form of ``profile`` to the text stream ``out``."""
    out.write(info_line(profile.info) + "\n")
    for line in sample_lines(profile):
        out.write(line + "\n")


__all__ = ["info_line", "sample_lines", "write_canonical"]
