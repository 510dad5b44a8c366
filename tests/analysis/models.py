"""Plain-Python models of the analysis functions: one sample at a time, through the stack
walk ``Stacks.tuples`` and the strings' texts, for hypothesis to compare the numpy code with."""

from __future__ import annotations

from collections import Counter

from tachyon_format import Profile

INTERNAL = "_sync_coordinator.py"


def frame_key(profile: Profile, row: int, fields: tuple[str, ...]) -> tuple:
    frames = profile.frames
    out = []
    for name in fields:
        value = int(getattr(frames, name)[row])
        if name in ("filename", "funcname"):
            value = profile.strings[value] if value < len(profile.strings) else ""
            if name == "funcname" and not value and frames.address is not None:
                address = int(frames.address[row])
                value = f"0x{address:x}" if address else ""
        elif name == "lineno" and value == -1:
            value = 0
        out.append(value)
    return tuple(out)


def visible(profile: Profile, stack: int, filter_internal: bool = True) -> list[int]:
    """Frame rows of a stack, innermost first, the profiler's own dropped."""
    rows = profile.stacks.tuples()[int(stack)]
    if not filter_internal:
        return list(rows)
    strings = profile.strings
    return [r for r in rows
            if not (int(profile.frames.filename[r]) < len(strings)
                    and strings[int(profile.frames.filename[r])].endswith(INTERNAL))]


def weights_of(profile: Profile, sample_type=None) -> list[int]:
    if sample_type is None:
        return [int(w) for w in profile.sample_counts()]
    return [int(w) for w in profile.weights(sample_type)]


def self_and_cumulative(profile: Profile, fields: tuple[str, ...], sample_type=None,
                        filter_internal: bool = True, per_thread: bool = False):
    self_, cumulative = Counter(), Counter()
    for i, (stack, w) in enumerate(zip(profile.samples.stack.tolist(),
                                       weights_of(profile, sample_type), strict=True)):
        if stack < 0 or w == 0:
            continue
        keys = [frame_key(profile, r, fields) for r in visible(profile, stack,
                                                                 filter_internal)]
        if not keys:
            continue
        group = (int(profile.samples.thread[i]),) if per_thread else ()
        self_[group + keys[0]] += w
        for key in set(keys):
            cumulative[group + key] += w
    return self_, cumulative


def neighbours(profile: Profile, funcname_re, fields, direction: str) -> Counter:
    out = Counter()
    for stack, w in zip(profile.samples.stack.tolist(), weights_of(profile), strict=True):
        if stack < 0 or w == 0:
            continue
        rows = visible(profile, stack)
        found = set()
        for i, r in enumerate(rows):
            name = frame_key(profile, r, ("funcname",))[0]
            if not funcname_re.fullmatch(name):
                continue
            j = i + 1 if direction == "callers" else i - 1
            if 0 <= j < len(rows):
                found.add(frame_key(profile, rows[j], fields))
        for key in found:
            out[key] += w
    return out
