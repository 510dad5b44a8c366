"""Decoder of the Tachyon sample region (docs/format/records.md) into columns and a stack prefix
tree: the driver of the vectorised stages.

:mod:`.scan` is the reference: a plain loop over the records, one at a time. This decoder
gives the same arrays (the tests compare them), a window of a few MB of the region at a time:

1. *Discovery* (:mod:`.discover`, vectorised, speculative): the records of the window, their
   syntax checked, up to the first one it cannot vouch for.
2. *Fallback* (:func:`.scan.scan_record`, sequential): a run of records from there, with
   CPython's exact checks and messages: new threads or interpreters, status bytes >= 0x80,
   malformed or truncated input.
3. *Commit* (:mod:`.commit`, vectorised): what the records mean (threads, depths, stacks in
   the :mod:`.stack_tree`, clocks), written into the caller's columns.

The first window (:data:`FIRST_WINDOW`) learns the threads; the others take :data:`WINDOW`.
With a helper thread (``threads``), step 1 of the next window runs while step 3 commits the
current one: numpy lets go of the GIL inside its loops, so the two overlap on a second CPU.
Input may come in chunks (:meth:`SampleDecoder.decode_into`): a record cut by the end of a
chunk waits for the next one.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.kernels.paths import scan_path

from . import replay_checks as checks
from .columns import GrowingColumns, SampleBatch
from .commit import Committer
from .counting import SampleCounts
from .discover import Found, KnownThreads, discover
from .interface import JOIN, RegionDecoder
from .layout import ENCODING_AT, PREFIX_SIZE
from .long_records import (
    EMPTY_REPEAT_SIZE,
    LONG_TAIL,
    LongRepeat,
    Malformed,
    empty_repeat_run,
    empty_repeat_size,
    repeat_entries,
    repeat_piece,
    start_long_repeat,
)
from .records import REPEAT, SUFFIX, RecordBatch
from .replay_checks import ReplayCheck
from .scan import Incomplete, Record, scan_record, stack_after
from .stack_tree import StackTree
from .threads import ThreadTable

WINDOW = 1 << 21  # region bytes per window (2 MB): temporaries of a few tens of MB
FIRST_WINDOW = 1 << 16  # until the threads are known (see discover.KnownThreads)
MAX_THREAD_STOPS = 16  # chain stops at new threads before candidates stop being filtered
SCALAR_RUN_MAX = 4096  # records per sequential run at most (runs double up to this)
LONG_STRETCH = 1 << 16  # a vectorised stretch this long (bytes) resets runs to 1 record

__all__ = ["SampleBatch", "SampleDecoder", "frames_of"]


class SampleDecoder(RegionDecoder):
    """Incremental decoder of a sample region; feed it with :meth:`decode` (chunks allowed).

    *threads*: whether a helper thread runs the next window's record discovery while a
    window is committed (see :meth:`_run`); None: when the process may use more than one
    CPU. The result is the same either way. *facts*: :class:`.interface.RegionDecoder`'s."""

    def __init__(self, *, threads: bool | None = None, **facts) -> None:
        super().__init__(**facts)
        self.start_time_us = self.facts.start_time_us
        self.thread_count = self.facts.thread_count
        self.frame_count = self.facts.frame_count
        # a helper thread for discovery (see _run); by default when there is a spare CPU
        self.discover_ahead = _spare_cpu() if threads is None else bool(threads)
        self._threads = ThreadTable(self.thread_count, self.start_time_us)
        self._tree = StackTree()
        self._committer = Committer(self.facts, self._threads, self._tree)
        # stream position
        self._tail = b""  # bytes of a record cut by the end of the last chunk
        self._tail_offset = 0  # region offset of the tail's first byte
        self._scalar_run = 1  # records the next sequential run reads at most
        self._window = FIRST_WINDOW
        self._filter_threads = True  # discovery filters candidates by known thread ids
        self._thread_stops = 0
        self._finished = False
        self._long: LongRepeat | None = None  # a REPEAT whose entries are still arriving
        # REPEATs of count 0 are candidates of discovery once one is met (never written by
        # CPython: in a file that has them, they would break every chain)
        self._empty_candidates = False

    # ------------------------------------------------------------------ public views
    @property
    def threads(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]:
        """(interpreter_id uint32, thread_id uint64) of every thread, first-appearance order."""
        return self._threads.ids()

    @property
    def stack_frame(self) -> npt.NDArray[np.int32]:
        """Frame-table index of each prefix-tree node."""
        return self._tree.frame

    @property
    def stack_parent(self) -> npt.NDArray[np.int32]:
        """Parent node of each node (the next frame outward), -1 for an outermost frame."""
        return self._tree.parent

    @property
    def total_samples(self) -> int:
        """Samples decoded so far."""
        return self._committer.stats.samples

    @property
    def stats(self) -> dict[str, int]:
        """Counters with the keys and meaning of CPython's ``BinaryReader.get_stats()``."""
        return self._committer.stats.as_stats()

    @staticmethod
    def sample_counts() -> SampleCounts:
        """Where ``decode_into`` counts the samples, instead of sample columns
        (``read(..., aggregate=True)``)."""
        return SampleCounts()

    # ------------------------------------------------------------------ driver
    def decode_into(
        self,
        data: bytes | memoryview | np.ndarray,
        *,
        final: bool,
        samples: GrowingColumns | SampleCounts,
        records: GrowingColumns,
    ) -> None:
        """Decode every complete record of (carried-over tail + *data*), appending the samples
        and records to the given columns (``first_sample`` counts rows of *samples*), or
        counts the samples into a :class:`.counting.SampleCounts`; the rest of *data* is
        kept for the next call. See the module docs."""
        if self._finished:
            raise ValueError("decoder already finished")
        new = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
        new = new.view(np.uint8).reshape(-1)
        tail = np.frombuffer(self._tail, np.uint8)
        base = self._tail_offset
        if tail.size and new.size > JOIN:  # the tail's record first, joined to JOIN bytes
            joined = np.concatenate([tail, new[:JOIN]])  # (not a copy of the whole chunk)
            used = self._decode(joined, base, False, samples, records)
            if used >= tail.size:
                new, base, tail = new[used - tail.size:], base + used, tail[:0]
            else:  # (a REPEAT longer than that: joined whole, as before)
                tail, base = tail[used:], base + used
        buf = np.concatenate([tail, new]) if tail.size else new
        pos = self._decode(buf, base, final, samples, records)
        self._tail = buf[pos:].tobytes()
        self._tail_offset = base + pos
        if final:
            self._finished = True

    def _decode(self, buf: npt.NDArray[np.uint8], base: int, final: bool,
                samples: GrowingColumns | SampleCounts, records: GrowingColumns) -> int:
        """Decode the complete records of *buf* (at region offset *base*); returns the
        position of the first byte left for the next call."""
        pos = 0
        if self._long is not None:
            pos = self._continue_long(buf, base, final, samples, records)
        if self._long is None:
            pos += self._run(buf[pos:], base + pos, final, samples, records)
            if not final and buf.size - pos > LONG_TAIL:  # only a REPEAT is this long
                pos += self._start_long(buf[pos:], base + pos, samples, records)
        return pos

    def _run(self, buf: npt.NDArray[np.uint8], base: int, final: bool,
             samples: GrowingColumns | SampleCounts, records: GrowingColumns) -> int:
        """Windows of discovery and commit, with sequential runs where discovery stops;
        returns the position where decoding stopped (the start of an incomplete record).

        With a helper thread, the next window's discovery runs while a window is committed.
        Discovery only reads a snapshot of the thread table (:meth:`_known`), to filter
        candidates: one that misses a thread added since stops its chain there, as for any
        new thread, so the records found never depend on the timing."""
        n = buf.size
        pos = 0
        window = self._window
        ahead: _Ahead | None = None  # a discovery under way
        while pos < n:
            empty = self._empty_repeats(buf, pos, base)
            if empty is not None:  # (never written by CPython: not worth a window)
                run, size = empty
                self._committer.commit_empty(run, samples, records)
                self._empty_candidates = True
                pos += run.size * size
                continue
            stop = min(n, pos + window)
            if ahead is not None and (ahead.start, ahead.stop) == (pos, stop):
                batch, cut, why = ahead.result()
            else:
                batch, cut, why = discover(buf, pos, stop, base=base, at_end=stop == n,
                                           known=self._known(), order=self.order,
                                           empty_repeats=self._empty_candidates)
            ahead = None
            if batch is not None:
                window = self._window = WINDOW  # (the first, smaller one learns the threads)
                if (self.discover_ahead and len(self._threads) and why == "window"
                        and pos < cut < n):
                    nxt = min(n, cut + window)
                    ahead = _Ahead(buf, cut, nxt, base=base, at_end=nxt == n,
                                   known=self._known(), order=self.order,
                                   empty_repeats=self._empty_candidates)
                done = self._committer.commit(batch, samples, records)
                if done < batch.size:  # a SUFFIX keeping its innermost frames: scanned
                    cut, why, ahead = int(batch.offset[done]) - base, "scalar", None
                if cut - pos > LONG_STRETCH:
                    self._scalar_run = 1
            if why == "window":
                if cut == pos:  # not one record fits: a larger window
                    window *= 2
                pos = cut
                continue
            pos = cut
            if why == "done" or pos >= n:
                break
            threads = len(self._threads)
            batch, after = self._scan_run(buf, pos, base, final)
            if batch is not None:
                self._committer.commit(batch, samples, records)
                self._empty_candidates |= bool(((batch.encoding == REPEAT)
                                             & (batch.nsamp == 0)).any())
            if len(self._threads) > threads:
                self._thread_stops += 1
                self._filter_threads = self._thread_stops <= MAX_THREAD_STOPS
            if after == pos:  # an incomplete record, and more data to come
                break
            pos = after
            self._scalar_run = min(self._scalar_run * 2, SCALAR_RUN_MAX)
        return pos

    def _empty_repeats(self, buf: npt.NDArray[np.uint8], pos: int, base: int):
        """A run of REPEATs of count 0 at *pos* and their size
        (:func:`.long_records.empty_repeat_run`, one window at most), or None; cheap byte
        tests first (the first record, and the encoding and last byte of the second)."""
        if pos + 2 * EMPTY_REPEAT_SIZE > buf.size or buf[pos + ENCODING_AT]:
            return None
        size = EMPTY_REPEAT_SIZE if buf[pos + PREFIX_SIZE] == 0 else empty_repeat_size(buf, pos)
        two = pos + 2 * size
        if not size or two > buf.size or buf[two - 1] or buf[pos + size + ENCODING_AT]:
            return None
        return empty_repeat_run(buf[:pos + WINDOW], pos, base=base, order=self.order)

    def _start_long(self, buf: npt.NDArray[np.uint8], base: int,
                    samples: GrowingColumns | SampleCounts, records: GrowingColumns) -> int:
        """The REPEAT at ``buf[0]``, too long for a chunk: its record (with no entry yet) and
        the entries there are; returns the bytes used (:mod:`.long_records`)."""
        head, p = start_long_repeat(buf, 0, base=base, facts=self.facts,
                                    index=self._committer.records)
        none = np.zeros(0, np.uint64)
        self._committer.commit(repeat_piece(head, none, none.astype(np.uint8)), samples,
                               records)
        self._long = head
        return p + self._continue_long(buf[p:], base + p, False, samples, records)

    def _continue_long(self, buf: npt.NDArray[np.uint8], base: int, final: bool,
                       samples: GrowingColumns | SampleCounts, records: GrowingColumns) -> int:
        """The next entries of the long REPEAT under way, committed as more of its record;
        returns the bytes used. At the end of the data, CPython's error if some are
        missing."""
        head = self._long
        assert head is not None

        def fail(check: ReplayCheck) -> FormatError:
            return check.error(offset=head.offset, record=head.index)

        try:
            deltas, statuses, used = repeat_entries(buf, head.left)
        except Malformed as exc:
            deltas, statuses, used = exc.args
            self._commit_long(head, deltas, statuses, samples, records)
            raise fail(checks.RLE_VARINT) from None
        self._commit_long(head, deltas, statuses, samples, records)
        left = head.left - deltas.size
        self._long = head._replace(left=left) if left else None
        if left and final:
            rest = buf[used:used + 10]
            ends = np.flatnonzero(rest < 0x80)
            raise fail(checks.RLE_END if ends.size else checks.RLE_VARINT)
        return used

    def _commit_long(self, head: LongRepeat, deltas, statuses, samples, records) -> None:
        if deltas.size:
            self._committer.commit(repeat_piece(head, deltas, statuses), samples, records,
                                   continued=True)

    def _known(self) -> KnownThreads:
        """What discovery may know of the threads: the interpreter ids, and the sorted
        thread ids while candidates are filtered by them (see MAX_THREAD_STOPS)."""
        filtering = self._filter_threads and len(self._threads)
        return KnownThreads(list(self._threads.interpreters),
                            self._threads.sorted_ids()[0] if filtering else None)

    def _scan_run(self, buf: npt.NDArray[np.uint8], pos: int, base: int,
                  final: bool) -> tuple[RecordBatch | None, int]:
        """Sequential: up to ``_scalar_run`` records from *pos* with :func:`.scan.scan_record`,
        as one batch (None if not one record is complete), and the position after them.

        A SUFFIX with no new frame that keeps the *innermost* shared frames
        (docs/format/records.md#suffix) goes into the batch listing its whole new stack
        (:mod:`.commit` builds stacks level by level from the outermost): from its thread's
        stack, followed through the run from the first such record of the thread."""
        data = memoryview(buf)  # (indexes as Python ints: faster than numpy scalars)
        depth: dict[int, int] = {}  # by thread row: depths after records scanned, not committed
        stacks: dict[int, list[int]] = {}  # by row, once needed: frames, innermost first
        scanned: list[Record] = []
        for _ in range(self._scalar_run):
            if pos >= buf.size:
                break
            try:
                rec = scan_record(
                    data, pos, buf.size, final=final, facts=self.facts, threads=self._threads,
                    depth_of=lambda row: depth.get(row, int(self._threads.depth[row])),
                    base=base, index=self._committer.records + len(scanned))
            except Incomplete:
                break
            before = depth.get(rec.row, int(self._threads.depth[rec.row]))
            innermost = (rec.encoding == SUFFIX and not rec.frames and 0 < rec.arg < before)
            if innermost and rec.row not in stacks:
                stacks[rec.row] = self._stack_before(rec.row, scanned)
            if rec.row in stacks:
                stacks[rec.row] = stack_after(stacks[rec.row], rec)
                if innermost:
                    rec = rec._replace(arg=0, frames=stacks[rec.row])
            depth[rec.row] = rec.depth
            scanned.append(rec)
            pos = rec.end
        if not scanned:
            return None, pos
        return _as_batch(scanned), pos


    def _stack_before(self, row: int, scanned: list[Record]) -> list[int]:
        """Scan: the frames of a thread's stack (innermost first) after the committed
        records and those *scanned* since."""
        frames = frames_of(self._tree.frame, self._tree.parent,
                           int(self._threads.node[row])).tolist()
        for rec in scanned:
            if rec.row == row:
                frames = stack_after(frames, rec)
        return frames


def _as_batch(scanned: list[Record]) -> RecordBatch:
    """The records read by :func:`.scan.scan_record` as a batch."""

    def per_record(name: str, dtype) -> np.ndarray:
        return np.array([getattr(r, name) for r in scanned], dtype)

    def flat(name: str, dtype) -> np.ndarray:
        return np.array([v for r in scanned for v in getattr(r, name)], dtype)

    return RecordBatch(
        offset=per_record("offset", np.int64), encoding=per_record("encoding", np.uint8),
        thread_id=per_record("thread_id", np.uint64),
        interpreter_id=per_record("interpreter_id", np.uint32),
        nsamp=np.array([len(r.deltas) for r in scanned], np.int64),
        arg=per_record("arg", np.int64),
        npush=np.array([len(r.frames) for r in scanned], np.int64),
        delta=flat("deltas", np.uint64), status=flat("statuses", np.uint8),
        frames=flat("frames", np.int64),
    )


# ---------------------------------------------------------------------- helpers
class _Ahead:
    """:func:`.discover.discover` of the window ``buf[start:stop]``, in a helper thread of
    its own: starting one per window costs some 0.1 ms against tens of ms of work, where a
    pool (``concurrent.futures``, which imports ``logging``) costs 6 to 25 ms to import in
    a fresh process, and care across ``fork``."""

    def __init__(self, buf: npt.NDArray[np.uint8], start: int, stop: int, **kwargs) -> None:
        self.start, self.stop = start, stop
        self._found: Found | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(buf, start, stop, kwargs),
                                        name="tachyon-format", daemon=True)
        self._thread.start()

    def _run(self, buf, start, stop, kwargs) -> None:
        try:
            self._found = discover(buf, start, stop, **kwargs)
        except BaseException as exc:  # (handed to the caller by result())
            self._error = exc

    def result(self) -> Found:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._found is not None
        return self._found


def _spare_cpu() -> bool:
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # (not on every platform)
        return (os.cpu_count() or 1) > 1


def frames_of(stack_frame: np.ndarray, stack_parent: np.ndarray, stack_id: int) -> np.ndarray:
    """Scan: frame indices of stack *stack_id*, innermost first (empty for -1): what
    :meth:`~tachyon_format.model.Stacks.frames_of` gives, from the tree's two columns."""
    return np.array(scan_path(stack_frame, stack_parent, stack_id), dtype=np.int32)
