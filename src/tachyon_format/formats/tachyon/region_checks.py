"""Every record of a sample region checked, carrying on past what does not break the record
syntax: for ``validate`` on a file whose records CPython's reader rejects.

CPython's checks during replay (docs/format/reader.md#checks-during-replay) are of two kinds.
Some say a record means something impossible (one thread more than the header declares, a
stack deeper than 256, a frame index beyond the table, a SUFFIX sharing more frames than the
stack holds) while its bytes still parse: the walk reports each and goes on to the next record
(with the stack clamped as it stands). The others break the syntax (an unknown record type, a
malformed varint, a record cut short): records have no length, so nothing after one can be
found again, and the walk stops there. The messages are CPython's; every problem here is
``unreadable``, since CPython rejects each of them, except the thread count declared larger than
the threads seen (``inconsistent``). A plain loop, one record at a time: it runs only on files
already known to be broken, the fast decoder having stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.primitives import U32_MAX, VarintError, scan_uleb128

PREFIX = spec.RECORD_PREFIX_SIZE
MAX_DEPTH = spec.MAX_STACK_DEPTH
REPEAT, FULL, SUFFIX, POP_PUSH = range(4)
INVALID_VARINT = "Invalid or incomplete varint in binary data"
MAX_PROBLEMS = 100
"""Problems listed at most; the walk stops after them, saying so."""


class _Broken(Exception):
    """The record's syntax is broken: nothing after it can be read."""


@dataclass
class RegionWalk:
    """What the walk found: the problems, the samples and records read, whether it reached the
    end of the region, and the threads seen."""

    problems: list[Problem] = field(default_factory=list)
    samples: int = 0
    records: int = 0
    complete: bool = True
    threads: int = 0


def walk_region(region, *, order: Literal["<", ">"], thread_count: int, frame_count: int,
                frame_string_ok=None, sample_count: int | None = None) -> RegionWalk:
    """Check every record of the (decompressed) *region*; *sample_count*: the header's, checked
    against the samples when the walk reaches the end."""
    data = memoryview(region)
    n = len(data)
    endian: Literal["little", "big"] = "little" if order == "<" else "big"
    walk = RegionWalk()
    stacks: dict[tuple[int, int], list[int]] = {}
    reported: set[tuple[str, int]] = set()  # (kind, frame): a bad frame reported once
    pos = 0

    def report(message: str, at: int, **extra) -> None:
        walk.problems.append(Problem("unreadable", message, offset=at, record=walk.records,
                                     region=True, **extra))

    def varint(p: int, message: str, at: int, u32: bool = True) -> tuple[int, int]:
        try:
            value, after = scan_uleb128(data, p, n)
        except VarintError:
            value, after = None, p
        if value is None or (u32 and value > U32_MAX):
            report(message, at)
            raise _Broken
        return value, after

    def status(p: int, message: str, at: int) -> int:
        if p >= n:
            report(message, at)
            raise _Broken
        return p + 1

    while pos < n:
        if len(walk.problems) >= MAX_PROBLEMS:
            walk.problems.append(Problem("unreadable", f"more than {MAX_PROBLEMS} problems in "
                                         "the sample records: the rest were not checked",
                                         offset=pos, region=True))
            walk.complete = False
            break
        at = pos
        if n - pos < PREFIX:
            report(f"Truncated sample data: {n - pos} trailing bytes", at)
            walk.complete = False
            break
        key = (int.from_bytes(data[pos + 8:pos + 12], endian),
               int.from_bytes(data[pos:pos + 8], endian))
        encoding = data[pos + 12]
        if key not in stacks:
            if len(stacks) == thread_count:
                report("Invalid thread count: sample data contains more unique threads than "
                       f"declared in header (declared {thread_count}, found at least "
                       f"{len(stacks) + 1})", at, field="header -> thread_count")
            stacks[key] = []
        try:
            if encoding > POP_PUSH:
                report(f"Unknown stack encoding: {encoding}", at)
                raise _Broken
            p = pos + PREFIX
            if encoding == REPEAT:
                count, p = varint(p, "Malformed varint for RLE count", at)
                if count > (n - p) // 2:
                    report(f"Invalid RLE count {count} exceeds maximum possible {(n - p) // 2}",
                           at)
                    raise _Broken
                for _ in range(count):
                    _, p = varint(p, "Malformed varint in RLE sample data", at, u32=False)
                    p = status(p, "Unexpected end of sample data in RLE", at)
                walk.samples += count
            else:
                _, p = varint(p, "Malformed varint in sample data", at, u32=False)
                p = status(p, "Unexpected end of sample data", at)
                walk.samples += 1
                old = stacks[key]
                if encoding == FULL:
                    count, p = varint(p, INVALID_VARINT, at)
                    if count > MAX_DEPTH:
                        report(f"Stack depth {count} exceeds capacity {MAX_DEPTH}", at)
                    kept: list[int] = []
                else:
                    arg, p = varint(p, INVALID_VARINT, at)
                    count, p = varint(p, INVALID_VARINT, at)
                    if encoding == SUFFIX and arg > len(old):
                        report(f"Shared count {arg} exceeds current stack depth {len(old)}", at)
                    if encoding == SUFFIX:
                        kept = old[len(old) - min(arg, len(old)):] if count else old[:arg]
                    else:
                        kept = old[arg:]
                    if encoding != FULL and len(kept) + count > MAX_DEPTH:
                        report(f"Final stack depth {len(kept) + count} exceeds capacity "
                               f"{MAX_DEPTH}", at)
                new = []
                for _ in range(count):
                    frame, p = varint(p, INVALID_VARINT, at)
                    new.append(frame)
                for frame in new:
                    if frame >= frame_count and ("index", frame) not in reported:
                        reported.add(("index", frame))
                        report(f"Invalid frame index: {frame}", at, field="frame_table",
                               expected=f"below {frame_count}", found=str(frame))
                    elif (frame < frame_count and frame_string_ok is not None
                          and frame < len(frame_string_ok) and not frame_string_ok[frame]
                          and ("strings", frame) not in reported):
                        reported.add(("strings", frame))
                        report("Invalid string index in frame", at,
                               field=f"frame_table -> [{frame}]")
                stacks[key] = new + kept
        except _Broken:
            walk.complete = False
            break
        walk.records += 1
        pos = p
    walk.threads = len(stacks)
    if walk.complete and sample_count is not None and walk.samples != sample_count:
        walk.problems.append(Problem(
            "unreadable", f"Sample count mismatch: header declares {sample_count} samples but "
            f"replay decoded {walk.samples}", offset=28, field="header -> sample_count",
            expected=str(sample_count), found=str(walk.samples)))
    return walk
