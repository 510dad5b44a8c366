"""``assert_profiles_equal``: do two profiles, of any formats the library reads, hold the
same samples?

1. Both are read (:func:`tachyon_format.read`) unless they are :class:`~tachyon_format.
   Profile` objects already.
2. Each sample gets integer keys shared by both profiles (:mod:`.sample_keys`): its thread,
   its stack as a sequence of frames (file, line, function by default), its status, and its
   time when both profiles have a timeline.
3. What one side lacks is left out of the key, and the message says so: no timeline (pprof,
   collapsed stacks, ...) means samples are compared as counts per (thread, stack, status);
   no threads or no statuses drop those.
4. One sort of both sides' keys together (:func:`~tachyon_format.model.aggregate.group_count`,
   with +weight for ``a`` and -weight for ``b``) finds every key whose counts differ: a
   million samples a side compare in about a second.
"""

from __future__ import annotations

import os

import numpy as np

from tachyon_format.model.aggregate import group_count

from .notation import status_text
from .sample_keys import FrameDetail, SharedKeys

ORDER_NOTE = "stacks outermost first (innermost last)"


def assert_profiles_equal(a: object, b: object, *, check_timestamps: bool = True,
                          check_order: bool = False, check_threads: bool = True,
                          check_interpreters: bool = True, check_status: bool = True,
                          frames: FrameDetail = "line", basenames: bool = False,
                          drop_internal: bool = False) -> None:
    """Raise ``AssertionError`` unless *a* and *b* (profiles, or paths / bytes / binary
    files of any format the library reads) hold the same samples.

    *check_timestamps*: compare each sample's time when both have a timeline (else counts
    per thread, stack and status); *check_order*: also require the samples in the same
    order (file order; Tachyon's writer defers REPEAT records, so two files of the same
    samples may order them differently; ``ValueError`` when a side has no timeline);
    *check_threads*, *check_status*: compare those when both sides have them;
    *check_interpreters*: ``False`` to know threads by their id alone (collapsed stacks
    record no interpreter); *frames*: what makes two frames equal, ``"function"`` (file and
    function), ``"line"`` (and line, 0 meaning none), ``"opcode"`` (and opcode) or
    ``"position"`` (and the exact line, end line and columns); *basenames*: compare file
    names without their directories
    (collapsed stacks keep only those); *drop_internal*: leave out the profiler's own frames
    (``_sync_coordinator.py``), as CPython's replay outputs do.

    The message gives the first difference (the earliest sample; for counts, the largest
    difference) with both sides' thread, time, status and stack as ``file:line func``
    lines, outermost first, then how many more differences there are."""
    pa, pb = _loaded(a), _loaded(b)
    keys = SharedKeys(frames, basenames=basenames, drop_internal=drop_internal,
                      interpreters=check_interpreters)
    stack_a, stack_b = keys.sample_stacks(pa, pb)
    sides = [_Side("a", pa, keys, stack_a), _Side("b", pb, keys, stack_b)]
    skipped = []
    timeline = check_timestamps and all(s.times is not None for s in sides)
    if check_timestamps and not timeline:
        skipped.append(f"times ({_lacking(sides, 'times')} no timeline: compared as counts "
                       f"per thread, stack and status)")
    if timeline and not all((s.weights == 1).all() for s in sides):
        timeline = False
        skipped.append("times (samples with weights other than 1: compared as counts)")
    if check_order and not timeline:
        raise ValueError("check_order=True needs both profiles' timelines, one sample a row "
                         f"(not compared: {'; '.join(skipped) or 'times'})")
    use_threads = check_threads and all(s.has_threads for s in sides)
    if check_threads and not use_threads:
        skipped.append(f"threads ({_lacking(sides, 'has_threads')} none)")
    use_status = check_status and all(s.status is not None for s in sides)
    if check_status and not use_status:
        skipped.append(f"status ({_lacking(sides, 'status')} none)")
    names = [n for n, used in (("time", timeline), ("thread", use_threads), ("stack", True),
                               ("status", use_status)) if used]
    columns = {n: np.concatenate([s.column(n) for s in sides]) for n in names}
    net_weights = np.concatenate([sides[0].weights, -sides[1].weights])
    rows, net = group_count(columns, net_weights) if net_weights.size else ({}, net_weights)
    differing = np.flatnonzero(net != 0)
    if differing.size:
        raise AssertionError(_difference_message(sides, keys, names, rows, net, differing,
                                                 timeline, skipped))
    if timeline and check_order:
        order = _first_out_of_order(sides, names)
        if order is not None:
            raise AssertionError(_order_message(sides, keys, names, order, skipped))


class _Side:
    """One profile's samples as shared keys."""

    def __init__(self, name: str, profile, keys: SharedKeys, stack: np.ndarray) -> None:
        self.name = name
        self.profile = profile
        samples = profile.samples
        self.stack = stack
        self.thread = keys.sample_threads(profile)
        self.has_threads = len(profile.threads) > 0
        self.times = samples.timestamp_us
        self.status = samples.status
        self.weights = np.asarray(profile.sample_counts(), dtype=np.int64)

    def column(self, name: str) -> np.ndarray:
        return {"time": self.times, "thread": self.thread, "stack": self.stack,
                "status": self.status}[name]

    def __len__(self) -> int:
        return int(self.weights.sum())


def _loaded(source: object):
    from tachyon_format import Profile, read

    if isinstance(source, Profile):
        return source
    if isinstance(source, str | os.PathLike | bytes | bytearray | memoryview) or hasattr(
            source, "read"):
        return read(source)  # type: ignore[arg-type]
    raise TypeError(f"expected a Profile, a path, bytes or a binary file, not "
                    f"{type(source).__name__}")


def _lacking(sides: list[_Side], attribute: str) -> str:
    lacking = [s.name for s in sides if getattr(s, attribute) is None
               or getattr(s, attribute) is False]
    return " and ".join(lacking) + (" have" if len(lacking) > 1 else " has")


def _difference_message(sides, keys, names, rows, net, differing, timeline, skipped) -> str:
    only_a, only_b = int(net[net > 0].sum()), int(-net[net < 0].sum())
    lines = [f"profiles differ: {_samples(only_a)} only in a, {only_b} only in b "
             f"(a has {len(sides[0])}, b has {len(sides[1])})",
             _compared_line(names, skipped, timeline)]
    if timeline:
        first = int(differing[0])
        lines.append("first difference (the earliest):")
        key = {n: int(rows[n][first]) for n in names}
        lines += _timeline_difference(sides, keys, key, int(net[first]))
        shown = 1
    else:  # the largest excess of each side, so that both sides' stacks show
        picks = [int(np.argmax(net)) if net.max() > 0 else None,
                 int(np.argmin(net)) if net.min() < 0 else None]
        lines.append("largest differences:")
        for pick in filter(lambda p: p is not None, picks):
            lines += _count_difference(sides, keys, names, {n: int(rows[n][pick]) for n in names})
        shown = sum(p is not None for p in picks)
    more = differing.size - shown
    if more:
        row_name = ", ".join(names)
        lines.append(f"and {more} more differing ({row_name}) row{'s' if more > 1 else ''}")
    return "\n".join(lines)


def _samples(count: int) -> str:
    return f"{count} sample{'' if count == 1 else 's'}"


def _compared_line(names: list[str], skipped: list[str], timeline: bool = True) -> str:
    what = (f"each sample's {', '.join(names)}" if timeline
            else f"sample counts per ({', '.join(names)})")
    text = f"compared: {what}; frames as file:line func, {ORDER_NOTE}"
    return text + (f"; not compared: {'; '.join(skipped)}" if skipped else "")


def _timeline_difference(sides, keys, key, net) -> list[str]:
    """The differing sample, and what the other side has on that thread at that time."""
    having, other = (sides[0], sides[1]) if net > 0 else (sides[1], sides[0])
    blocks = {having.name: _sample_block(keys, key, having.name)}
    same_thread = (other.thread == key["thread"] if "thread" in key
                   else np.ones(other.weights.size, bool))
    candidates = np.flatnonzero(same_thread)
    where = f" on {keys.thread_text(key['thread'])}" if "thread" in key else ""
    if not candidates.size:
        blocks[other.name] = [f"  {other.name}: no sample{where}"]
    else:  # the sample at that time, else the nearest in time
        gaps = np.abs(other.times[candidates].astype(np.float64) - float(key["time"]))
        row = int(candidates[np.argmin(gaps)])
        other_key = {name: int(other.column(name)[row]) for name in key}
        label = other.name
        if other_key["time"] != key["time"]:
            label += f" (no sample at t={key['time']} us{where}; the nearest)"
        blocks[other.name] = _sample_block(keys, other_key, label)
    return blocks["a"] + blocks["b"]


def _sample_block(keys: SharedKeys, key: dict, name: str) -> list[str]:
    parts = []
    if "thread" in key:
        parts.append(keys.thread_text(key["thread"]))
    if "time" in key:
        parts.append(f"t={key['time']} us")
    if "status" in key:
        parts.append(f"status {status_text(key['status'])}")
    return [f"  {name}: {', '.join(parts)}, stack:", *_stack_lines(keys, key["stack"])]


def _stack_lines(keys: SharedKeys, stack: int) -> list[str]:
    return [f"       {line}" for line in keys.stack_lines(stack)] or ["       (empty stack)"]


def _count_difference(sides, keys, names, key) -> list[str]:
    counts = []
    for side in sides:
        match = np.ones(side.weights.size, bool)
        for name in names:
            match &= side.column(name) == key[name]
        counts.append(int(side.weights[match].sum()))
    parts = []
    if "thread" in key:
        parts.append(keys.thread_text(key["thread"]))
    if "status" in key:
        parts.append(f"status {status_text(key['status'])}")
    head = f"  {', '.join(parts)}, stack:" if parts else "  stack:"
    return [head, *_stack_lines(keys, key["stack"]),
            f"  a: {_samples(counts[0])}, b: {_samples(counts[1])}"]


def _first_out_of_order(sides, names) -> int | None:
    same = np.ones(sides[0].weights.size, bool)
    for name in names:
        same &= sides[0].column(name) == sides[1].column(name)
    wrong = np.flatnonzero(~same)
    return int(wrong[0]) if wrong.size else None


def _order_message(sides, keys, names, index, skipped) -> str:
    moved = np.zeros(sides[0].weights.size, bool)
    for name in names:
        moved |= sides[0].column(name) != sides[1].column(name)
    lines = ["profiles hold the same samples in a different order "
             f"({int(np.count_nonzero(moved))} positions differ)",
             _compared_line(names, skipped), f"first difference, sample {index} in file order:"]
    for side in sides:
        key = {name: int(side.column(name)[index]) for name in names}
        lines += _sample_block(keys, key, side.name)
    return "\n".join(lines)


__all__ = ["assert_profiles_equal"]
