"""Stage 2 of the vectorised decoder: what a batch of records means, for all records at once.

Invariant: committing a :class:`~.records.RecordBatch` leaves the thread table, the stack
tree and the output columns exactly as :func:`.scan.decode_region` would after the same
records, or raises the :class:`FormatError` it would raise, the records before the bad one
committed first (as CPython's replay delivers them before it fails). The checks here are
those that need the threads' state (docs/format/reader.md#checks-during-replay, 2 and 13 to
16); :mod:`.discover` and :mod:`.scan` made the others.

1. *Thread rows* of the records, adding new threads in order (:class:`.threads.ThreadTable`).
2. *Depths*: each record maps its thread's depth d to ``max(d + a, b)``, or to ``b`` (FULL,
   SUFFIX): one grouped max-plus prefix composition gives every depth before and after
   (:func:`~tachyon_format.kernels.segments.decode_group_max_plus`), hence the levels each
   record keeps and the shared-count and final-depth checks.
3. *Frame checks*: listed frame indices below the frame count, with valid strings.
4. *Stacks*: the prefix-tree node of each record's new stack (:mod:`.stack_tree`), then each
   REPEAT's stack carried from the latest earlier record of its thread.

A SUFFIX with no new frame and fewer shared frames than its thread's depth keeps the
*innermost* shared frames (docs/format/records.md#suffix), not a level of the tree. CPython's
writer never writes one: a batch is committed up to the first one, and the decoder hands it
to the sequential reader, which lists its whole new stack. (With as many shared frames as
the depth, the usual SUFFIX of no new frame keeps the stack: committed here.)
5. *Clocks*: one running sum over all the deltas, adjusted at each record's first sample so
   that it continues its thread's clock (mod 2**64).
6. *Columns*: the records and samples appended to the caller's columns, in blocks of
   samples (:func:`.records.sample_blocks`): fresh memory per sample costs more than the
   arithmetic.
   Into a :class:`.counting.SampleCounts` instead (``read(..., aggregate=True)``): the
   samples counted per (thread, stack, status), and step 5 skipped.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import segments
from tachyon_format.schema import tachyon_values as spec

from . import replay_checks as checks
from .columns import GrowingColumns
from .counting import SampleCounts
from .records import (
    FULL,
    POP_PUSH,
    REPEAT,
    SUFFIX,
    ReadStats,
    RecordBatch,
    RegionFacts,
    sample_blocks,
)
from .replay_checks import ReplayCheck
from .stack_tree import StackTree
from .threads import ThreadCountError, ThreadTable

MAX_DEPTH = spec.MAX_STACK_DEPTH


class Failed(NamedTuple):
    """A check that failed on a record of the batch, with the numbers of its message: the
    first record's wins, and of its checks the first in CPython's order."""

    record: int  # in the batch
    number: int  # the check's, in docs/format/reader.md#checks-during-replay
    check: ReplayCheck
    a: object = 0
    b: object = 0

    @classmethod
    def of(cls, record: int, check: ReplayCheck, a: object = 0, b: object = 0) -> Failed:
        return cls(record, check.number, check, a, b)


__all__ = ["Committer"]


class Committer:
    """Commits record batches to the thread table, the stack tree and output columns."""

    def __init__(self, facts: RegionFacts, threads: ThreadTable, tree: StackTree) -> None:
        self.facts = facts
        self.threads = threads
        self.tree = tree
        self.stats = ReadStats()
        self.records = 0  # records committed so far: the number of the next one
        ok = facts.frame_string_ok
        self._all_frames_ok = ok is None or bool(ok.all())  # then a bound is the check

    def commit(self, batch: RecordBatch, samples: GrowingColumns | SampleCounts,
               records: GrowingColumns, *, continued: bool = False) -> int:
        """Vectorised: append the batch's samples and records to the columns (see the module
        docs); ``first_sample`` counts rows of *samples*. *continued*: the batch's first
        record is more entries of the last one committed (a long REPEAT,
        :mod:`.long_records`): its samples are appended, not another record.

        Returns the records committed: all of them, or those before the first SUFFIX that
        keeps its innermost frames (see the module docs), which the caller hands to the
        sequential reader."""
        skip = int(continued)
        self.records -= skip
        known = len(self.threads)  # the rows before this batch: see below
        try:
            thr = self.threads.rows_of(batch.interpreter_id, batch.thread_id)  # 1.
        except ThreadCountError as exc:
            if exc.index:
                self.commit(batch.split(exc.index)[0], samples, records)
            raise checks.THREAD_COUNT.error(exc.declared, exc.found,
                                            offset=int(batch.offset[exc.index]),
                                            record=self.records) from None
        key = segments.small_key_dtype(max(len(self.threads), 1))
        order = np.argsort(thr.astype(key), kind="stable")  # a radix sort for small keys
        errors: list[Failed] = []  # the first wins
        before, after, keep = self._depths(batch, thr, order, errors)  # 2.
        self._check_frames(batch, errors)  # 3.
        innermost = self._first_innermost_suffix(batch, before)
        if errors and min(errors)[0] < innermost:
            # the records before the bad one are committed, as CPython replays them
            failed = min(errors)
            index = failed.record
            # the threads are those of the records up to the bad one, as CPython meets them
            self.threads.truncate(known)
            if index:
                self.commit(batch.split(index)[0], samples, records, continued=continued)
            self.threads.rows_of(batch.interpreter_id[index:index + 1],
                                 batch.thread_id[index:index + 1])
            raise failed.check.error(failed.a, failed.b, offset=int(batch.offset[index]),
                                     record=self.records)
        if innermost < batch.size:  # (its errors, if any, are the sequential reader's)
            self.threads.truncate(known)  # (the sequential reader adds that record's)
            if innermost:
                self.commit(batch.split(innermost)[0], samples, records, continued=continued)
            return innermost
        last = segments.last_per_group(thr, order)  # each thread's last record
        change = batch.encoding != REPEAT
        stack = self.tree.add_records(change, batch.npush, batch.frames, thr, keep,  # 4.
                                      self.threads.node, self.threads.depth)
        stack = segments.group_forward_fill(thr, order, change, stack, self.threads.node)
        self.threads.node[thr[last]] = stack[last]
        self.threads.depth[thr[last]] = after[last]
        self._write(batch, thr, order, last, stack, samples, records, skip)  # 5. and 6.
        per_encoding = np.bincount(batch.encoding, minlength=4).tolist()
        per_encoding[REPEAT] -= skip
        self.stats.add(per_encoding, int(batch.status.size))
        self.records += batch.size
        return batch.size

    def commit_empty(self, batch: RecordBatch, samples: GrowingColumns | SampleCounts,
                     records: GrowingColumns) -> None:
        """:meth:`commit` for a batch of REPEATs that hold no sample
        (:func:`.long_records.empty_repeat_run`): they change no stack, depth or clock,
        so only their threads, record rows and counts are written."""
        try:
            self.threads.rows_of(batch.interpreter_id, batch.thread_id)
        except ThreadCountError as exc:
            if exc.index:
                self.commit_empty(batch.split(exc.index)[0], samples, records)
            raise checks.THREAD_COUNT.error(exc.declared, exc.found,
                                            offset=int(batch.offset[exc.index]),
                                            record=self.records) from None
        rows = records.append(batch.size)
        rows["offset"][...] = batch.offset
        rows["encoding"][...] = REPEAT
        rows["first_sample"][...] = samples.size
        self.stats.add([batch.size, 0, 0, 0], 0)
        self.records += batch.size

    # ------------------------------------------------------------------ 2. and 3.
    def _depths(
        self, batch: RecordBatch, thr: npt.NDArray[np.int32], order: npt.NDArray[np.intp],
        errors: list[Failed],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Vectorised: the depth of each record's thread before and after it (int64), the
        levels it keeps below its listed frames, and the shared-count and final-depth
        errors."""
        enc, arg, npush = batch.encoding, batch.arg, batch.npush
        # depth after = max(depth before + a, b), or b for FULL and SUFFIX (counts clamped
        # just past the cap: a larger one fails the same check)
        push = np.minimum(npush, MAX_DEPTH + 1)
        pop_push = enc == POP_PUSH
        a = np.where(pop_push, push - np.minimum(arg, MAX_DEPTH + 1), 0)
        b = np.where(enc == SUFFIX, np.minimum(arg, MAX_DEPTH + 1) + push, push)  # (REPEAT 0)
        reset = (enc == FULL) | (enc == SUFFIX)
        before, after = segments.decode_group_max_plus(thr, order, a, b, reset,
                                                       self.threads.depth)
        keep = np.where(enc == SUFFIX, arg, np.where(pop_push, np.maximum(before - arg, 0), 0))
        too_shared = (enc == SUFFIX) & (arg > before)
        bad = np.flatnonzero(too_shared)
        if bad.size:
            i = int(bad[0])
            errors.append(Failed.of(i, checks.SHARED_COUNT, arg[i], before[i]))
        final = keep + npush
        bad = np.flatnonzero((enc >= SUFFIX) & (final > MAX_DEPTH) & ~too_shared)
        if bad.size:
            i = int(bad[0])
            errors.append(Failed.of(i, checks.FINAL_DEPTH, final[i], MAX_DEPTH))
        return before, after, keep

    def _check_frames(self, batch: RecordBatch, errors: list[Failed]) -> None:
        """Vectorised: CPython's frame and string index checks of the listed frames (the
        frames a record keeps passed them when they were listed)."""
        f = batch.frames
        count = self.facts.frame_count
        if not f.size or (self._all_frames_ok and int(f.max()) < count):
            return
        out = f >= count
        bad = out.copy()
        if count and self.facts.frame_string_ok is not None:
            bad |= ~self.facts.frame_string_ok[np.minimum(f, count - 1)]
        idx = np.flatnonzero(bad)
        if idx.size:
            k = int(idx[0])
            i = int(np.searchsorted(np.cumsum(batch.npush), k, side="right"))
            errors.append(Failed.of(i, checks.FRAME_INDEX if out[k] else checks.STRING_INDEX,
                                    f[k]))

    @staticmethod
    def _first_innermost_suffix(batch: RecordBatch, before: npt.NDArray[np.int64]) -> int:
        """The first SUFFIX record with no new frame and a shared count between 0 and the
        depth, which keeps the *innermost* ``shared`` frames (see the module docs); the
        batch's size if there is none."""
        maybe = np.flatnonzero((batch.npush == 0) & (batch.encoding == SUFFIX))
        if not maybe.size:
            return batch.size
        arg = batch.arg[maybe]
        found = maybe[(arg > 0) & (arg < before[maybe])]
        return int(found[0]) if found.size else batch.size

    # ------------------------------------------------------------------ 5. and 6.
    def _write(self, batch: RecordBatch, thr: npt.NDArray[np.int32],
               order: npt.NDArray[np.intp], last: npt.NDArray[np.intp],
               stack: npt.NDArray[np.int32], samples: GrowingColumns | SampleCounts,
               records: GrowingColumns, skip: int = 0) -> None:
        """Vectorised: the batch's rows appended to the columns (*stack*: the node of each
        record's stack; *last*: each thread's last record; *skip*: leading records that
        continue one already there)."""
        rows = records.append(batch.size - skip)
        rows["offset"][...] = batch.offset[skip:]
        rows["encoding"][...] = batch.encoding[skip:]
        first = np.cumsum(batch.nsamp)
        first -= batch.nsamp
        if isinstance(samples, SampleCounts):  # counts only: no clocks, no sample rows
            rows["first_sample"][...] = first[skip:]
            rows["first_sample"] += samples.size
            samples.count(thr, stack, batch.nsamp, batch.status)
            return
        out = samples.append(int(batch.status.size))
        self._timestamps(batch, thr, order, last, first, out["timestamp_us"])
        rows["first_sample"][...] = first[skip:]
        rows["first_sample"] += samples.size - batch.status.size
        out["status"][...] = batch.status
        for ra, rb, sa, sb in sample_blocks(batch.nsamp):  # bounded temporaries
            out["thread"][sa:sb] = np.repeat(thr[ra:rb], batch.nsamp[ra:rb])
            out["stack"][sa:sb] = np.repeat(stack[ra:rb], batch.nsamp[ra:rb])

    def _timestamps(self, batch: RecordBatch, thr: npt.NDArray[np.int32],
                    order: npt.NDArray[np.intp], last: npt.NDArray[np.intp],
                    first: npt.NDArray[np.int64], out: npt.NDArray[np.uint64]) -> None:
        """Vectorised: the clock of every sample (uint64, mod 2**64) into *out*, and each
        thread's clock after the batch.

        One running sum over the deltas, each record's first delta adjusted so that the sum
        restarts from its thread's clock: the per-record sums and the per-thread clocks
        (a grouped cumsum) only cost work per record, not per sample."""
        if not out.size:
            return
        delta = out  # the deltas, summed in place
        delta[...] = batch.delta
        delta[batch.wide] = batch.wide_delta
        has = batch.nsamp > 0
        total = np.zeros(batch.size, np.uint64)
        # per-record sums from the one-byte deltas (an eighth of the memory to read), then
        # the rest of each wider one
        total[has] = np.add.reduceat(batch.delta, first[has], dtype=np.uint64)
        if batch.wide.size:
            np.add.at(total, np.searchsorted(first, batch.wide, side="right") - 1,
                      batch.wide_delta - batch.delta[batch.wide])
        clock = self.threads.clock
        after = segments.decode_group_cumsum(thr, total, clock, order=order)
        clock[thr[last]] = after[last]
        # the running sum reaches each record's start at the previous record's end clock
        start, end = after - total, after[has]
        reached = np.zeros(end.size, np.uint64)
        reached[1:] = end[:-1]
        delta[first[has]] += start[has] - reached
        np.cumsum(delta, out=out)
