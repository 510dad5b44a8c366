"""The thread table: every (interpreter_id, thread_id) pair of the region, and its state.

Rows are numbered in order of first appearance, as CPython's reader meets the pairs
(docs/format/records.md#per-thread-state). Per row, the state after the records committed so
far: the clock (uint64 µs, starting at the header's ``start_time_us``), the stack depth, and
the prefix-tree node of the current stack (-1: the empty stack, where every thread starts).

Invariants: a pair has one row for good; there are never more rows than the header's
``thread_count`` (the pair that would be one too many raises :class:`ThreadCountError`, with
CPython's message, and is not added; only ``validate``'s walk, :mod:`.check_walk`, adds it
after reporting); :mod:`.commit` is the only writer of the per-row state.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import segments

from .replay_checks import THREAD_COUNT

__all__ = ["ThreadCountError", "ThreadTable"]


class ThreadCountError(Exception):
    """A record names a new thread when the header's ``thread_count`` are already known.

    ``index``: for a vectorised lookup, the first record that does (else 0)."""

    def __init__(self, declared: int, found: int, index: int = 0) -> None:
        super().__init__(THREAD_COUNT.text(declared, found))
        self.declared, self.found, self.index = declared, found, index


class ThreadTable:
    """Rows of (interpreter_id, thread_id) pairs in first-appearance order, with per-row
    state (see the module docs)."""

    def __init__(self, thread_count: int, start_time_us: int) -> None:
        self.thread_count = int(thread_count)
        self.start_time_us = int(start_time_us)
        self._row: dict[tuple[int, int], int] = {}  # (interpreter_id, thread_id) -> row
        self._interpreter_ids: list[int] = []  # per row
        self._thread_ids: list[int] = []  # per row
        self.interpreters: list[int] = []  # distinct interpreter ids, first appearance
        self._clock = np.zeros(0, np.uint64)  # per row (with spare capacity)
        self._depth = np.zeros(0, np.int64)
        self._node = np.zeros(0, np.int32)
        self._sorted = _empty_sorted()  # see sorted_ids

    def __len__(self) -> int:
        return len(self._thread_ids)

    # ------------------------------------------------------------------ per-row state
    @property
    def clock(self) -> npt.NDArray[np.uint64]:
        """Per row: the clock after the last committed sample (a writable view)."""
        return self._clock[: len(self)]

    @property
    def depth(self) -> npt.NDArray[np.int64]:
        """Per row: the depth of the current stack (a writable view)."""
        return self._depth[: len(self)]

    @property
    def node(self) -> npt.NDArray[np.int32]:
        """Per row: the prefix-tree node of the current stack, -1 if empty (a writable
        view)."""
        return self._node[: len(self)]

    # ------------------------------------------------------------------ rows
    def ids(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]:
        """(interpreter_id, thread_id) of every row."""
        return (np.array(self._interpreter_ids, dtype=np.uint32),
                np.array(self._thread_ids, dtype=np.uint64))

    def row(self, interpreter_id: int, thread_id: int) -> int:
        """Scan: the row of a pair, added (with a fresh clock and an empty stack) if new;
        raises :class:`ThreadCountError` instead if the table is full."""
        row = self._row.get((interpreter_id, thread_id))
        if row is None:
            if len(self) >= self.thread_count:
                raise ThreadCountError(self.thread_count, len(self) + 1)
            row = self.add(interpreter_id, thread_id)
        return row

    def rows_of(
        self, interpreter_id: npt.NDArray[np.uint32], thread_id: npt.NDArray[np.uint64]
    ) -> npt.NDArray[np.int32]:
        """Vectorised: the row of each (interpreter_id, thread_id) pair, adding new pairs in
        order of first appearance; raises :class:`ThreadCountError` (with the index of the
        first pair too many) if they do not all fit; the pairs before it are added."""
        rows = self._known_rows(interpreter_id, thread_id)
        if rows is not None:
            return rows
        if interpreter_id.size and interpreter_id.min() == interpreter_id.max():
            uniq, first, inverse = segments.unique_inverse(thread_id)
            keys = [(int(interpreter_id[0]), int(t)) for t in uniq]
        else:
            pair = np.empty(thread_id.size, dtype=[("i", "u4"), ("t", "u8")])
            pair["i"], pair["t"] = interpreter_id, thread_id
            uniq, first, inverse = segments.unique_inverse(pair)
            keys = [(int(i), int(t)) for i, t in uniq.tolist()]
        rows = np.empty(len(keys), dtype=np.int32)
        fresh = []
        for j, key in enumerate(keys):
            row = self._row.get(key)
            if row is None:
                fresh.append(j)
            else:
                rows[j] = row
        for j in sorted(fresh, key=lambda j: first[j]):
            if len(self) >= self.thread_count:
                raise ThreadCountError(self.thread_count, len(self) + 1, int(first[j]))
            rows[j] = self.add(*keys[j])
        return rows[inverse.reshape(-1)]

    def truncate(self, rows: int) -> None:
        """Forget the rows from *rows* on: pairs a batch added whose records were then not
        committed (CPython's reader never met them)."""
        if rows >= len(self):
            return
        for key in zip(self._interpreter_ids[rows:], self._thread_ids[rows:], strict=True):
            del self._row[key]
        del self._interpreter_ids[rows:], self._thread_ids[rows:]
        self.interpreters = list(dict.fromkeys(self._interpreter_ids))
        self._sorted = _empty_sorted()  # (a new object: a helper thread may hold the old)

    def sorted_ids(self) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                                  npt.NDArray[np.int32]]:
        """The table sorted by thread id: (thread ids, interpreter ids, rows); rebuilt when
        rows were added (read-only: a helper thread may hold it)."""
        if self._sorted[0].size != len(self):
            thread_ids = np.array(self._thread_ids, np.uint64)
            order = np.argsort(thread_ids, kind="stable")
            self._sorted = (thread_ids[order],
                            np.array(self._interpreter_ids, np.uint32)[order],
                            order.astype(np.int32))  # a row is its index in the table
        return self._sorted

    def _known_rows(self, interpreter_id, thread_id) -> npt.NDArray[np.int32] | None:
        """Vectorised: the rows when every pair is a known one (the usual case after the
        first window), else None (also when a thread id is shared by interpreters and the
        search lands on the other one's: the general path sorts that out)."""
        if not len(self) or not thread_id.size:
            return None
        tids, iids, rows = self.sorted_ids()
        at = np.minimum(np.searchsorted(tids, thread_id), tids.size - 1)
        if not ((tids[at] == thread_id) & (iids[at] == interpreter_id)).all():
            return None
        return rows[at]

    def add(self, interpreter_id: int, thread_id: int) -> int:
        """The row of a new pair, with a fresh clock and an empty stack, whatever the
        ``thread_count`` (:meth:`row` and :meth:`rows_of` check it first; ``validate`` goes
        on past that check with the thread added)."""
        row = len(self)
        self._row[(interpreter_id, thread_id)] = row
        self._interpreter_ids.append(interpreter_id)
        self._thread_ids.append(thread_id)
        if interpreter_id not in self.interpreters:
            self.interpreters.append(interpreter_id)
        if row >= self._clock.size:  # double the capacity (16 rows to start with)
            capacity = max(16, 2 * self._clock.size)
            self._clock = segments.grown(self._clock, capacity, row)
            self._depth = segments.grown(self._depth, capacity, row)
            self._node = segments.grown(self._node, capacity, row)
        self._clock[row] = self.start_time_us
        self._depth[row] = 0
        self._node[row] = -1
        return row


def _empty_sorted():
    return np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.int32)
