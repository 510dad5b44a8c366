"""The sample clock as CPython's ``GeckoCollector`` turns it into profile time.

Replay hands the collector each sample's ``timestamp_us``; times are milliseconds since the
first sample, ``(ts - first) / 1000`` with Python's exact integer division (timestamps are
unsigned 64-bit and may go backwards, so a time may be negative).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_EXACT = 2**53
"""Below this a difference converts to float64 exactly, so numpy's division rounds as
Python's ``int / int`` does; larger ones are divided by Python, one by one."""


def relative_ms(timestamps_us: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
    """Vectorised: each timestamp minus the first, in milliseconds, as CPython computes it."""
    ts = np.asarray(timestamps_us, dtype=np.uint64)
    if ts.size == 0:
        return np.zeros(0, np.float64)
    base = ts[0]
    backwards = ts < base
    magnitude = np.where(backwards, base - ts, ts - base)  # exact in uint64
    out = magnitude.astype(np.float64) / 1000.0
    for i in np.flatnonzero(magnitude >= _EXACT).tolist():
        out[i] = int(magnitude[i]) / 1000
    out[backwards] = -out[backwards]
    return out


def interval_ms(times: npt.NDArray[np.float64],
                call_starts: npt.NDArray[np.int64] | None = None) -> float:
    """``meta.interval``: the last sample's time over the number of samples when that time
    is positive (CPython's ``export``). Else the value its ``collect`` left: at each call
    after a call whose last time was positive, the time gained over the samples before.
    *call_starts* are the first samples of replay's ``collect`` calls (a Tachyon file's
    ``Records.replay_calls``; default: one call per sample); 1.0 if no call set it."""
    n = int(times.size)
    if n and times[-1] > 0:
        return float(times[-1]) / n
    starts = np.arange(n) if call_starts is None else np.asarray(call_starts, np.int64)
    if starts.size < 2:
        return 1.0
    ends = np.r_[starts[1:], n] - 1
    previous_last = times[ends[:-1]]
    set_at = np.flatnonzero(previous_last > 0) + 1
    if set_at.size == 0:
        return 1.0
    c = int(set_at[-1])
    return (float(times[ends[c]]) - float(previous_last[c - 1])) / int(starts[c])
