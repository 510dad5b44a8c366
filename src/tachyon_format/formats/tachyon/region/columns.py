"""The decoder's outputs: growable column arrays it writes into directly, and the
:class:`SampleBatch` that :meth:`.decoder.SampleDecoder.decode` returns.

The decoder appends each window's samples and records straight into these arrays (reserved
from the header's sample count when reading a whole file), instead of building per-window
arrays that are copied afterwards: on small files the copy and the fresh memory it touches
cost as much as the decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

SAMPLE_COLUMNS = {
    "timestamp_us": np.uint64,
    "thread": np.int32,
    "status": np.uint8,
    "stack": np.int32,
}
RECORD_COLUMNS = {"offset": np.int64, "encoding": np.uint8, "first_sample": np.int64}
LARGE = 1 << 22
"""Rows from which the columns grow by a quarter instead of doubling."""


@dataclass(eq=False)  # (numpy arrays: no field-wise ==)
class SampleBatch:
    """Equal-length sample columns in replay() order, plus the record table of the batch."""

    timestamp_us: npt.NDArray[np.uint64]
    thread: npt.NDArray[np.int32]  # thread row (first-appearance order)
    status: npt.NDArray[np.uint8]
    stack: npt.NDArray[np.int32]  # prefix-tree node, -1 for the empty stack
    record_offset: npt.NDArray[np.int64]  # region offset of each record
    record_encoding: npt.NDArray[np.uint8]
    record_first_sample: npt.NDArray[np.int64]  # index of each record's first sample

    def __len__(self) -> int:
        return int(self.timestamp_us.size)


class GrowingColumns:
    """Equal-length column arrays with amortised appends (a numpy twin of ``list.extend``).

    *limit*: the rows they may ever hold; growing past it calls *on_limit* (which raises)
    before any memory is taken."""

    def __init__(self, dtypes: dict[str, Any], capacity: int, *, limit: int | None = None,
                 on_limit: Callable[[], BaseException] | None = None) -> None:
        self._arrays = {name: np.empty(max(capacity, 16), dtype) for name, dtype in dtypes.items()}
        self.size = 0
        self.limit = limit
        self._on_limit = on_limit

    @classmethod
    def samples(cls, capacity: int = 1024, **limit) -> GrowingColumns:
        return cls(SAMPLE_COLUMNS, capacity, **limit)

    @classmethod
    def records(cls, capacity: int = 1024, **limit) -> GrowingColumns:
        return cls(RECORD_COLUMNS, capacity, **limit)

    @property
    def capacity(self) -> int:
        return len(next(iter(self._arrays.values())))

    def reserve(self, n: int) -> None:
        """Room for ``n`` more rows: the capacity at least doubles, or grows by a quarter
        from :data:`LARGE` rows on (up to the limit; resized in place, see :func:`_resized`,
        a large column grows without copies, and a quarter more is less memory held
        unused)."""
        needed = self.size + n
        if needed <= self.capacity:
            return
        capacity = max(needed, self.capacity + (self.capacity // 4 if self.capacity >= LARGE
                                                else self.capacity))
        if self.limit is not None:
            if needed > self.limit:
                raise (self._on_limit() if self._on_limit is not None
                       else MemoryError(f"more than {self.limit} rows"))
            capacity = min(capacity, max(self.limit, 16))
        for name in list(self._arrays):
            self._arrays[name] = _resized(self._arrays, name, capacity, self.size)

    def append(self, n: int) -> dict[str, np.ndarray]:
        """Views of ``n`` new rows at the end, for the caller to fill."""
        self.reserve(n)
        needed = self.size + n
        views = {name: array[self.size : needed] for name, array in self._arrays.items()}
        self.size = needed
        return views

    def arrays(self) -> dict[str, np.ndarray]:
        """The whole arrays, spare rows included, for a writer that fills rows from
        :attr:`size` on and then sets :attr:`size`."""
        return self._arrays

    def view(self, name: str) -> np.ndarray:
        return self._arrays[name][: self.size]

    def take(self, n: int) -> dict[str, np.ndarray]:
        """Copies of the first ``n`` rows; the rest moves to the front."""
        n = min(n, self.size)
        out = {name: array[:n].copy() for name, array in self._arrays.items()}
        for array in self._arrays.values():
            array[: self.size - n] = array[n : self.size]
        self.size -= n
        return out

    def shift(self, name: str, amount: int) -> None:
        self._arrays[name][: self.size] -= amount

    def finish(self) -> dict[str, np.ndarray]:
        """The columns, trimmed (in place where nothing else refers to them)."""
        out = {name: _resized(self._arrays, name, self.size, self.size)
               for name in list(self._arrays)}
        self._arrays = {}
        return out


def _resized(arrays: dict[str, np.ndarray], name: str, capacity: int,
             used: int) -> np.ndarray:
    """``arrays[name]`` (taken out of *arrays*) with *capacity* rows, the first *used* kept:
    resized in place (``realloc``: the system moves the pages of a large one, without
    copying or touching them) when nothing else refers to it, else a copy. A column of
    record rows grows to gigabytes on a hostile region, where copies took half the time."""
    array = arrays.pop(name)
    if len(array) == capacity:
        return array
    try:
        array.resize(capacity)  # (refcheck: refused while a view or memoryview exists)
    except ValueError:
        grown = np.empty(capacity, array.dtype)
        grown[:used] = array[:used]
        return grown
    return array
