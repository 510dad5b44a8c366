"""Write a :class:`~tachyon_format.model.Profile` as Chrome trace event JSON.

What the file holds (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU,
the Trace Event Format; read by chrome://tracing, https://ui.perfetto.dev and the Firefox
Profiler):

* one process per interpreter (``pid`` = interpreter id + 1, named by a ``process_name``
  metadata event) and one thread track per thread (``tid`` = the thread id, named
  ``Thread <id>``, ``(main)`` for the main thread);
* the stacks as complete events (``"ph": "X"``), one per frame for as long as consecutive
  samples keep it at the same depth (:mod:`.slices`), named by the function, with the file
  and line in ``args``; times are microseconds since the first sample;
* the thread status (Tachyon's on-CPU, GIL held, GIL requested, exception bits) as one
  counter track per thread (``"ph": "C"``), set where it changes and 0 in the holes.

A trace is a timeline: a profile without timestamps (an aggregated one) is refused.
"""

from __future__ import annotations

import json

import numpy as np

from tachyon_format.model import Profile, ThreadStatus

from ..sources import whole_file_writer
from .slices import Timeline, interval_of, timeline

COUNTED_STATUS = (("on_cpu", ThreadStatus.ON_CPU), ("has_gil", ThreadStatus.HAS_GIL),
                  ("gil_requested", ThreadStatus.GIL_REQUESTED),
                  ("has_exception", ThreadStatus.HAS_EXCEPTION))
"""The status bits drawn as counters, by their counter names."""
CATEGORY = "stack"


def dumps(profile: Profile, *, interval_us: int | None = None, max_gap_us: int | None = None,
          status: bool = True) -> bytes:
    """The file's bytes (UTF-8 JSON, one event a line).

    *interval_us*: how long one sample lasts when no next sample ends it; by default the
    profile's sampling period (``profile.meta``), else the median gap between a thread's
    samples. *max_gap_us* (default twice the interval): a longer gap between two samples of a
    thread is a hole in its track, not part of the earlier sample. *status*: draw the thread
    status counters (when the profile has a status column)."""
    if profile.samples.timestamp_us is None:
        raise ValueError("a trace is a timeline and this profile has no timestamps (an "
                         "aggregated profile, or one read from a format without them): "
                         "write it to a format without a timeline (pprof, callgrind)")
    interval = int(interval_us) if interval_us is not None else _default_interval(profile)
    if interval <= 0:
        raise ValueError("interval_us must be above 0")
    max_gap = 2 * interval if max_gap_us is None else int(max_gap_us)
    line = timeline(profile, interval, max_gap)
    tracks = _tracks(profile, line)
    events = [*_metadata(tracks), *_slices(profile, line, tracks)]
    if status and line.status is not None:
        events.extend(_counters(line, tracks))
    other = json.dumps({"generator": "tachyon-format", "interval_us": interval,
                        "max_gap_us": max_gap})
    body = ",\n".join(events)
    return (f'{{"displayTimeUnit":"ms","otherData":{other},"traceEvents":[\n'
            f'{body}\n]}}\n').encode("utf-8", "surrogateescape")


def _default_interval(profile: Profile) -> int:
    found = interval_of(profile)
    if found is not None:
        return found
    samples = profile.samples
    order = np.lexsort((samples.timestamp_us, samples.thread))
    ts = samples.timestamp_us[order].astype(np.int64)
    same = samples.thread[order][1:] == samples.thread[order][:-1]
    gaps = np.diff(ts)[same]
    gaps = gaps[gaps > 0]
    return max(1, int(np.median(gaps))) if gaps.size else 1


class _Tracks:
    """Per thread row of the profile (and -1, samples without a thread): pid, tid, label."""

    def __init__(self, pid: dict[int, int], tid: dict[int, int], label: dict[int, str]):
        self.pid, self.tid, self.label = pid, tid, label

    def ids(self, row: int) -> str:
        return f'"pid":{self.pid[row]},"tid":{self.tid[row]}'


def _tracks(profile: Profile, line: Timeline) -> _Tracks:
    rows = np.unique(line.thread).tolist()
    main = set()
    if line.status is not None:
        main = set(np.unique(line.thread[(line.status & ThreadStatus.MAIN_THREAD) != 0])
                   .tolist())
    pid, tid, label = {}, {}, {}
    threads = profile.threads
    for row in rows:
        if row < 0:
            pid[row], tid[row], label[row] = 1, 0, "samples"
            continue
        pid[row] = int(threads.interpreter_id[row]) + 1
        tid[row] = int(threads.thread_id[row])
        label[row] = f"Thread {tid[row]}" + (" (main)" if row in main else "")
    return _Tracks(pid, tid, label)


def _metadata(tracks: _Tracks):
    for pid in sorted(set(tracks.pid.values())):
        name = json.dumps({"name": f"Python interpreter {pid - 1}"})
        yield f'{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{name}}}'
    for row, label in tracks.label.items():
        name = json.dumps({"name": label})
        yield f'{{"ph":"M","name":"thread_name",{tracks.ids(row)},"args":{name}}}'
        sort = 0 if label.endswith("(main)") else 1
        yield (f'{{"ph":"M","name":"thread_sort_index",{tracks.ids(row)},'
               f'"args":{{"sort_index":{sort}}}}}')


def _slices(profile: Profile, line: Timeline, tracks: _Tracks):
    """One complete event per slice; each distinct frame's JSON is made once."""
    frames, strings = profile.frames, profile.strings
    described = {}
    for row in np.unique(line.slice_frame).tolist():
        name = strings[int(frames.funcname[row])] or "???"
        args = {"file": strings[int(frames.filename[row])], "line": int(frames.lineno[row])}
        described[row] = (f'"name":{json.dumps(name)},"cat":"{CATEGORY}",'
                          f'"args":{json.dumps(args)}')
    ids = {row: tracks.ids(row) for row in tracks.pid}
    starts, ends = line.slice_start_us.tolist(), line.slice_end_us.tolist()
    for thread, start, end, frame in zip(line.slice_thread.tolist(), starts, ends,
                                         line.slice_frame.tolist(), strict=True):
        yield (f'{{"ph":"X","ts":{start},"dur":{end - start},{ids[thread]},'
               f'{described[frame]}}}')


def _counters(line: Timeline, tracks: _Tracks):
    """A counter event where a thread's status changes, and all zeros at its holes (in
    (thread, time) order, sorted with numpy)."""
    status = line.status.astype(np.int64)
    first = np.ones(status.size, bool)
    first[1:] = (line.thread[1:] != line.thread[:-1]) | line.hole_after[:-1]
    changed = first.copy()
    changed[1:] |= status[1:] != status[:-1]
    at, holes = np.flatnonzero(changed), np.flatnonzero(line.hole_after)
    # (zeros first: at an equal time the next sample's status, sorted after them, wins)
    thread = np.concatenate([line.thread[holes], line.thread[at]])
    when = np.concatenate([line.start_us[holes] + line.duration_us[holes], line.start_us[at]])
    value = np.concatenate([np.zeros(holes.size, np.int64), status[at]])
    order = np.lexsort((when, thread))
    bits = [(name, ((value[order] & int(bit)) != 0).astype(int).tolist())
            for name, bit in COUNTED_STATUS]
    heads = {row: (f'{{"ph":"C","name":{json.dumps(tracks.label[row] + " status")},'
                   f'"pid":{tracks.pid[row]},"tid":{tracks.tid[row]},"ts":')
             for row in tracks.pid}
    for j, (row, ts) in enumerate(zip(thread[order].tolist(), when[order].tolist(),
                                      strict=True)):
        values = ",".join(f'"{name}":{column[j]}' for name, column in bits)
        yield f'{heads[row]}{ts},"args":{{{values}}}}}'


write = whole_file_writer(dumps)
