"""Write a :class:`~tachyon_format.model.Profile` as the Gecko profile JSON CPython 3.15
writes (``python -m profiling.sampling replay --gecko``, its ``GeckoCollector``), for the
Firefox Profiler.

The Gecko profile is a timeline: every sample keeps its time, so the profile must have
per-sample timestamps and one sample per row. Steps:

1. The samples as CPython's collector sees them (:func:`~tachyon_format.model.internal.
   visible_stacks`): profiler-internal frames dropped; a sample left without frames still
   moves the clock and the markers.
2. Times in ms since the first sample (:mod:`.timeline`); threads by thread id (two
   interpreters' equal thread ids are one thread, as in CPython), in order of first sample.
3. Per thread, vectorised: the status and GC markers from runs of equal state
   (:mod:`.markers`); the distinct stacks in order of first sample, walked once each into
   the stack, frame, function and resource tables (:mod:`.tables`); the samples' stack
   indexes and times as numpy columns.
4. The shared string array in the order CPython interns: ``(root)``, then each string at
   the sample where it is first needed (marker names before the stack of that sample).

What CPython fills in from the machine or the clock at replay time, and what this writer
does instead (see docs/formats/gecko.md): ``meta.startTime`` (CPython: the replaying
process's monotonic clock, in ms) is the profile's own start on the same clock (a Tachyon
file's ``start_time_us`` / 1000, what CPython writes when it profiles live); ``pid`` (the
replaying process's) is this process's, or the ``pid`` option; ``abi``/``oscpu``
(``platform.machine()``), ``platform`` (``platform.system()``) and ``physicalCPUs``/
``logicalCPUs`` (``os.cpu_count()``) describe this machine, as CPython's do, unless given.
"""

from __future__ import annotations

import json
import os
import platform
from typing import Any

import numpy as np

from tachyon_format.model import Profile, ThreadStatus
from tachyon_format.model.internal import visible_stacks

from ..sources import whole_file_writer
from .markers import TRACKS, thread_markers, track_states
from .tables import FrameRows, ThreadTables
from .timeline import interval_ms, relative_ms

GECKO_FORMAT_VERSION = 32
GECKO_PREPROCESSED_VERSION = 57
CATEGORIES = [
    {"name": name, "color": color, "subcategories": ["Other"]}
    for name, color in (("Other", "grey"), ("Python", "yellow"), ("Native", "blue"),
                        ("GC", "orange"), ("GIL", "green"), ("CPU", "purple"),
                        ("Code Type", "red"), ("Opcodes", "magenta"),
                        ("Exception", "lightblue"))
]
"""CPython's ``GECKO_CATEGORIES``; a category is an index into this list."""


def build(profile: Profile, *, start_time_ms: float | None = None, pid: int | str | None = None,
          machine: str | None = None, system: str | None = None,
          cpu_count: int | None = None) -> dict[str, Any]:
    """The Gecko profile as a JSON-able dict, keys in CPython's order.

    *start_time_ms*: ``meta.startTime`` (default: the profile's start, see the module
    docstring); *pid*: the process id written on every thread (default: this process's, as
    CPython writes its own); *machine*, *system*, *cpu_count*: ``abi``/``oscpu``,
    ``platform`` and the CPU counts (default: this machine's, as CPython)."""
    samples = profile.samples
    if samples.timestamp_us is None:
        raise ValueError("a Gecko profile is a timeline: it needs a timestamp per sample, and "
                         "this profile has none (an aggregated profile, or a format without "
                         "times); write a format without a timeline instead")
    if samples.values is not None and (np.asarray(profile.weights()) != 1).any():
        raise ValueError("a Gecko profile has one row per sample: this profile's rows stand "
                         "for several samples each (it was aggregated)")
    if len(samples) and (samples.thread < 0).any():
        raise ValueError("a Gecko profile needs a thread for every sample; some samples of "
                         "this profile have none")
    n = len(samples)
    times = relative_ms(samples.timestamp_us)
    last_time = float(times[-1]) if n else 0.0
    status = (samples.status if samples.status is not None else np.zeros(n, np.uint8))
    stacks, stack_ids = visible_stacks(profile)
    in_gc = _gc_samples(profile, stacks, stack_ids)
    tids = profile.threads.thread_id.astype(np.uint64)[samples.thread.astype(np.int64)]

    events: list[tuple] = []  # (sample, phase, order, text): when a string is first needed
    rows = FrameRows(
        filename=[profile.strings[i] for i in profile.frames.filename.tolist()],
        funcname=[profile.strings[i] for i in profile.frames.funcname.tolist()],
        lineno=profile.frames.lineno.tolist(), column=profile.frames.column.tolist())
    tree = (stacks.frame.tolist(), stacks.parent.tolist())
    threads = []
    distinct_tids, first, which = np.unique(tids, return_index=True, return_inverse=True)
    by_thread = np.argsort(which.reshape(-1), kind="stable")  # rows of each thread, in order
    bounds = np.r_[0, np.cumsum(np.bincount(which.reshape(-1), minlength=distinct_tids.size))]
    for t in np.argsort(first, kind="stable").tolist():
        mine = by_thread[bounds[t]:bounds[t + 1]]
        if samples.status is None:  # no status bits: only the GC markers
            states, tracks = [in_gc[mine].astype(np.int8)], (TRACKS[-1],)
        else:
            states, tracks = track_states(status[mine], in_gc[mine]), TRACKS
        markers = thread_markers(mine, times[mine], states, last_time, n, tracks)
        events += [(int(e), 0, int(o), name) for e, o, name in zip(
            markers.emitted.tolist(), markers.order.tolist(), markers.name, strict=True)]
        tables, sample_stacks, shown = _thread_tables(rows, tree, mine, stack_ids, events)
        main = bool(int(status[mine[0]]) & ThreadStatus.MAIN_THREAD)
        threads.append((int(distinct_tids[t]), main,
                        tables, markers, sample_stacks, times[shown]))

    strings = ["(root)"]
    index = {"(root)": 0}
    for *_, text in sorted(events, key=lambda e: e[:3]):
        if text not in index:
            index[text] = len(strings)
            strings.append(text)
    pid_text = str(os.getpid() if pid is None else pid)
    return {
        "meta": _meta(profile, interval_ms(times, _replay_calls(profile, status)),
                      start_time_ms, machine, system, cpu_count),
        "libs": [],
        "threads": [_thread(tid, main, tables, markers, sample_stacks, sample_times, index,
                            pid_text)
                    for tid, main, tables, markers, sample_stacks, sample_times in threads],
        "pages": [],
        "shared": {"stringArray": strings,
                   "sources": {"length": 0, "uuid": [], "filename": []}},
    }


def _thread_tables(rows: FrameRows, tree: tuple[list[int], list[int]], mine: np.ndarray,
                   stack_ids: np.ndarray, events: list[tuple]):
    """One thread's tables, from its distinct stacks in order of first sample; its samples'
    stack-table indexes, and the rows of the samples that have a stack. New strings are
    added to *events* with the sample that first needs them."""
    tables = ThreadTables(rows)

    def intern(text: str, sample: int) -> None:
        events.append((sample, 1, len(events), text))

    shown = mine[stack_ids[mine] >= 0]
    distinct, first_sample = np.unique(stack_ids[shown], return_index=True)
    index_of = np.zeros(distinct.size, np.int64)
    for k in np.argsort(first_sample, kind="stable").tolist():
        index_of[k] = tables.add_stack(int(distinct[k]), *tree, intern,
                                       int(shown[first_sample[k]]))
    return tables, index_of[np.searchsorted(distinct, stack_ids[shown])], shown


def _replay_calls(profile: Profile, status: np.ndarray) -> np.ndarray | None:
    """The first sample of each of replay's ``collect`` calls, for a profile read from a
    Tachyon file (its record table is in the extras); None (a call per sample) otherwise."""
    records = getattr(profile.extras.get("tachyon"), "records", None)
    return None if records is None else records.replay_calls(status)


def _gc_samples(profile: Profile, stacks, stack_ids: np.ndarray) -> np.ndarray:
    """Per sample: does its (visible) stack hold a frame whose function is ``<GC>``?"""
    n = len(profile.samples)
    gc_rows = np.array([text == "<GC>" for text in profile.strings], bool)
    if not gc_rows.any() or n == 0:
        return np.zeros(n, bool)
    is_gc = gc_rows[profile.frames.funcname.astype(np.int64)]
    distinct, inverse = np.unique(stack_ids, return_inverse=True)
    offsets, frame_rows = stacks.to_csr(distinct)
    hits = np.zeros(distinct.size, bool)
    owner = np.repeat(np.arange(distinct.size), np.diff(offsets))
    hits[owner[is_gc[frame_rows]]] = True
    return hits[inverse.reshape(-1)]


def _meta(profile: Profile, interval: float, start_time_ms, machine, system, cpu_count):
    if start_time_ms is None:
        info = getattr(profile.extras.get("tachyon"), "info", None)
        if info is not None:
            start_time_ms = info["start_time_us"] / 1000
        elif profile.meta.time_ns is not None:
            start_time_ms = profile.meta.time_ns / 1e6
        else:
            start_time_ms = 0.0
    machine = platform.machine() if machine is None else machine
    cpus = (os.cpu_count() or 0) if cpu_count is None else cpu_count
    return {
        "interval": interval, "startTime": start_time_ms, "abi": machine,
        "misc": "Python profiler", "oscpu": machine,
        "platform": platform.system() if system is None else system, "processType": 0,
        "categories": CATEGORIES, "stackwalk": 0, "toolkit": "",
        "version": GECKO_FORMAT_VERSION, "preprocessedProfileVersion": GECKO_PREPROCESSED_VERSION,
        "appBuildID": "", "physicalCPUs": cpus, "logicalCPUs": cpus, "CPUName": "",
        "product": "Python", "symbolicated": True, "markerSchema": [],
        "importedFrom": "Tachyon Sampling Profiler",
        "extensions": {"id": [], "name": [], "baseURL": [], "length": 0},
    }


def _thread(tid, main, tables, markers, sample_stacks, sample_times, index, pid):
    n = int(sample_stacks.size)
    duration = (markers.end - markers.start).tolist()
    return {
        "name": f"Thread-{tid}", "isMainThread": main, "processStartupTime": 0,
        "processShutdownTime": None, "registerTime": 0, "unregisterTime": None,
        "pausedRanges": [], "pid": pid, "tid": tid, "processType": "default",
        "processName": "Python Process",
        "samples": {"stack": sample_stacks.tolist(), "time": sample_times.tolist(),
                    "eventDelay": [None] * n, "weight": None, "weightType": "samples",
                    "length": n},
        **tables.to_json(index),
        "markers": {
            "data": [{"type": name.replace(" ", ""), "duration": d, "tid": tid}
                     for name, d in zip(markers.name, duration, strict=True)],
            "name": [index[name] for name in markers.name],
            "startTime": markers.start.tolist(), "endTime": markers.end.tolist(),
            "phase": [1] * len(markers.name), "category": markers.category.tolist(),
            "length": len(markers.name)},
    }


def json_bytes(document: dict) -> bytes:
    """*document* as compact JSON, UTF-8 encoded, as CPython's gecko collector writes it."""
    return json.dumps(document, separators=(",", ":"), allow_nan=False).encode("utf-8")


write = whole_file_writer(build, json_bytes)
