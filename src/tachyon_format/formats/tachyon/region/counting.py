"""The decoder's aggregating output: how many samples each distinct (thread, stack, status)
holds, instead of a row per sample (``read(..., aggregate=True)``).

:class:`SampleCounts` takes the place of the sample columns
(:class:`~.columns.GrowingColumns`) in :meth:`.commit.Committer.commit`, which then skips the
clocks. Vectorised, per batch of records:

1. *Runs*: a record's samples share its thread and stack, and a REPEAT's consecutive samples
   mostly share their status too: the samples are cut where a record starts or the status
   byte changes (one pass over the status bytes), and each run counts as one row with its
   length, so a REPEAT of thousands of samples costs one row;
2. *Pending rows*: the runs' (stack, thread, status) keys, lengths and first sample index
   are kept until there are more of them than twice the distinct rows so far (and at least
   :data:`COMPACT_ROWS`); then everything is grouped with one sort (3.).
3. *Grouping*: rows sorted by one packed int64 key (``stack + 1``, thread, status, and the
   row number under them: ``np.sort`` of the keys, about twice as fast as an argsort),
   counts summed and the first sample of each group kept, so that :meth:`SampleCounts.finish`
   gives the rows in order of first appearance, as a writer grouping the samples would.

Memory is bounded by the distinct rows plus the pending ones, never by the samples.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

COMPACT_ROWS = 1 << 16  # pending rows before a grouping, at least (25 bytes each, and as
# much again to group them: 1 << 18 held 11 MiB in a region of one record a sample)
KEY_BITS = 63  # a key of more bits (huge stack or thread tables) is sorted with lexsort

__all__ = ["SampleCounts"]


class SampleCounts:
    """Sample counts per distinct (thread, stack, status), grown batch by batch."""

    def __init__(self) -> None:
        self.size = 0  # samples counted so far (the index of the next one)
        # grouped rows (distinct keys), and rows pending since the last grouping
        self._stack = np.zeros(0, np.int32)
        self._thread = np.zeros(0, np.int32)
        self._status = np.zeros(0, np.uint8)
        self._count = np.zeros(0, np.int64)
        self._first = np.zeros(0, np.int64)
        self._pending: list[tuple[np.ndarray, ...]] = []
        self._num_pending = 0

    def count(self, thread: npt.NDArray[np.int32], stack: npt.NDArray[np.int32],
              nsamp: npt.NDArray[np.int64], status: npt.NDArray[np.uint8]) -> None:
        """Vectorised: count the samples of consecutive records (per record: its *thread*
        row, *stack* node and number of samples *nsamp*; per sample: its *status*)."""
        n = int(status.size)
        if not n:
            return
        has = np.flatnonzero(nsamp)
        record_first = np.cumsum(nsamp[has]) - nsamp[has]
        begins = np.zeros(n, bool)  # 1. a run starts at a record's first sample ...
        begins[record_first] = True
        cut = np.empty(n, bool)  # ... or at a new status
        cut[0] = True
        np.not_equal(status[1:], status[:-1], out=cut[1:])
        cut |= begins
        starts = np.flatnonzero(cut)
        lengths = np.diff(starts, append=n)
        record = has[np.cumsum(begins[starts]) - 1]
        self._pending.append((stack[record], thread[record], status[starts], lengths,
                              starts + self.size))  # 2.
        self._num_pending += starts.size
        self.size += n
        if self._num_pending > max(2 * self._count.size, COMPACT_ROWS):
            self._group()

    def finish(self) -> dict[str, np.ndarray]:
        """The distinct rows in order of first appearance: ``stack``, ``thread``,
        ``status`` and ``values`` (the counts, shape ``(rows, 1)``, int64)."""
        self._group()
        order = (_sorted_rows(self._first.copy(), max(self._first.size - 1, 0).bit_length())
                 if self._first.size else np.zeros(0, np.intp))
        return {"stack": self._stack[order], "thread": self._thread[order],
                "status": self._status[order], "values": self._count[order, None]}

    def _group(self) -> None:
        """3. The grouped rows and the pending ones, grouped by their key."""
        if not self._pending:
            return
        parts = list(zip(*self._pending, strict=True))
        self._pending, self._num_pending = [], 0
        stack = np.concatenate([self._stack, *parts[0]])
        thread = np.concatenate([self._thread, *parts[1]])
        status = np.concatenate([self._status, *parts[2]])
        count = np.concatenate([self._count, *parts[3]])
        first = np.concatenate([self._first, *parts[4]])
        order = _sort_order(stack, thread, status)
        stack, thread, status = stack[order], thread[order], status[order]
        head = np.empty(order.size, bool)
        head[0] = True
        head[1:] = (stack[1:] != stack[:-1]) | (thread[1:] != thread[:-1]) | (
            status[1:] != status[:-1])
        heads = np.flatnonzero(head)
        self._stack, self._thread, self._status = stack[heads], thread[heads], status[heads]
        self._count = np.add.reduceat(count[order], heads)
        self._first = np.minimum.reduceat(first[order], heads)


def _sort_order(stack: np.ndarray, thread: np.ndarray, status: np.ndarray) -> np.ndarray:
    """An order that sorts the rows by (stack, thread, status): one packed key of the three
    and the row number, sorted by value (faster than an argsort), while they fit 63 bits;
    else ``lexsort``."""
    n = stack.size
    widths = (int(stack.max()) + 1).bit_length(), int(thread.max()).bit_length(), 8
    row_bits = max(n - 1, 0).bit_length()
    if sum(widths) + row_bits > KEY_BITS:
        return np.lexsort((status, thread, stack))
    key = stack.astype(np.int64) + 1
    for column, width in zip((thread, status), widths[1:], strict=True):
        key <<= width
        key |= column
    return _sorted_rows(key, row_bits)


def _sorted_rows(key: np.ndarray, row_bits: int) -> np.ndarray:
    """The rows of *key* (non-negative int64 below ``2**(63 - row_bits)``) in order of
    value, ties in row order: the row number packed under the key, then sorted."""
    key <<= row_bits
    key |= np.arange(key.size, dtype=np.int64)
    key.sort()
    key &= (1 << row_bits) - 1
    return key
