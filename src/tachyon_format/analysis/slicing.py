"""A profile restricted to some of its samples: a time window, threads, interpreters, status
bits, or the samples whose stack has (``focus``) or has not (``ignore``) a frame matching a
pattern, like pprof's ``-focus`` and ``-ignore``.

Each function returns a new :class:`~tachyon_format.Profile` with the chosen sample rows and
the same string, frame and stack tables, which every writer writes; the thread table keeps
the threads the chosen samples have (in their order), so that a Tachyon file written from a
slice declares the threads it holds. What described the samples as a whole is adjusted: a
Tachyon file's record table (which only fits the samples it was read with) is dropped, so
the Tachyon writer encodes the samples afresh; the counts a JSONL file carried
(``extras["jsonl"]``) are dropped, being counts of the whole; a time window's duration is the
window's (within the recording), not the recording's.
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


def select(profile: Profile, rows: npt.NDArray, *, duration_ns: int | None = None) -> Profile:
    """*profile* with only the sample *rows* (a boolean mask or indices, in file order), and
    only the threads they have; *duration_ns*: the subset's own duration (a time window)."""
    samples = profile.samples
    columns = {name: column[rows] for name, column in samples.columns().items()}
    table = profile.threads
    thread = columns["thread"].astype(np.int64)
    used = thread[thread >= 0]
    kept = np.unique(used) if used.size else np.zeros(0, np.int64)
    if kept.size < len(table):
        # the threads in order of first appearance among the chosen samples, renumbered so
        first = np.full(len(table), used.size, np.int64)
        np.minimum.at(first, used, np.arange(used.size))
        kept = kept[np.argsort(first[kept], kind="stable")]
        number = np.full(len(table), -1, np.int64)
        number[kept] = np.arange(kept.size)
        columns["thread"] = np.where(thread >= 0, number[np.maximum(thread, 0)],
                                     thread).astype(samples.thread.dtype)
        table = replace(table, **{name: np.asarray(getattr(table, name))[kept]
                                  for name in ("interpreter_id", "thread_id")})
    meta = profile.meta if duration_ns is None else replace(profile.meta,
                                                            duration_ns=duration_ns)
    return replace(profile, samples=Samples(**columns), threads=table, meta=meta,
                   extras=_extras_of_subset(profile.extras, duration_ns))


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
    # the window's length, within the recording (the samples' span, and one interval more)
    interval_us = profile.meta.period / 1000 if profile.meta.period_type is not None and (
        profile.meta.period_type.unit == "nanoseconds") else 0
    lo = times.min() if times.size else 0
    hi = times.max() + interval_us if times.size else 0
    if not relative:
        lo, hi = float(lo), float(hi)
    start = lo if start_us is None else max(start_us, lo)
    end = hi if end_us is None else min(end_us, hi)
    return select(profile, keep, duration_ns=max(round((end - start) * 1000), 0))


def threads(profile: Profile, thread_ids=None, *, interpreter_ids=None) -> Profile:
    """The samples of the given threads (OS thread ids) and/or interpreters."""
    table = profile.threads
    wanted = np.ones(len(table), bool)
    if thread_ids is not None:
        wanted &= np.isin(table.thread_id, _ids(thread_ids, 64, "thread"))
    if interpreter_ids is not None:
        wanted &= np.isin(table.interpreter_id, _ids(interpreter_ids, 32, "interpreter"))
    row = profile.samples.thread.astype(np.int64)
    known = (row >= 0) & (row < wanted.size)
    keep = np.zeros(row.size, bool)
    keep[known] = wanted[row[known]]
    return select(profile, keep)


def _ids(ids, width: int, what: str) -> npt.NDArray:
    """Ids as unsigned integers of *width* bits; ValueError for one that is not."""
    values = [int(i) for i in ids]
    bad = [i for i in values if not 0 <= i < 1 << width]
    if bad:
        raise ValueError(f"{what} ids are 0 to {(1 << width) - 1}, not {bad[0]}")
    return np.asarray(values, np.uint64 if width == 64 else np.uint32)


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


def _extras_of_subset(extras: dict, duration_ns: int | None = None) -> dict:
    out = {}
    for key, value in extras.items():
        if key in WHOLE_PROFILE_EXTRAS:
            continue
        fields = {f.name for f in dataclasses.fields(value)} if dataclasses.is_dataclass(
            value) else set()
        if "records" in fields:
            value = replace(value, records=None)  # (a record table fits only its samples)
        info = getattr(value, "info", None) if "info" in fields else None
        if duration_ns is not None and isinstance(info, dict) and info.get("duration_sec"):
            # (a format's own statistics of the run: their duration is the window's)
            value = replace(value, info={**info, "duration_sec": duration_ns / 1e9})
        out[key] = value
    return out
