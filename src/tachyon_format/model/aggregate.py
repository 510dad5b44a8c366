"""Aggregations over sample columns: the first step of every conversion and analysis.

Most outputs need how many samples (or how much weight) each distinct combination of a few
columns holds — (thread, stack, status) for pprof, (thread, stack) for collapsed stacks — not
the samples themselves. :func:`group_count` computes that with one sort, so that the work
after it is per distinct row, not per sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from .profile import Profile, Samples


def group_count(
    columns: Mapping[str, npt.NDArray[np.integer]],
    weights: npt.NDArray[np.integer] | None = None,
) -> tuple[dict[str, np.ndarray], npt.NDArray[np.int64]]:
    """Vectorised: the distinct rows of equal-length integer *columns*, sorted by the columns
    in order, and per row the number of samples holding it (or the sum of their *weights*).

    Columns whose value ranges fit 64 bits together are packed into one key and sorted once
    (radix-like speed for small ranges); others are sorted with ``lexsort``.
    """
    names = list(columns)
    arrays = [np.asarray(columns[name]) for name in names]
    n = arrays[0].size if arrays else 0
    if any(a.shape != (n,) for a in arrays):
        raise ValueError("columns must be 1-d and of equal length")
    if weights is not None and np.shape(weights) != (n,):
        raise ValueError("weights must have one value per row")
    if n == 0:
        return {name: a[:0] for name, a in zip(names, arrays, strict=True)}, np.zeros(0, np.int64)
    order = _sort_order(arrays)
    sorted_arrays = [a[order] for a in arrays]
    head = np.zeros(n, dtype=bool)
    head[0] = True
    for a in sorted_arrays:
        head[1:] |= a[1:] != a[:-1]
    starts = np.flatnonzero(head)
    if weights is None:
        counts = np.diff(np.append(starts, n)).astype(np.int64)
    else:
        counts = np.add.reduceat(np.asarray(weights, dtype=np.int64)[order], starts)
    return {name: a[starts] for name, a in zip(names, sorted_arrays, strict=True)}, counts


def _sort_order(arrays: list[np.ndarray]) -> npt.NDArray[np.intp]:
    """An order that sorts the rows by the columns, first column first."""
    lows = [int(a.min()) for a in arrays]
    spans = [int(a.max()) - low + 1 for a, low in zip(arrays, lows, strict=True)]
    bits = [max(1, (span - 1).bit_length()) for span in spans]
    if sum(bits) > 64:
        return np.lexsort(arrays[::-1])
    key = np.zeros(arrays[0].size, np.uint64)
    for a, low, width in zip(arrays, lows, bits, strict=True):
        key <<= np.uint64(width)
        # (mod 2**64: right for signed and unsigned columns alike, the span being < 2**64)
        key |= a.astype(np.uint64) - np.uint64(low % 2**64)
    return np.argsort(key, kind="stable")


def aggregate_samples(profile: Profile, *, keep_status: bool = True) -> Profile:
    """*profile* with one sample row per distinct (thread, stack, status) — (thread, stack)
    without *keep_status* — and its summed :meth:`Profile.weights` as ``values`` (one column
    per sample type); timestamps are gone. What every output without a timeline needs, at
    the cost of one sort."""
    samples = profile.samples
    columns = {"thread": samples.thread, "stack": samples.stack}
    if keep_status and samples.status is not None:
        columns["status"] = samples.status
    if samples.values is None:
        keys, counts = group_count(columns)
        values = counts[:, None]
    else:
        keys, first = group_count(columns, samples.values[:, 0])
        rest = [group_count(columns, samples.values[:, i])[1]
                for i in range(1, samples.values.shape[1])]
        values = np.stack([first, *rest], axis=1)
    grouped = Samples(stack=keys["stack"], thread=keys["thread"], status=keys.get("status"),
                      values=values.astype(np.int64))
    return replace(profile, samples=grouped, extras=dict(profile.extras))
