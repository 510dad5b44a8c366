"""Stage 1 of the vectorised decoder: find the records of a window of the region at once.

Invariant: the records :func:`discover` returns are exactly those that
:func:`.scan.scan_record` would read one after the other from the window's start, their
syntax checked (varint lengths, u32 ranges, depth caps, status bytes); it stops before the
first record it cannot vouch for, and says why (:class:`Found`). Checks that need the
threads' state (thread count, shared counts, resulting depths, frame indices) are left to
:mod:`.commit`.

How: every varint of a record ends at a *terminator*, a byte below 0x80, and so does the
encoding byte; so the record starting at a position ends at the terminator whose rank
(:class:`~tachyon_format.kernels.terminators.TerminatorIndex`) follows from the record's
counts alone. Status bytes are terminators too, when below 0x80 (else the record goes to the
sequential reader).

1. *Candidates*: positions whose interpreter id is a known one (or the window start's), and
   whose encoding byte is 0..3; once threads are known, whose thread id is a known one.
2. *Ends*: for each candidate, its counts (the first body varints) give the rank of its last
   terminator, hence the position after it: where the next record would start.
3. *Chain*: the candidates reachable from the window start by those pointers
   (:func:`~tachyon_format.kernels.segments.chain_from_first`): the true records, if the
   first one is.
4. *Validation*, in order: complete, counts in range, no varint over 10 bytes, status
   bytes below 0x80, frame indices that fit a u32; the chain is cut at the first record
   that fails. (A SUFFIX without new frames over fewer shared ones than its thread's depth
   keeps the innermost frames: :mod:`.commit` finds it, and stops there.)
5. *Samples and frames* of the records kept: deltas, statuses and frame indices by rank.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import segments, terminators, varint
from tachyon_format.kernels.fixed import decode_fixed_at
from tachyon_format.schema.leb128 import U32_MAX

from .layout import COUNTS, ENCODING_AT, MAX_STACK_DEPTH, PREFIX_SIZE
from .layout import INTERPRETER_ID_AT as INTERPRETER_AT
from .records import FULL, POP_PUSH, REPEAT, SUFFIX, RecordBatch, sample_blocks

MAX_DEPTH = MAX_STACK_DEPTH
MAX_CANDIDATES = 1 << 17
"""Candidates per window at most (a dozen temporaries of 8 bytes each): a real window of 2 MB
holds 140 to 200 thousand (one every 10 to 14 bytes), a region of one repeated byte one per
byte; windows cut at this many were no slower on real files, and take a third less memory."""
DENSE_MAX_CANDIDATES = 1 << 15
"""Candidates per window at most where there are two every 3 bytes or more (a region of one
repeated byte: 17 for each record): a smaller window, whose temporaries (some 20 bytes a
candidate) and pointer-doubling rounds follow. Not for sparser ones (the empty REPEATs of
the hostile classes give 0.5 to 0.6 a byte, with a record every 15 bytes): smaller windows
cost them more time (a millisecond or so of work a window) than they save memory."""
CANDIDATE_BLOCK = 1 << 14
"""Window offsets whose candidacy is tested at once, at first (a byte of temporaries each);
the next blocks double, up to 16 times this."""
# per encoding, the counts of its body (layout.COUNTS): FULL one, SUFFIX and POP_PUSH two
# (the last one counts the frames); a REPEAT lists none
NUM_COUNTS = np.array([len(COUNTS.get(encoding, ())) for encoding in range(4)], np.int64)
if set(NUM_COUNTS[1:].tolist()) - {1, 2}:
    raise AssertionError("discovery reads bodies of one or two counts")

__all__ = ["Found", "KnownThreads", "discover"]


class KnownThreads(NamedTuple):
    """What discovery may know of the threads (a snapshot: it may run in a helper thread)."""

    interpreter_ids: list[int]  # every one seen so far
    thread_ids: npt.NDArray[np.uint64] | None  # sorted; None: candidates are not filtered


class Found(NamedTuple):
    """What :func:`discover` found in ``buf[start:stop]``."""

    batch: RecordBatch | None  # the records (None: not one)
    cut: int  # buffer position after the last of them
    # what stops the records at *cut*: "done" (the end of the data), "window" (the window's
    # end: the next record does not fit in it), "scalar" (the next record needs the
    # sequential reader)
    reason: Literal["done", "window", "scalar"]


def discover(
    buf: npt.NDArray[np.uint8],
    start: int,
    stop: int,
    *,
    base: int,
    at_end: bool,
    known: KnownThreads,
    order: Literal["<", ">"],
    empty_repeats: bool = False,
) -> Found:
    """Vectorised: the records from ``buf[start]`` on that lie in ``buf[start:stop]``, the
    window (*base*: region offset of ``buf[0]``; *at_end*: *stop* is the end of the data
    for good; *empty_repeats*: whether REPEATs of count 0 are candidates, see
    :func:`_candidates`). See the module docs."""
    w = buf[start:stop]
    n = w.size
    if n < PREFIX_SIZE:
        return Found(None, start, "scalar" if at_end else "window")
    # 1. candidates
    cand, limit = _candidates(w, known.interpreter_ids, order, empty_repeats=empty_repeats)
    if not cand.size or cand[0] != 0:
        return Found(None, start, "scalar")
    if cand.size > limit:  # a window of candidates at every byte or so: a shorter one, so
        n = int(cand[limit])  # that the temporaries stay bounded
        w, at_end = w[:n], False
        cand = cand[:np.searchsorted(cand, n - PREFIX_SIZE, side="right")]
    cand = _known_thread_candidates(w, cand, known.thread_ids, order)
    # 2. ends, from the counts: va is the REPEAT count or the delta, vb a body's first count
    # (FULL depth, SUFFIX shared, POP_PUSH pop), vc its second; t0 the rank of va's
    # terminator
    ti = terminators.TerminatorIndex.of(w)
    nt = ti.count
    t0 = ti.rank(cand + PREFIX_SIZE, ordered=True)  # (the encoding byte is a terminator)
    enc = w[cand + ENCODING_AT]
    at_a = _terminators_from(ti, cand + ENCODING_AT, t0 - 1, 1)
    va = ti.varints_ending_at(at_a)
    vb = np.zeros(cand.size, np.uint64)
    vc = np.zeros(cand.size, np.uint64)
    listed = np.flatnonzero(enc != REPEAT)
    at_b = _terminators_from(ti, at_a[listed], t0[listed], 2)  # (after the status byte)
    vb[listed] = ti.varints_ending_at(at_b)
    counted = np.flatnonzero(NUM_COUNTS[enc[listed]] == 2)
    vc[listed[counted]] = ti.varints_ending_at(
        _terminators_from(ti, at_b[counted], t0[listed[counted]] + 2, 1))
    counted = listed[counted]
    # the rank of each record's last terminator, after t0: REPEAT 2 per entry; else the
    # delta, the status, the counts, then the frames the last count counts (counts capped
    # at the terminators there are: a larger one is incomplete anyway)
    cap = np.uint64(nt)
    last = 2 * np.minimum(va, cap).astype(np.int64)
    last[listed] = 1 + NUM_COUNTS[enc[listed]] + np.minimum(vb[listed], cap).astype(np.int64)
    last[counted] = 1 + NUM_COUNTS[enc[counted]] + np.minimum(vc[counted], cap).astype(
        np.int64)
    last += t0
    complete = last < nt
    nxt = np.where(complete, ti.select(np.minimum(last, nt - 1)) + 1, n + 1)
    # 3. the chain from the window start
    chain = segments.chain_from_first(cand, nxt, n)
    c_pos, c_enc, c_t0 = cand[chain], enc[chain], t0[chain]
    c_a, c_b, c_c = va[chain], vb[chain], vc[chain]
    c_complete = complete[chain]
    # 4. validation
    ok = c_complete & np.where(c_enc == REPEAT, c_a <= U32_MAX,
                               np.where(c_enc == FULL, c_b <= MAX_DEPTH,
                                        (c_b <= U32_MAX) & (c_c <= MAX_DEPTH)))
    long_ends = ti.long_varint_ends()
    if long_ends.size:  # a record holding a varint of more than 10 bytes is not valid
        ok &= np.searchsorted(long_ends, c_pos) == np.searchsorted(long_ends, nxt[chain])
    del t0, va, vb, vc, last, complete
    r = segments.first_false(ok)
    # 5. samples (and status bytes >= 0x80), then frames (and indices above a u32)
    nsamp = np.where(c_enc[:r] == REPEAT, c_a[:r].astype(np.int64), 1)
    s_first = np.where(c_enc[:r] == REPEAT, c_t0[:r] + 1, c_t0[:r])  # rank of the 1st delta
    status, delta, wide, wide_delta = _sample_bytes(ti, s_first, nsamp)
    if status.size and status.max() >= 0x80:
        st_bad = np.flatnonzero(status >= 0x80)
        r = int(np.searchsorted(np.cumsum(nsamp), st_bad[0], side="right"))
    counts = NUM_COUNTS[c_enc[:r]]  # (the last count counts the frames)
    npush = np.where(c_enc[:r] == REPEAT, 0, np.where(counts == 1, c_b[:r].astype(np.int64),
                                                      c_c[:r].astype(np.int64)))
    f_first = c_t0[:r] + 2 + counts  # rank of the 1st frame: after delta, status, counts
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
        return Found(None, cut, why)
    pos = c_pos[:r]
    enc_r = c_enc[:r]
    narrow = wide < ns
    batch = RecordBatch(
        offset=pos + (base + start),
        encoding=enc_r,
        thread_id=decode_fixed_at(w, pos, np.dtype(order + "u8")),
        interpreter_id=decode_fixed_at(w, pos + INTERPRETER_AT, np.dtype(order + "u4")),
        nsamp=nsamp,
        arg=np.where(enc_r >= SUFFIX, c_b[:r], np.uint64(0)).astype(np.int64),
        npush=npush,
        delta=delta[:ns],
        status=status[:ns],
        frames=frames[:nf].astype(np.int64),
        wide=wide[narrow],
        wide_delta=wide_delta[narrow],
    )
    return Found(batch, cut, why)


def _candidates(w: npt.NDArray[np.uint8], interpreter_ids: list[int],
                order: Literal["<", ">"], *, empty_repeats: bool
                ) -> tuple[npt.NDArray[np.intp], int]:
    """Vectorised: offsets with a known interpreter id (or the window start's) and an
    encoding byte 0..3, by byte compares (no unaligned 32-bit loads), and how many of them
    the window takes (:data:`MAX_CANDIDATES`, or :data:`DENSE_MAX_CANDIDATES` where they are
    dense). In blocks of growing size (:data:`CANDIDATE_BLOCK`), up to the first that
    holds more than that: a window of candidates at every byte stops early, instead of
    making an index of 8 bytes for every byte of the window.

    A REPEAT whose count is 0 is legal but never written: unless *empty_repeats* (the
    region has shown one), it is left out, which drops the candidates inside the zero bytes
    of most thread and interpreter ids (three in four candidates of real files; a genuine
    one then breaks the chain and goes to the sequential reader)."""
    m = w.size - PREFIX_SIZE + 1
    endian = "little" if order == "<" else "big"
    ids = [bytes(w[INTERPRETER_AT:ENCODING_AT])]
    ids += [iid for iid in (i.to_bytes(4, endian) for i in interpreter_ids) if iid not in ids]
    found, total, a, limit = [], 0, 0, MAX_CANDIDATES
    while a < m and total <= limit:
        b = min(a + CANDIDATE_BLOCK * 2 ** min(len(found), 4), m)
        hit = None
        for iid in ids:
            same = w[INTERPRETER_AT + a:INTERPRETER_AT + b] == iid[0]
            for j in range(1, 4):  # (its other three bytes)
                same &= w[INTERPRETER_AT + j + a:INTERPRETER_AT + j + b] == iid[j]
            hit = same if hit is None else hit | same
        hit &= w[ENCODING_AT + a:ENCODING_AT + b] <= POP_PUSH
        if not empty_repeats:  # (the last offset of the window has no count byte to test)
            c = b - a - (b == m)
            hit[:c] &= ((w[ENCODING_AT + a:ENCODING_AT + a + c] != REPEAT)
                        | (w[ENCODING_AT + a + 1:ENCODING_AT + a + c + 1] != 0))
        found.append(np.flatnonzero(hit) + a)
        if total <= DENSE_MAX_CANDIDATES < total + found[-1].size:
            dense_at = found[-1][DENSE_MAX_CANDIDATES - total]  # (the first one past it)
            if 2 * dense_at < 3 * DENSE_MAX_CANDIDATES:  # two every 3 bytes or more
                limit = DENSE_MAX_CANDIDATES
        total += found[-1].size
        a = b
    cand = found[0] if len(found) == 1 else np.concatenate([np.zeros(0, np.intp), *found])
    return cand, limit


def _known_thread_candidates(w: npt.NDArray[np.uint8], cand: npt.NDArray[np.intp],
                             known: npt.NDArray[np.uint64] | None,
                             order: Literal["<", ">"]) -> npt.NDArray[np.intp]:
    """Vectorised: the candidates whose thread id is one of the sorted *known* (and the
    window's first), unless *known* is None. In real profiles about one candidate in two to
    four is a true record; a record of a new thread just ends the chain there, the
    sequential reader adds the thread, and the next window knows it."""
    if known is None:
        return cand
    if not known.size:  # (no thread known yet: the window's first record only)
        return cand[:1]
    tid = decode_fixed_at(w, cand, np.dtype(order + "u8"))
    at = np.minimum(np.searchsorted(known, tid), known.size - 1)
    keep = known[at] == tid
    keep[0] = True
    return cand[np.flatnonzero(keep)]


def _terminators_from(ti: terminators.TerminatorIndex, pos: npt.NDArray[np.intp],
                      rank: npt.NDArray[np.intp], steps: int) -> npt.NDArray[np.intp]:
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


def _sample_bytes(ti: terminators.TerminatorIndex, first: npt.NDArray[np.intp],
                  nsamp: npt.NDArray[np.int64]):
    """Vectorised per block of samples: the status byte and the last byte of the delta of
    every sample, whose delta terminators have ranks ``first[r] + 2 * i``; plus the samples
    whose deltas are longer than one byte (intp) and their values (uint64).

    Block by block, so that the position temporaries (8 bytes per sample) stay small and
    are reused, instead of fresh memory as large as the window's samples."""
    total = int(nsamp.sum())
    w = ti.buf
    status = np.empty(total, np.uint8)  # a status byte is the terminator after its delta
    delta = np.empty(total, np.uint8)
    wide, wide_delta = [np.zeros(0, np.intp)], [np.zeros(0, np.uint64)]
    for ra, rb, sa, sb in sample_blocks(nsamp):
        pos, multi = ti.select_runs(first[ra:rb], nsamp[ra:rb], 2)
        np.take(w[1:], pos, out=status[sa:sb])
        np.take(w, pos, out=delta[sa:sb])
        if multi.size:
            wide.append(multi + sa)
            wide_delta.append(varint.decode_uleb128_ending_at(w, pos[multi]))
    return status, delta, np.concatenate(wide), np.concatenate(wide_delta)
