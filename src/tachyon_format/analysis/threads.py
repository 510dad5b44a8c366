"""Per thread: its samples, the time they stand for, and the share of them with each status
bit (how long each thread held the GIL, waited for it, ran on a CPU...), from any profile
whose samples have threads; the status shares where they have a status (a Tachyon file)."""

from __future__ import annotations

import numpy as np

from tachyon_format.model import Profile

from .table import Table

STATUS_BITS = (("has_gil", 1), ("on_cpu", 2), ("gil_requested", 8), ("has_exception", 16),
               ("unknown", 4))
"""The status bits shown (:class:`tachyon_format.ThreadStatus`), as ``<name>_fraction``
columns; MAIN_THREAD (32) is a column of its own, ``main``."""


def thread_table(profile: Profile, sample_type: str | None = None) -> Table:
    """Per thread of the profile's table, in its order: ``interpreter_id``, ``thread_id``,
    ``main`` (a sample of it had the MAIN_THREAD bit), ``samples`` (its weight of
    *sample_type*) and per status bit the fraction of that weight with the bit set
    (``has_gil_fraction`` ...; NaN without a status). ``total``: every thread's weight."""
    threads = profile.threads
    n = len(threads)
    samples = profile.samples
    weight = np.asarray(profile.weights(sample_type), np.int64)
    row = samples.thread.astype(np.int64)
    known = (row >= 0) & (row < n)
    per_thread = np.bincount(row[known], weight[known], minlength=n).astype(np.int64)
    columns: dict[str, np.ndarray] = {
        "interpreter_id": np.asarray(threads.interpreter_id, np.int64),
        "thread_id": np.asarray(threads.thread_id, np.uint64),
    }
    status = samples.status
    if status is None:
        columns["main"] = np.zeros(n, bool)
    else:
        main = np.zeros(n, bool)
        main[np.unique(row[known & ((status.astype(np.int64) & 32) != 0)])] = True
        columns["main"] = main
    columns["samples"] = per_thread
    for name, bit in STATUS_BITS:
        if status is None:
            columns[f"{name}_fraction"] = np.full(n, np.nan)
            continue
        has = known & ((status.astype(np.int64) & bit) != 0)
        with_bit = np.bincount(row[has], weight[has], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            columns[f"{name}_fraction"] = np.where(per_thread > 0, with_bit / per_thread,
                                                   np.nan)
    return Table(columns, total=int(per_thread.sum()))
