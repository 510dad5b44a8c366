"""The timeline of a sampled profile as slices: numpy over the per-sample stack ids.

1. Samples are put in (thread, timestamp) order. A sample lasts until the next sample of its
   thread (as Chrome DevTools and the Firefox Profiler draw samples), or one sampling interval
   when that gap is longer than *max_gap_us* (a pause of the profiler, a thread not sampled:
   left as a hole; the interval ends at the next sample if that comes first) or when it is
   the thread's last sample.
2. Consecutive samples of a thread without a hole between them keep the frames their stacks
   share from the outermost one: the common prefix of their functions (file and name; a
   caller that moved to another line is still the same call), computed once per distinct
   pair of consecutive stacks, level by level over the CSR listing of the distinct stacks.
3. A frame at depth ``d`` (0 = outermost) opens at every sample whose kept depth from the
   previous sample is ``<= d`` and closes after every sample whose kept depth into the next is
   ``<= d``; at each depth opens and closes alternate, so sorting both by (depth, sample) pairs
   them: one slice per pair, from the opening sample's start to the closing sample's end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.model import Profile


@dataclass(frozen=True)
class Timeline:
    """Samples in (thread, time) order and the slices of their stacks.

    Per sample (sorted): ``thread`` (row of ``profile.threads``, -1 none), ``start_us``
    (relative to the profile's first sample), ``duration_us``, ``status`` (or None),
    ``hole_after`` (no continuation into the thread's next sample). Per slice: ``slice_thread``,
    ``slice_start_us``, ``slice_end_us``, ``slice_depth`` (0 = outermost) and ``slice_frame``
    (row of the frame table), sorted by thread, start and depth."""

    thread: npt.NDArray[np.int64]
    start_us: npt.NDArray[np.int64]
    duration_us: npt.NDArray[np.int64]
    status: npt.NDArray[np.uint8] | None
    hole_after: npt.NDArray[np.bool_]
    slice_thread: npt.NDArray[np.int64]
    slice_start_us: npt.NDArray[np.int64]
    slice_end_us: npt.NDArray[np.int64]
    slice_depth: npt.NDArray[np.int64]
    slice_frame: npt.NDArray[np.int64]


def interval_of(profile: Profile) -> int | None:
    """The sampling interval in whole microseconds, from ``profile.meta``; None if unknown."""
    period_ns = profile.meta.period_ns()
    return None if period_ns is None else max(1, round(period_ns / 1000))


def function_ids(profile: Profile) -> npt.NDArray[np.int64]:
    """Per frame row, a number shared by the rows of the same (file, function name) text."""
    text_of = np.unique(np.array(profile.strings.texts(), dtype=object),
                        return_inverse=True)[1].reshape(-1).astype(np.int64)
    frames = profile.frames
    pairs = np.stack([text_of[frames.filename.astype(np.int64)],
                      text_of[frames.funcname.astype(np.int64)]], axis=1)
    if not pairs.size:
        return np.zeros(0, np.int64)
    return np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


def timeline(profile: Profile, interval_us: int, max_gap_us: int) -> Timeline:
    """The :class:`Timeline` of *profile* (steps in the module docstring)."""
    samples = profile.samples
    if samples.timestamp_us is None:
        raise ValueError("a trace is a timeline and this profile has no timestamps (an "
                         "aggregated profile, or one read from a format without them)")
    n = len(samples.stack)
    ts = samples.timestamp_us.astype(np.uint64)
    thread_of = samples.thread.astype(np.int64)
    order = np.lexsort((ts, thread_of)) if n else np.zeros(0, np.intp)
    ts, thread_of = ts[order], thread_of[order]
    start = (ts - (ts.min() if n else np.uint64(0))).astype(np.int64)
    stack = samples.stack[order].astype(np.int64)

    same_thread = np.zeros(n, bool)  # sample i continues into i + 1 on the same thread
    same_thread[:-1] = thread_of[1:] == thread_of[:-1]
    gap = np.zeros(n, np.int64)
    gap[:-1] = start[1:] - start[:-1]
    joined = same_thread & (gap <= max_gap_us)
    # (never past the thread's next sample, whatever max_gap_us is)
    duration = np.where(joined, gap, np.where(same_thread, np.minimum(gap, interval_us),
                                              interval_us)).astype(np.int64)

    distinct, k = np.unique(stack, return_inverse=True)
    k = k.reshape(-1)
    offsets, frame_ids = profile.stacks.to_csr(distinct)
    lengths = np.diff(offsets)
    depth = lengths[k]
    kept = np.zeros(n, np.int64)  # frames kept from sample i into i + 1
    pairs = np.flatnonzero(joined)
    functions = function_ids(profile)[frame_ids]
    kept[pairs] = _common_prefix(offsets, functions, k[pairs], k[pairs + 1])
    kept_before = np.zeros(n, np.int64)
    kept_before[1:] = kept[:-1]

    open_at = np.repeat(np.arange(n), depth - kept_before)
    open_depth = decode_ragged_ranges(kept_before, depth - kept_before)
    close_at = np.repeat(np.arange(n), depth - kept)
    close_depth = decode_ragged_ranges(kept, depth - kept)
    opens = np.lexsort((open_at, open_depth))
    closes = np.lexsort((close_at, close_depth))
    open_at, slice_depth = open_at[opens], open_depth[opens].astype(np.int64)
    close_at = close_at[closes]
    where = offsets[k[open_at] + 1] - 1 - slice_depth  # (the frame of the opening sample)
    slice_frame = frame_ids[where].astype(np.int64)
    slice_start = start[open_at]
    slice_end = start[close_at] + duration[close_at]
    slice_thread = thread_of[open_at]
    by_time = np.lexsort((slice_depth, slice_start, slice_thread))
    status = samples.status[order] if samples.status is not None else None
    return Timeline(thread_of, start, duration, status, ~joined, slice_thread[by_time],
                    slice_start[by_time], slice_end[by_time], slice_depth[by_time],
                    slice_frame[by_time])


def _common_prefix(offsets: np.ndarray, keys: np.ndarray, a: np.ndarray,
                   b: np.ndarray) -> npt.NDArray[np.int64]:
    """Per pair of distinct stacks (rows of the CSR listing, *keys* per listed frame,
    innermost first): how many frames they share from the outermost one. Once per distinct
    pair, one level at a time over the pairs still equal."""
    out = np.zeros(a.size, np.int64)
    if not a.size:
        return out
    key = a.astype(np.int64) * (offsets.size - 1) + b
    unique_keys, inverse = np.unique(key, return_inverse=True)
    ua, ub = np.divmod(unique_keys, offsets.size - 1)
    lengths = np.diff(offsets)
    shared = np.zeros(ua.size, np.int64)
    same = ua == ub
    shared[same] = lengths[ua[same]]
    live = np.flatnonzero(~same)
    level = 0
    while live.size:
        x, y = ua[live], ub[live]
        inside = (lengths[x] > level) & (lengths[y] > level)
        live = live[inside]
        x, y = x[inside], y[inside]
        equal = keys[offsets[x + 1] - 1 - level] == keys[offsets[y + 1] - 1 - level]
        live = live[equal]
        level += 1
        shared[live] = level
    out[:] = shared[inverse.reshape(-1)]
    return out
