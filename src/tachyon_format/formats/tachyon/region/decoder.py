"""Decoder of the Tachyon sample region (docs/format/records.md) into columns and a stack prefix
tree.

Pipeline, per window of a few MB of the region:

1. *Varints* (vectorised): rank and select over the terminator bytes of the window
   (:class:`terminators.TerminatorIndex`, an index of the few continuation bytes), so that the
   n-th varint after any position is found without a per-byte pass.
2. *Records* (vectorised, speculative): every position whose interpreter id is a known one,
   whose encoding byte is 0..3 and (once threads are known) whose thread id is a known one is
   a candidate record start; the end of the record that would start there follows from
   terminator ranks. The true records are the chain from the window start, found by pruning
   candidates nobody points to, and checked (varint lengths, status bytes, u32 ranges, depth
   caps). Anything else (a new thread or interpreter, status bytes >= 0x80, malformed or
   truncated input) goes to :func:`.record_scan.scan_record`, a sequential reader with
   CPython's exact checks and messages (tier d).
3. *Semantics* (vectorised over records): thread rows, per-thread depths (a max-plus scan that
   reproduces POP_PUSH clamping), lazy frame checks, per-thread clocks (one grouped cumsum).
   Per-sample work runs in blocks of :data:`SAMPLE_BLOCK` samples and writes straight into the
   caller's columns: fresh memory per sample costs more than the arithmetic.
4. *Stacks* (:mod:`.stack_tree`): every pushed frame becomes a node of one prefix tree.

The first window (:data:`FIRST_WINDOW`) learns the threads; the others take :data:`WINDOW`.
With a helper thread (``threads``), step 2 of the next window runs while steps 3 and 4 commit
the current one: numpy lets go of the GIL inside its loops, so the two overlap on a second
CPU.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.kernels import segments, terminators, varint
from tachyon_format.kernels.varint import U32_MAX
from tachyon_format.schema import tachyon as spec

from .columns import GrowingColumns
from .scan import Incomplete, scan_record
from .stack_tree import MAX_DEPTH, StackTree

REPEAT, FULL, SUFFIX, POP_PUSH = (int(e) for e in spec.Encoding)
PREFIX_SIZE = spec.RECORD_PREFIX_SIZE
WINDOW = 1 << 21
FIRST_WINDOW = 1 << 16  # until the threads are known (see _known_thread_candidates)
MAX_THREAD_STOPS = 16  # chain stops at new threads before candidates stop being filtered
SAMPLE_BLOCK = 1 << 16  # samples per block of per-sample temporaries

__all__ = ["SampleBatch", "SampleDecoder", "decode_samples", "stack_frames"]


@dataclass
class SampleBatch:
    """Equal-length sample columns in replay() order, plus the record table of the batch."""

    timestamp_us: npt.NDArray[np.uint64]
    thread: npt.NDArray[np.int32]
    status: npt.NDArray[np.uint8]
    stack: npt.NDArray[np.int32]
    record_offset: npt.NDArray[np.int64]
    record_encoding: npt.NDArray[np.uint8]
    record_first_sample: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.timestamp_us.size)



@dataclass
class _Records:
    """Stage-2 input: parsed records of one batch (syntax already checked)."""

    offset: np.ndarray  # int64 region offsets
    encoding: np.ndarray  # uint8
    tid: np.ndarray  # uint64
    iid: np.ndarray  # uint32
    nsamp: np.ndarray  # int64 samples per record
    arg: np.ndarray  # int64 shared (SUFFIX) / pop (POP_PUSH), else 0
    npush: np.ndarray  # int64 frames listed (depth / new / push), 0 for REPEAT
    delta: np.ndarray  # per sample: uint64, or uint8 with the wider values in `wide`
    status: np.ndarray  # uint8 per sample
    frames: np.ndarray  # int64 per listed frame, innermost first per record
    # samples whose delta does not fit `delta`'s dtype, and their uint64 deltas
    wide: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))
    wide_delta: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))


class SampleDecoder:
    """Incremental decoder of a sample region; feed it with :meth:`decode` (chunks allowed).

    *threads*: whether a helper thread runs the next window's record discovery while a
    window is committed (see :meth:`_run`); None: when the process may use more than one
    CPU. The result is the same either way."""

    def __init__(
        self,
        *,
        order: Literal["<", ">"],
        start_time_us: int,
        thread_count: int,
        frame_count: int,
        frame_string_ok: npt.NDArray[np.bool_] | None = None,
        threads: bool | None = None,
    ) -> None:
        if order not in ("<", ">"):
            raise ValueError(f"order must be '<' or '>', not {order!r}")
        self.order = order
        # a helper thread for discovery (see _run); by default when there is a spare CPU
        self.discover_ahead = _spare_cpu() if threads is None else bool(threads)
        self.start_time_us = int(start_time_us) & 0xFFFFFFFFFFFFFFFF
        self.thread_count = int(thread_count)
        self.frame_count = int(frame_count)
        ok = np.ones(self.frame_count, bool) if frame_string_ok is None else frame_string_ok
        self._frame_ok = np.asarray(ok, dtype=bool)
        self._all_frames_ok = bool(self._frame_ok.all())  # then an index bound is the check
        self._tid_dtype = np.dtype(order + "u8")
        self._iid_dtype = np.dtype(order + "u4")
        # thread table and per-thread state (rows in first-appearance order)
        self._thread_row: dict[tuple[int, int], int] = {}
        self._tids: list[int] = []
        self._iids: list[int] = []
        self._clock = np.zeros(0, np.uint64)
        self._depth = np.zeros(0, np.int64)
        self._cur = np.zeros(0, np.int32)
        self._tree = StackTree()
        # stream position
        self._tail = b""
        self._tail_offset = 0
        self._records = 0
        self._known_iids: list[int] = []
        self._scalar_run = 1
        self._window = FIRST_WINDOW
        self._filter_threads = True
        self._thread_stops = 0
        # (thread ids sorted, their interpreter ids, their rows), see _known_threads
        self._known = (np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.int32))
        self._finished = False
        self.total_samples = 0
        self._counts = dict.fromkeys(
            ("repeat_records", "repeat_samples", "full_records", "suffix_records",
             "pop_push_records"), 0)

    # ------------------------------------------------------------------ public views
    @property
    def threads(self) -> tuple[np.ndarray, np.ndarray]:
        """(interpreter_id uint32, thread_id uint64) of every thread, first-appearance order."""
        return np.array(self._iids, dtype=np.uint32), np.array(self._tids, dtype=np.uint64)

    @property
    def stack_frame(self) -> np.ndarray:
        """Frame-table index of each prefix-tree node."""
        return self._tree.frame

    @property
    def stack_parent(self) -> np.ndarray:
        """Parent node of each node (the next frame outward), -1 for an outermost frame."""
        return self._tree.parent

    @property
    def stats(self) -> dict[str, int]:
        """Counters with the keys and meaning of CPython's ``BinaryReader.get_stats()``."""
        c = self._counts
        changes = c["full_records"] + c["suffix_records"] + c["pop_push_records"]
        return {**c, "total_records": c["repeat_records"] + changes,
                "total_samples": self.total_samples, "stack_reconstructions": changes}

    # ------------------------------------------------------------------ driver
    def decode(self, data: bytes | memoryview | np.ndarray, *, final: bool) -> SampleBatch:
        """Decode every complete record of (carried-over tail + *data*) into a new batch;
        ``record_first_sample`` counts from the batch's first sample."""
        samples, records = GrowingColumns.samples(), GrowingColumns.records()
        self.decode_into(data, final=final, samples=samples, records=records)
        s, r = samples.finish(), records.finish()
        return SampleBatch(**s, record_offset=r["offset"], record_encoding=r["encoding"],
                           record_first_sample=r["first_sample"])

    def decode_into(
        self,
        data: bytes | memoryview | np.ndarray,
        *,
        final: bool,
        samples: GrowingColumns,
        records: GrowingColumns,
    ) -> None:
        """Decode every complete record of (carried-over tail + *data*), appending the samples
        and records to the given columns (``first_sample`` counts rows of *samples*); the
        rest of *data* is kept for the next call. See the module docs."""
        if self._finished:
            raise ValueError("decoder already finished")
        new = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
        new = new.view(np.uint8).reshape(-1)
        tail = np.frombuffer(self._tail, np.uint8)
        buf = np.concatenate([tail, new]) if self._tail else new
        base = self._tail_offset
        self._out = (samples, records)
        try:
            pos = self._run(buf, base, final)
        finally:
            self._out = None
        self._tail = buf[pos:].tobytes()
        self._tail_offset = base + pos
        if final:
            self._finished = True

    def _run(self, buf: np.ndarray, base: int, final: bool) -> int:
        """Scan driver: speculative windows, with scalar fallback; returns the stop position.

        With a helper thread, the next window's discovery runs while a window is committed
        (numpy lets go of the GIL in its loops). Discovery only reads a snapshot of the
        thread table (:meth:`_threads_seen`), to filter candidates: one that misses a thread
        added since stops its chain there, as for any new thread, so the records found
        never depend on the timing."""
        n = buf.size
        pos = 0
        window = self._window
        ahead = None  # (start, stop, future) of a discovery under way
        while pos < n:
            stop = min(n, pos + window)
            if ahead is not None and ahead[:2] == (pos, stop):
                recs, cut, why = ahead[2].result()
            else:
                recs, cut, why = self._speculate(buf, pos, stop, base, stop == n,
                                                 self._threads_seen())
            ahead = None
            if recs is not None:
                window = self._window = WINDOW  # (the first, smaller one learns the threads)
                helper = helper_thread() if self.discover_ahead and self._tids else None
                if helper is not None and why == "window" and pos < cut < n:
                    nxt = min(n, cut + window)
                    ahead = (cut, nxt, helper.submit(self._speculate, buf, cut, nxt, base,
                                                     nxt == n, self._threads_seen()))
                self._commit(recs)
                self._scalar_run = 1 if cut - pos > 1 << 16 else self._scalar_run
            if why == "window":
                if cut == pos:
                    window *= 2
                pos = cut
                continue
            pos = cut
            if why == "done" or pos >= n:
                break
            threads = len(self._tids)
            recs, pos2 = self._scalar(buf, pos, base, final)
            if recs is not None:
                self._commit(recs)
            if len(self._tids) > threads:
                self._thread_stops += 1
                self._filter_threads = self._thread_stops <= MAX_THREAD_STOPS
            if pos2 == pos:  # incomplete tail, not final
                break
            pos = pos2
            self._scalar_run = min(self._scalar_run * 2, 4096)
        return pos

    # ------------------------------------------------------------------ stage 1, vectorised
    def _threads_seen(self) -> tuple[list[int], np.ndarray | None]:
        """What discovery may know of the threads: the interpreter ids, and the sorted
        thread ids while candidates are filtered by them (see _known_thread_candidates)."""
        filtering = self._filter_threads and self._tids
        return list(self._known_iids), self._known_threads()[0] if filtering else None

    def _speculate(self, buf, start, stop, base, at_end, seen):
        """Vectorised record discovery in ``buf[start:stop]``; returns (records, cut, reason).

        reason: "done" (consumed to the end), "window" (the next record does not fit in the
        window), "scalar" (the next record needs the sequential reader).
        """
        w = buf[start:stop]
        n = w.size
        if n < PREFIX_SIZE:
            return None, start, ("scalar" if at_end else "window")
        iids, tids = seen
        cand = self._candidates(w, iids)
        if not cand.size or cand[0] != 0:
            return None, start, "scalar"
        cand = self._known_thread_candidates(w, cand, tids)
        ti = terminators.TerminatorIndex.of(w)
        nt = ti.count
        # the encoding byte (0..3) is a terminator: the body's first varint has the next rank
        t0 = ti.rank(cand + PREFIX_SIZE, ordered=True)
        enc = w[cand + 12]

        # va: REPEAT count or the delta; vb: FULL depth or the shared/pop count; vc: new frames
        # (their terminators: mostly the very next bytes, else found by rank; ranks past the
        # end are clamped: those candidates are incomplete)
        at_a = _terminators_from(ti, cand + PREFIX_SIZE - 1, t0 - 1, 1)
        va = ti.varints_ending_at(at_a)
        vb = np.zeros(cand.size, np.uint64)
        vc = np.zeros(cand.size, np.uint64)
        listed = np.flatnonzero(enc != REPEAT)
        at_b = _terminators_from(ti, at_a[listed], t0[listed], 2)
        vb[listed] = ti.varints_ending_at(at_b)
        counted = np.flatnonzero(enc[listed] != FULL)
        vc[listed[counted]] = ti.varints_ending_at(
            _terminators_from(ti, at_b[counted], t0[listed[counted]] + 2, 1))
        counted = listed[counted]
        # ranks the record spans after t0 (capped: a huge count means an incomplete record)
        cap = np.uint64(nt)
        last = 2 * np.minimum(va, cap).astype(np.int64)
        last[listed] = 2 + np.minimum(vb[listed], cap).astype(np.int64)
        last[counted] = 3 + np.minimum(vc[counted], cap).astype(np.int64)
        last += t0
        complete = last < nt
        nxt = np.where(complete, ti.select(np.minimum(last, nt - 1)) + 1, n + 1)
        chain = _chain(cand, nxt, n)
        # chain: indices into cand, in order; validate its records
        c_pos = cand[chain]
        c_enc = enc[chain]
        c_t0 = t0[chain]
        c_a, c_b, c_c = va[chain], vb[chain], vc[chain]
        ok = complete[chain]
        ok &= np.where(c_enc == REPEAT, c_a <= U32_MAX,
                       np.where(c_enc == FULL, c_b <= MAX_DEPTH,
                                (c_b <= U32_MAX) & (c_c <= MAX_DEPTH)))
        long_ends = ti.long_varint_ends()
        if long_ends.size:  # a record holding a varint of more than 10 bytes is not valid
            c_nxt = nxt[chain]
            ok &= np.searchsorted(long_ends, c_pos) == np.searchsorted(long_ends, c_nxt)
        c_complete = complete[chain]
        del t0, va, vb, vc, last, complete
        r = _first_false(ok)
        nsamp = np.where(c_enc[:r] == REPEAT, c_a[:r].astype(np.int64), 1)
        s_first = np.where(c_enc[:r] == REPEAT, c_t0[:r] + 1, c_t0[:r])
        status, delta, wide, wide_delta = _sample_bytes(ti, s_first, nsamp)
        if status.size and status.max() >= 0x80:
            st_bad = np.flatnonzero(status >= 0x80)
            r = int(np.searchsorted(np.cumsum(nsamp), st_bad[0], side="right"))
        npush = np.where(c_enc[:r] == FULL, c_b[:r].astype(np.int64),
                         np.where(c_enc[:r] >= SUFFIX, c_c[:r].astype(np.int64), 0))
        f_first = np.where(c_enc[:r] == FULL, c_t0[:r] + 3, c_t0[:r] + 4)
        frames = ti.varints_at(*ti.select_runs(f_first, npush))
        f_bad = np.flatnonzero(frames > U32_MAX)
        if f_bad.size:
            r = int(np.searchsorted(np.cumsum(npush), f_bad[0], side="right"))
        nsamp, npush = nsamp[:r], npush[:r]
        ns, nf = int(nsamp.sum()), int(npush.sum())
        if r == 0:
            cut = start
        elif r < chain.size:
            cut = start + int(c_pos[r])
        else:
            cut = start + int(nxt[chain[-1]])
        if cut >= start + n:
            why = "done" if at_end else "window"
        elif at_end:
            why = "scalar"
        elif r < chain.size:
            why = "scalar" if c_complete[r] else "window"
        else:
            why = "window" if cut + PREFIX_SIZE > start + n else "scalar"
        if r == 0:
            return None, cut, why
        pos = c_pos[:r]
        enc_r = c_enc[:r]
        narrow = wide < ns
        recs = _Records(
            offset=pos + (base + start),
            encoding=enc_r,
            tid=_gather(w, pos, self._tid_dtype),
            iid=_gather(w, pos + 8, self._iid_dtype),
            nsamp=nsamp,
            arg=np.where(enc_r >= SUFFIX, c_b[:r], np.uint64(0)).astype(np.int64),
            npush=npush,
            delta=delta[:ns],
            wide=wide[narrow],
            wide_delta=wide_delta[narrow],
            status=status[:ns],
            frames=frames[:nf].astype(np.int64),
        )
        return recs, cut, why

    def _candidates(self, w: np.ndarray, known_iids: list[int]) -> np.ndarray:
        """Vectorised: offsets with a known interpreter id (or the window start's) and an
        encoding byte 0..3, by byte compares (no unaligned 32-bit loads).

        A REPEAT whose count is 0 is legal but never written; excluding it drops the
        candidates inside the zero bytes of most thread and interpreter ids (a genuine one
        breaks the chain and goes to the sequential reader)."""
        m = w.size - PREFIX_SIZE + 1
        endian = "little" if self.order == "<" else "big"
        iids = {bytes(w[8:12])} | {i.to_bytes(4, endian) for i in known_iids}
        hit = None
        for iid in iids:
            same = w[8:8 + m] == iid[0]
            for j in range(1, 4):
                same &= w[8 + j:8 + j + m] == iid[j]
            hit = same if hit is None else hit | same
        hit &= w[12:] <= 3
        hit[:-1] &= (w[12:-1] != REPEAT) | (w[13:] != 0)
        return np.flatnonzero(hit)

    def _known_thread_candidates(self, w: np.ndarray, cand: np.ndarray,
                                 known: np.ndarray | None) -> np.ndarray:
        """Vectorised: the candidates whose thread id is a known one (and the window's
        first), once threads are known. In real profiles about one candidate in two to four
        is a true record; a record of a new thread just ends the chain there, the sequential
        reader registers the thread, and the next window knows it. After
        :data:`MAX_THREAD_STOPS` such stops the filter is off for good (*known* is then
        None)."""
        if known is None:
            return cand
        tid = _gather(w, cand, self._tid_dtype)
        at = np.minimum(np.searchsorted(known, tid), known.size - 1)
        keep = known[at] == tid
        keep[0] = True
        return cand[np.flatnonzero(keep)]

    # ------------------------------------------------------------------ stage 1, scalar
    def _scalar(self, buf, pos, base, final):
        """Sequential fallback: a run of records with CPython's exact checks (tier d)."""
        end = buf.size
        depth: dict[int, int] = {}
        recs: list[dict] = []
        for _ in range(self._scalar_run):
            if pos >= end:
                break
            try:
                rec, pos = scan_record(self, buf, pos, end, final, base, depth, len(recs))
            except Incomplete:
                break
            recs.append(rec)
        if not recs:
            return None, pos

        def col(name, dtype):
            return np.array([x[name] for x in recs], dtype)

        def flat(name, dtype):
            return np.array([v for x in recs for v in x[name]], dtype)

        return _Records(
            offset=col("offset", np.int64), encoding=col("encoding", np.uint8),
            tid=col("tid", np.uint64), iid=col("iid", np.uint32),
            nsamp=col("nsamp", np.int64), arg=col("arg", np.int64),
            npush=col("npush", np.int64), delta=flat("delta", np.uint64),
            status=flat("status", np.uint8), frames=flat("frames", np.int64),
        ), pos

    # ------------------------------------------------------------------ stage 2
    def _error(self, message: str, offset: int, index: int) -> FormatError:
        return FormatError(message, offset=int(offset), record=self._records + int(index),
                           region=True)

    def _commit(self, r: _Records) -> SampleBatch:
        """Vectorised semantics of a batch of syntactically valid records; updates state."""
        nrec = r.offset.size
        thr = self._thread_rows(r)
        if isinstance(thr, tuple):  # a thread beyond the declared count: check the prefix
            index, message = thr
            if index:
                self._commit(_take(r, index))
            raise FormatError(message, offset=int(r.offset[index]), record=self._records,
                              region=True)
        errors: list[tuple[int, int, str]] = []  # (record, check order, message)
        key = segments.small_key_dtype(max(len(self._tids), 1))
        order = np.argsort(thr.astype(key), kind="stable")  # a radix sort for small keys
        depth_before, depth_after, keep = self._depths(r, thr, order, errors)
        self._check_frames(r, errors)
        if errors:
            index, _, message = min(errors)
            raise self._error(message, r.offset[index], index)
        rec_stack = self._tree.add_records(r.encoding != REPEAT, r.npush, r.frames, thr, keep)
        cur = self._carry_stacks(r, thr, rec_stack, order)
        last = _last_per_group(thr, order)
        self._depth[thr[last]] = depth_after[last]
        samples, records = self._out
        rows = records.append(nrec)
        rows["offset"][...] = r.offset
        rows["encoding"][...] = r.encoding
        first = np.cumsum(r.nsamp)
        first -= r.nsamp
        out = samples.append(int(r.status.size))
        self._timestamps(r, thr, order, last, first, out["timestamp_us"])
        rows["first_sample"][...] = first
        rows["first_sample"] += samples.size - r.status.size
        out["status"][...] = r.status
        for ra, rb, sa, sb in _sample_blocks(r.nsamp):  # bounded temporaries
            out["thread"][sa:sb] = np.repeat(thr[ra:rb], r.nsamp[ra:rb])
            out["stack"][sa:sb] = np.repeat(cur[ra:rb], r.nsamp[ra:rb])
        self._count(r)
        self._records += nrec

    def _timestamps(self, r: _Records, thr, order, last, first, out) -> None:
        """Vectorised: per-thread clocks of every sample (mod 2**64) into *out*.

        One running sum over the deltas, each record's first delta adjusted so that the sum
        restarts from its thread's clock: the per-record sums and the per-thread clocks
        (a grouped cumsum) only cost work per record, not per sample."""
        if not out.size:
            return
        delta = out  # the deltas, summed in place
        delta[...] = r.delta
        delta[r.wide] = r.wide_delta
        has = r.nsamp > 0
        total = np.zeros(r.nsamp.size, np.uint64)
        # per-record sums from the one-byte deltas (an eighth of the memory to read), then
        # the rest of each wider one
        total[has] = np.add.reduceat(r.delta, first[has], dtype=np.uint64)
        if r.wide.size:
            np.add.at(total, np.searchsorted(first, r.wide, side="right") - 1,
                      r.wide_delta - r.delta[r.wide])
        after = segments.decode_group_cumsum(thr, total, self._clock, order=order)
        self._clock[thr[last]] = after[last]
        # the running sum reaches each record's start at the previous record's end clock
        start, end = after - total, after[has]
        reached = np.zeros(end.size, np.uint64)
        reached[1:] = end[:-1]
        delta[first[has]] += start[has] - reached
        np.cumsum(delta, out=out)

    def _count(self, r: _Records) -> None:
        per_encoding = np.bincount(r.encoding, minlength=4).tolist()
        samples = int(r.status.size)
        changes = int(r.encoding.size) - per_encoding[REPEAT]  # one sample each
        c = self._counts
        c["repeat_records"] += per_encoding[REPEAT]
        c["repeat_samples"] += samples - changes
        c["full_records"] += per_encoding[FULL]
        c["suffix_records"] += per_encoding[SUFFIX]
        c["pop_push_records"] += per_encoding[POP_PUSH]
        self.total_samples += samples

    def _thread_rows(self, r: _Records):
        """Vectorised: thread row of each record, registering new threads in order."""
        rows = self._known_thread_rows(r)
        if rows is not None:
            return rows
        if r.iid.size and r.iid.min() == r.iid.max():
            uniq, first, inv = segments.unique_inverse(r.tid)
            keys = [(int(r.iid[0]), int(t)) for t in uniq]
        else:
            pair = np.empty(r.tid.size, dtype=[("i", "u4"), ("t", "u8")])
            pair["i"], pair["t"] = r.iid, r.tid
            uniq, first, inv = segments.unique_inverse(pair)
            keys = [(int(i), int(t)) for i, t in uniq.tolist()]
        rows = np.empty(len(keys), dtype=np.int32)
        fresh = []
        for j, key in enumerate(keys):
            row = self._thread_row.get(key)
            if row is None:
                fresh.append(j)
            else:
                rows[j] = row
        for j in sorted(fresh, key=lambda j: first[j]):
            if len(self._tids) >= self.thread_count:
                found = len(self._tids) + 1
                return (int(first[j]),
                        "Invalid thread count: sample data contains more unique threads than "
                        f"declared in header (declared {self.thread_count}, found at least "
                        f"{found})")
            rows[j] = self._new_thread(keys[j])
        return rows[inv.reshape(-1)]

    def _known_thread_rows(self, r: _Records) -> np.ndarray | None:
        """Vectorised: the rows when every record is from an already known thread (the
        usual case after the first window), else None (also when a thread id is shared by
        interpreters and the search lands on another one's: the general path sorts it out)."""
        if not self._tids or not r.tid.size:
            return None
        tids, iids, rows = self._known_threads()
        at = np.minimum(np.searchsorted(tids, r.tid), tids.size - 1)
        if not ((tids[at] == r.tid) & (iids[at] == r.iid)).all():
            return None
        return rows[at]

    def _known_threads(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The thread table sorted by thread id: (thread ids, interpreter ids, rows),
        rebuilt when threads were added."""
        if self._known[0].size != len(self._tids):
            tids = np.array(self._tids, np.uint64)
            order = np.argsort(tids, kind="stable")
            self._known = (tids[order], np.array(self._iids, np.uint32)[order],
                           order.astype(np.int32))  # a thread's row is its table index
        return self._known

    def _new_thread(self, key: tuple[int, int]) -> int:
        row = len(self._tids)
        self._thread_row[key] = row
        self._iids.append(key[0])
        self._tids.append(key[1])
        if key[0] not in self._known_iids:
            self._known_iids.append(key[0])
        if row >= self._clock.size:
            grow = max(16, 2 * self._clock.size)
            self._clock = np.resize(self._clock, grow)
            self._depth = np.resize(self._depth, grow)
            self._cur = np.resize(self._cur, grow)
        self._clock[row] = self.start_time_us
        self._depth[row] = 0
        self._cur[row] = -1
        self._tree.add_thread()
        return row

    def _depths(self, r: _Records, thr: np.ndarray, order: np.ndarray, errors: list):
        """Vectorised: stack depth before/after each record (max-plus scan per thread)."""
        enc = r.encoding
        n = enc.size
        push = np.minimum(r.npush, MAX_DEPTH + 1)
        arg = np.minimum(r.arg, MAX_DEPTH + 1)
        reset = (enc == FULL) | (enc == SUFFIX)
        a = np.where(enc == POP_PUSH, push - arg, 0)
        b = np.where(enc == POP_PUSH, push, np.where(enc == FULL, push, arg + push))
        b = np.where(enc == REPEAT, 0, b)
        t_s = thr[order]
        head = np.r_[True, t_s[1:] != t_s[:-1]] if n else np.zeros(0, bool)
        seg_start = head | reset[order]
        seg = np.cumsum(seg_start) - 1
        a_s = np.where(reset[order], 0, a[order])
        A = np.cumsum(a_s)
        seg_first = np.flatnonzero(seg_start)
        A -= np.repeat(A[seg_first] - a_s[seg_first], np.diff(np.r_[seg_first, n]))
        # initial value of each segment: carry-in depth, or the reset's own depth
        x0 = np.where(reset[order][seg_first], b[order][seg_first],
                      self._depth[t_s[seg_first]])
        v = np.where(seg_start & reset[order], np.int64(-(1 << 50)), b[order] - A)
        off = seg.astype(np.int64) << 42
        m = np.maximum.accumulate(v + off) - off
        d_s = np.maximum(np.repeat(x0, np.diff(np.r_[seg_first, n])) + A, A + m)
        after = np.empty(n, np.int64)
        after[order] = d_s
        prev_s = np.where(head, self._depth[t_s], np.r_[np.int64(0), d_s[:-1]])
        before = np.empty(n, np.int64)
        before[order] = prev_s
        keep = np.where(enc == SUFFIX, r.arg, np.where(
            enc == POP_PUSH, np.maximum(before - r.arg, 0), 0))
        bad = np.flatnonzero((enc == SUFFIX) & (r.arg > before))
        if bad.size:
            i = int(bad[0])
            errors.append((i, 1, f"Shared count {r.arg[i]} exceeds current stack depth "
                              f"{before[i]}"))
        final = keep + r.npush
        bad = np.flatnonzero((enc >= SUFFIX) & (final > MAX_DEPTH) & ~(
            (enc == SUFFIX) & (r.arg > before)))
        if bad.size:
            i = int(bad[0])
            errors.append((i, 2, f"Final stack depth {final[i]} exceeds capacity {MAX_DEPTH}"))
        return before, after, keep

    def _check_frames(self, r: _Records, errors: list) -> None:
        """Vectorised: CPython's lazy frame and string index checks for emitted stacks."""
        f = r.frames
        if not f.size or (self._all_frames_ok and int(f.max()) < self.frame_count):
            return
        out = f >= self.frame_count
        bad = out.copy()
        if self.frame_count:
            bad |= ~self._frame_ok[np.minimum(f, self.frame_count - 1)]
        idx = np.flatnonzero(bad)
        if idx.size:
            k = int(idx[0])
            i = int(np.searchsorted(np.cumsum(r.npush), k, side="right"))
            msg = f"Invalid frame index: {f[k]}" if out[k] else "Invalid string index in frame"
            errors.append((i, 3, msg))

    def _carry_stacks(self, r: _Records, thr, rec_stack, order) -> np.ndarray:
        """Vectorised: the stack in force at each record (REPEAT keeps the thread's stack)."""
        n = thr.size
        if not n:
            return rec_stack
        t_s = thr[order]
        change = (r.encoding != REPEAT)[order]
        head = np.r_[True, t_s[1:] != t_s[:-1]]
        idx = np.where(change | head, np.arange(n), 0)
        idx = np.maximum.accumulate(idx)
        val = np.where(change, rec_stack[order], -3)
        filled = val[idx]
        filled = np.where(filled == -3, self._cur[t_s], filled).astype(np.int32)
        out = np.empty(n, np.int32)
        out[order] = filled
        last = _last_per_group(thr, order)
        self._cur[thr[last]] = out[last]
        return out


# ---------------------------------------------------------------------- helpers
_HELPER: dict[int, ThreadPoolExecutor] = {}  # by process id


def helper_thread() -> ThreadPoolExecutor:
    """The process's helper thread, started on first use (again in a forked child, which
    inherits the executor but not its thread)."""
    pid = os.getpid()
    helper = _HELPER.get(pid)
    if helper is None:
        _HELPER.clear()
        helper = _HELPER[pid] = ThreadPoolExecutor(1, thread_name_prefix="tachyon-format")
    return helper


def _spare_cpu() -> bool:
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:  # (not on every platform)
        return (os.cpu_count() or 1) > 1


def _gather(w: np.ndarray, pos: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Vectorised: fixed-width integers of *dtype* at byte offsets *pos* of *w* (through an
    overlapping view with a one-byte stride: numpy handles the unaligned loads)."""
    if w.size < dtype.itemsize:
        return np.zeros(0, dtype.newbyteorder("="))
    at_every_byte = np.ndarray((w.size - dtype.itemsize + 1,), dtype=dtype, buffer=w,
                               offset=0, strides=(1,))
    return at_every_byte[pos].astype(dtype.newbyteorder("="))


def _terminators_from(ti: terminators.TerminatorIndex, pos, rank, steps: int) -> np.ndarray:
    """Vectorised: the terminator *steps* ranks after the one of rank *rank* at *pos*
    (``select(rank + steps)``, clamped to the last): the one *steps* bytes on when the
    bytes between are terminators too (single-byte varints, the usual case), else by
    rank."""
    w = ti.buf
    out = pos + steps
    ok = out < w.size
    for i in range(1, steps + 1):
        ok &= np.take(w, pos + i, mode="clip") < 0x80
    other = np.flatnonzero(~ok)
    if other.size:
        out[other] = ti.select(np.minimum(rank[other] + steps, ti.count - 1), ordered=True)
    return out


def _sample_blocks(nsamp: np.ndarray, block: int | None = None):
    """Sequential over blocks: ``(first record, end record, first sample, end sample)`` of
    consecutive records holding about *block* (:data:`SAMPLE_BLOCK`) samples each (a longer
    record alone)."""
    block = SAMPLE_BLOCK if block is None else block
    cum = np.cumsum(nsamp)
    total = int(cum[-1]) if cum.size else 0
    if total <= block:
        return [(0, nsamp.size, 0, total)]
    # each block ends with the record that reaches the next multiple of `block`
    ends = np.r_[np.searchsorted(cum, np.arange(block, total, block)) + 1, nsamp.size]
    ends = ends[np.r_[True, ends[1:] != ends[:-1]]].tolist()
    out, ra, sa = [], 0, 0
    for rb in ends:
        sb = int(cum[rb - 1])
        out.append((ra, rb, sa, sb))
        ra, sa = rb, sb
    return out


def _sample_bytes(ti: terminators.TerminatorIndex, first: np.ndarray, nsamp: np.ndarray):
    """Vectorised per block of samples: the status byte and the last byte of the delta of
    every sample, whose delta terminators have ranks ``first[r] + 2 * i``; plus the
    samples whose deltas are longer than one byte and their values.

    Block by block, so that the position temporaries (8 bytes per sample) stay small and
    are reused, instead of fresh memory as large as the window's samples."""
    total = int(nsamp.sum())
    w = ti.buf
    status = np.empty(total, np.uint8)  # a status byte is the terminator after its delta
    delta = np.empty(total, np.uint8)
    wide, wide_delta = [np.zeros(0, np.intp)], [np.zeros(0, np.uint64)]
    for ra, rb, sa, sb in _sample_blocks(nsamp):
        pos, multi = ti.select_runs(first[ra:rb], nsamp[ra:rb], 2)
        np.take(w[1:], pos, out=status[sa:sb])
        np.take(w, pos, out=delta[sa:sb])
        if multi.size:
            wide.append(multi + sa)
            wide_delta.append(varint.decode_uleb128_ending_at(w, pos[multi]))
    return status, delta, np.concatenate(wide), np.concatenate(wide_delta)


def _first_false(ok: np.ndarray) -> int:
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else int(ok.size)


def _chain(cand: np.ndarray, nxt: np.ndarray, n: int) -> np.ndarray:
    """Vectorised: indices of the candidates reachable from candidate 0 through *nxt*.

    Candidates that no live candidate points to are pruned until nothing changes; what is
    left is exactly the chain (every survivor has a surviving predecessor, so it is reachable).
    Membership is marked in a byte map of the window positions, and each round works on the
    survivors only. A long run of false candidates falls back to walking the pointers.
    """
    mark = np.zeros(n + 2, bool)
    index = np.arange(cand.size)
    for _ in range(8):
        mark[nxt] = True
        pointed = mark[cand]
        mark[nxt] = False
        pointed[0] = True
        if pointed.all():
            return index
        keep = np.flatnonzero(pointed)  # integer gathers beat boolean masks here
        index, cand, nxt = index[keep], cand[keep], nxt[keep]
    target = np.searchsorted(cand, nxt).tolist()  # where each pointer would land
    positions, pointers = cand.tolist(), nxt.tolist()
    walk = [0]
    while True:
        i = target[walk[-1]]
        if i >= len(positions) or positions[i] != pointers[walk[-1]]:
            return index[walk]
        walk.append(i)


def _last_per_group(keys: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Vectorised: index of the last occurrence of each distinct key, given a stable
    argsort *order* of *keys*."""
    k = keys[order]
    return order[np.flatnonzero(np.r_[k[1:] != k[:-1], True])] if k.size else order


def _take(r: _Records, k: int) -> _Records:
    """The first *k* records of a batch, with their samples and frames."""
    ns, nf = int(r.nsamp[:k].sum()), int(r.npush[:k].sum())
    wide = r.wide < ns
    return _Records(r.offset[:k], r.encoding[:k], r.tid[:k], r.iid[:k], r.nsamp[:k],
                    r.arg[:k], r.npush[:k], r.delta[:ns], r.status[:ns], r.frames[:nf],
                    r.wide[wide], r.wide_delta[wide])


def decode_samples(region, **decoder_kwargs) -> tuple[SampleBatch, SampleDecoder]:
    """Decode a whole sample region at once: ``decode(region, final=True)``."""
    dec = SampleDecoder(**decoder_kwargs)
    return dec.decode(region, final=True), dec


def stack_frames(stack_frame: np.ndarray, stack_parent: np.ndarray, stack_id: int) -> np.ndarray:
    """Scan: frame indices of stack *stack_id*, innermost first (empty for -1)."""
    out = []
    node = int(stack_id)
    while node >= 0:
        out.append(int(stack_frame[node]))
        node = int(stack_parent[node])
    return np.array(out, dtype=np.int32)
