"""A profile restricted to some of its samples: a time window, threads, interpreters, status
bits, or the samples whose stack has (``focus``) or has not (``ignore``) a frame matching a
pattern, like pprof's ``-focus`` and ``-ignore``.

Each function returns a new :class:`~tachyon_format.Profile` with the chosen sample rows and
the same string, frame, stack and thread tables, which every writer writes. What described
the samples as a whole is adjusted: a Tachyon file's record table (which only fits the
samples it was read with) is dropped, so the Tachyon writer encodes the samples afresh; the
counts a JSONL file carried (``extras["jsonl"]``) are dropped, being counts of the whole.
Stack patterns are matched once per distinct stack (numpy over the stack tree).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile, Samples

HAS_GIL, ON_CPU, UNKNOWN, GIL_REQUESTED, HAS_EXCEPTION, MAIN_THREAD = (1, 2, 4, 8, 16, 32)
"""The status bits (:class:`tachyon_format.ThreadStatus`)."""

WHOLE_PROFILE_EXTRAS = ("jsonl",)
"""``extras`` keys whose facts count every sample, dropped from a subset."""


def select(profile: Profile, rows: npt.NDArray) -> Profile:
    """*profile* with only the sample *rows* (a boolean mask or indices, in file order)."""
    samples = profile.samples
    picked = Samples(**{name: column[rows] for name, column in samples.columns().items()})
    return replace(profile, samples=picked, extras=_extras_of_subset(profile.extras))


def time_window(profile: Profile, start_us: float | None = None, end_us: float | None = None,
                *, relative: bool = True) -> Profile:
    """The samples taken in ``[start_us, end_us)``: microseconds after the first sample
    (*relative*, the default) or on the profile's own clock. ValueError for a profile without
    timestamps."""
    stamps = profile.samples.timestamp_us
    if stamps is None:
        raise ValueError("this profile has no timestamps")
    times = stamps.astype(np.int64)
    if relative and times.size:
        times = times - times.min()
    keep = np.ones(times.size, bool)
    if start_us is not None:
        keep &= times >= start_us
    if end_us is not None:
        keep &= times < end_us
    return select(profile, keep)


def threads(profile: Profile, thread_ids=None, *, interpreter_ids=None) -> Profile:
    """The samples of the given threads (OS thread ids) and/or interpreters."""
    table = profile.threads
    wanted = np.ones(len(table), bool)
    if thread_ids is not None:
        wanted &= np.isin(table.thread_id, np.asarray(list(thread_ids), dtype=np.uint64))
    if interpreter_ids is not None:
        wanted &= np.isin(table.interpreter_id, np.asarray(list(interpreter_ids), np.uint32))
    row = profile.samples.thread.astype(np.int64)
    known = (row >= 0) & (row < wanted.size)
    keep = np.zeros(row.size, bool)
    keep[known] = wanted[row[known]]
    return select(profile, keep)


def status(profile: Profile, *, all_of: int = 0, none_of: int = 0) -> Profile:
    """The samples whose status has every bit of *all_of* and no bit of *none_of*, e.g.
    ``status(p, all_of=HAS_GIL | ON_CPU)`` or ``status(p, none_of=HAS_EXCEPTION)``.
    ValueError for a profile without thread status."""
    column = profile.samples.status
    if column is None:
        raise ValueError("this profile has no thread status")
    bits = column.astype(np.int64)
    return select(profile, ((bits & all_of) == all_of) & ((bits & none_of) == 0))


def focus(profile: Profile, pattern: str) -> Profile:
    """The samples whose stack has a frame whose function name or file name matches the
    regex *pattern* (``re.search``), like pprof's ``-focus``."""
    return select(profile, stacks_matching(profile, pattern))


def ignore(profile: Profile, pattern: str) -> Profile:
    """The samples whose stack has no frame matching *pattern* (pprof's ``-ignore``)."""
    return select(profile, ~stacks_matching(profile, pattern))


def stacks_matching(profile: Profile, pattern: str) -> npt.NDArray[np.bool_]:
    """Per sample: whether its stack has a frame whose function or file name matches
    *pattern*. Strings are matched once each, stacks once per distinct stack."""
    regex = re.compile(pattern)
    texts = profile.strings.texts()
    hit = np.append(np.fromiter((regex.search(t) is not None for t in texts), bool,
                                len(texts)), False)
    frames = profile.frames
    last = len(texts)
    frame_hit = (hit[np.minimum(frames.funcname.astype(np.int64), last)]
                 | hit[np.minimum(frames.filename.astype(np.int64), last)])
    stack = profile.samples.stack
    distinct, inverse = np.unique(stack, return_inverse=True)
    offsets, frame_rows = profile.stacks.to_csr(distinct)
    counts = np.add.reduceat(frame_hit[frame_rows].astype(np.int64), offsets[:-1]) if (
        frame_rows.size) else np.zeros(distinct.size, np.int64)
    counts = np.where(np.diff(offsets) > 0, counts, 0)  # (reduceat of an empty segment)
    return (counts > 0)[inverse.reshape(-1)]


def _extras_of_subset(extras: dict) -> dict:
    out = {}
    for key, value in extras.items():
        if key in WHOLE_PROFILE_EXTRAS:
            continue
        if dataclasses.is_dataclass(value) and any(
                f.name == "records" for f in dataclasses.fields(value)):
            value = replace(value, records=None)  # (a record table fits only its samples)
        out[key] = value
    return out
