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
    rendered once; a sample line is then a join of cached pieces. The profile must have
    timestamps and statuses (as a Tachyon file's has): ValueError at once, before any line,
    if it has not."""
    samples = profile.samples
    if samples.timestamp_us is None or samples.status is None or samples.values is not None:
        raise ValueError("the canonical dump lists thread-samples with their time and status; "
                         "this profile has none (it holds aggregated values)")
    return _lines(profile)


def _lines(profile: Profile) -> Iterator[str]:
    samples = profile.samples
    frame_json = _frame_fragments(profile)
    stack_of = profile.stacks.tuples()
    stack_json: dict[int, str] = {}
    threads = profile.threads
    ids = zip(threads.interpreter_id.tolist(), threads.thread_id.tolist(), strict=True)
    thread_prefix = [f"[{iid},{tid}," for iid, tid in ids]
    for thread, timestamp, status, stack in zip(
        samples.thread.tolist(),
        samples.timestamp_us.tolist(),
        samples.status.tolist(),
        samples.stack.tolist(),
        strict=True,
    ):
        text = stack_json.get(stack)
        if text is None:
            text = stack_json[stack] = f"[{','.join([frame_json[f] for f in stack_of[stack]])}]"
        yield f"{thread_prefix[thread]}{timestamp},{status},{text}]"


def _frame_fragments(profile: Profile) -> list[str]:
    strings = profile.strings.texts()
    f = profile.frames
    out = []
    columns = (f.filename, f.funcname, f.lineno, f.end_lineno, f.column, f.end_column, f.opcode)
    for filename, funcname, lineno, end_lineno, column, end_column, opcode in zip(
        *(column.tolist() for column in columns), strict=True
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


def write_canonical(profile: Profile, info: dict, out) -> None:
    """Write the canonical form of ``profile`` to the text stream ``out``; *info* is the first
    line's dict (for a Tachyon file, CPython's ``get_info()``: ``tachyon_format.info``)."""
    lines = sample_lines(profile)  # (refuses a profile without a timeline before writing)
    out.write(info_line(info) + "\n")
    for line in lines:
        out.write(line + "\n")


__all__ = ["info_line", "sample_lines", "write_canonical"]
