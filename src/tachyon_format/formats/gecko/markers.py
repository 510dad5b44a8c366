"""The interval markers CPython's ``GeckoCollector`` derives from thread status bits and
``<GC>`` frames, computed per thread from runs of equal state (vectorised).

A marker covers one run of samples in one state; it ends at the first sample of the next
run (the time CPython's ``collect`` sees the change) or, for the run still open at the end,
at the last sample of the whole profile (``_finalize_markers``). The state at a thread's
first sample only opens a run, as in CPython.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

CATEGORY_GC, CATEGORY_GIL, CATEGORY_CPU, CATEGORY_CODE_TYPE = 3, 4, 5, 6
CATEGORY_EXCEPTION = 8
HAS_GIL, ON_CPU, GIL_REQUESTED, HAS_EXCEPTION = 1 << 0, 1 << 1, 1 << 3, 1 << 4


@dataclass(frozen=True)
class Track:
    """One state CPython tracks: ``names`` of the marker for each state value (None: no
    marker), its category, its place among the checks of one ``collect`` call (``step``),
    and, per state value, the place of its closing in ``_finalize_markers`` (``closing``)."""

    names: dict[int, str]
    category: int
    step: int
    closing: dict[int, int]


TRACKS = (
    Track({1: "Has GIL", 0: "No GIL"}, CATEGORY_GIL, 0, {1: 0, 0: 1}),
    Track({1: "On CPU", 0: "Off CPU"}, CATEGORY_CPU, 1, {1: 2, 0: 3}),
    Track({1: "Python Code", 2: "Native Code"}, CATEGORY_CODE_TYPE, 2, {1: 4, 2: 5}),
    Track({1: "Waiting for GIL"}, CATEGORY_GIL, 3, {1: 6}),
    Track({1: "Has Exception", 0: "No Exception"}, CATEGORY_EXCEPTION, 4, {1: 8, 0: 9}),
    Track({1: "GC Collecting"}, CATEGORY_GC, 5, {1: 7}),
)


def track_states(status: npt.NDArray[np.integer], in_gc: npt.NDArray[np.bool_]) -> list:
    """Per track of :data:`TRACKS`, the state of each sample."""
    s = np.asarray(status, dtype=np.int64)
    gil = (s & HAS_GIL) != 0
    cpu = (s & ON_CPU) != 0
    code = np.where(gil, 1, np.where(cpu, 2, 0))
    return [gil.astype(np.int8), cpu.astype(np.int8), code.astype(np.int8),
            ((s & GIL_REQUESTED) != 0).astype(np.int8),
            ((s & HAS_EXCEPTION) != 0).astype(np.int8), np.asarray(in_gc, np.int8)]


@dataclass
class Markers:
    """One thread's markers in CPython's order: ``emitted`` (global sample index of the
    ``collect`` call that closed it; the number of samples for the final closing) and
    ``order`` (its place within that call) sort them; the rest are the marker columns."""

    emitted: npt.NDArray[np.int64]
    order: npt.NDArray[np.int64]
    name: list[str]
    start: npt.NDArray[np.float64]
    end: npt.NDArray[np.float64]
    category: npt.NDArray[np.int64]


def thread_markers(rows: npt.NDArray[np.int64], times: npt.NDArray[np.float64],
                   states: list, last_time: float, num_samples: int,
                   tracks: tuple[Track, ...] = TRACKS) -> Markers:
    """The markers of one thread whose samples are the global sample indices *rows* (with
    *times*), the state of each of *tracks* per sample in *states*; open runs close at
    *last_time*."""
    parts = []
    for track, state in zip(tracks, states, strict=True):
        starts = np.flatnonzero(np.r_[True, state[1:] != state[:-1]])
        values = state[starts]
        ends = np.r_[starts[1:], -1]
        for value, name in track.names.items():
            pick = np.flatnonzero(values == value)
            if pick.size == 0:
                continue
            closing = ends[pick]
            final = closing < 0
            emitted = np.where(final, num_samples, rows[np.maximum(closing, 0)])
            order = np.where(final, track.closing[value], track.step)
            end = np.where(final, last_time, times[np.maximum(closing, 0)])
            parts.append((emitted, order, [name] * pick.size, times[starts[pick]], end,
                          np.full(pick.size, track.category)))
    if not parts:
        empty = np.zeros(0, np.int64)
        return Markers(empty, empty, [], np.zeros(0), np.zeros(0), empty)
    emitted = np.concatenate([p[0] for p in parts])
    order = np.concatenate([p[1] for p in parts])
    sort = np.lexsort((order, emitted))
    names = [n for p in parts for n in p[2]]
    return Markers(emitted[sort], order[sort], [names[i] for i in sort.tolist()],
                   np.concatenate([p[3] for p in parts])[sort],
                   np.concatenate([p[4] for p in parts])[sort],
                   np.concatenate([p[5] for p in parts])[sort])
