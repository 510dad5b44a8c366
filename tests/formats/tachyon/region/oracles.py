"""Shared by the stage tests (discover, commit, encoder): regions written by the package's
record encoder from random thread-samples, and the records the sequential reader
(``region.scan.scan_record``) reads from a region, the oracle of the vectorised stages."""

from __future__ import annotations

import io
from typing import NamedTuple

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.encoder import RegionStream, SampleEncoder, uleb128
from tachyon_format.formats.tachyon.region.layout import ENCODING_AT, MAX_STACK_DEPTH, SUFFIX
from tachyon_format.formats.tachyon.region.records import RecordBatch, RegionFacts
from tachyon_format.formats.tachyon.region.scan import Incomplete, Record, scan_record
from tachyon_format.formats.tachyon.region.threads import ThreadTable
from tests.helpers.models import U64

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
ENCODED = settings(SETTINGS, max_examples=40)  # (encoder regions: deep stacks, more records)
"""The stage tests' hypothesis settings (and the fewer examples of regions the encoder writes)."""
NUM_FRAMES = 48  # frame indices the random stacks use: 0 .. NUM_FRAMES - 1
# the errors that need the threads' state (commit's checks); the others are syntax (discover's)
STATE_ERRORS = ("Shared count ", "Final stack depth ", "Invalid frame index",
                "Invalid string index", "Invalid thread count")


class Sample(NamedTuple):
    """One thread-sample as the encoder takes it: a stack of frame indices, innermost first."""

    thread_id: int
    interpreter_id: int
    stack: tuple[int, ...]
    timestamp_us: int
    status: int


# ---------------------------------------------------------------------- encoder regions
@st.composite
def stacks(draw) -> list[tuple[int, ...]]:
    """Stacks that make every record kind: shared outer frames, pure pushes and pops, fresh
    stacks, the empty one and 256 deep."""
    frames = st.integers(0, NUM_FRAMES - 1)
    pool: list[tuple[int, ...]] = [()]
    for _ in range(draw(st.integers(1, 7))):
        base = draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["push", "pop", "swap", "fresh", "fresh", "deep"]))
        if kind == "push":
            new = tuple(draw(st.lists(frames, min_size=1, max_size=4))) + base
        elif kind == "pop":
            new = base[draw(st.integers(0, len(base))):]
        elif kind == "swap":
            new = tuple(draw(st.lists(frames, max_size=3))) + base[draw(st.integers(0, len(base))):]
        elif kind == "fresh":
            new = tuple(draw(st.lists(frames, max_size=6)))
        else:
            new = tuple(i % NUM_FRAMES for i in range(draw(st.integers(250, 256))))
        pool.append(new[:256])
    return pool


@st.composite
def thread_samples(draw, *, max_samples: int = 40, statuses=None) -> list[Sample]:
    """Samples of one to four threads (some in a second interpreter), clocks that step by
    small and large amounts and wrap, statuses below 0x80 unless told."""
    pool = draw(stacks())
    threads = draw(st.lists(st.tuples(st.sampled_from([1, 2, 0x7FFF12345678, U64]),
                                      st.sampled_from([0, 0, 1, 0x80000000])),
                            min_size=1, max_size=4, unique=True))
    status = statuses if statuses is not None else st.integers(0, 0x7F)
    clock = draw(st.one_of(st.integers(0, 10**6), st.just(U64 - 3)))
    out = []
    for _ in range(draw(st.integers(0, max_samples))):
        clock = (clock + draw(st.one_of(st.integers(0, 100), st.integers(0, 2**20),
                                        st.sampled_from([2**35, U64])))) & U64
        tid, iid = draw(st.sampled_from(threads))
        stack = draw(st.sampled_from(pool))
        for _ in range(draw(st.sampled_from([1, 1, 1, 3]))):  # runs of one stack: REPEATs
            out.append(Sample(tid, iid, stack, clock, draw(status)))
    return out


def encoder_for(out: io.BytesIO, *, order: str = "<", start_time_us: int = 0) -> SampleEncoder:
    encoder = SampleEncoder(RegionStream(out, zstd=False), order, start_time_us)
    encoder.frame_index_bytes = [uleb128(i) for i in range(NUM_FRAMES)]
    return encoder


def encode(samples: list[Sample], *, order: str = "<", start_time_us: int = 0) -> bytes:
    """The sample region the record encoder writes for *samples* (uncompressed)."""
    out = io.BytesIO()
    encoder = encoder_for(out, order=order, start_time_us=start_time_us)
    for s in samples:
        encoder.encode(encoder.thread(s.thread_id, s.interpreter_id), s.stack, s.timestamp_us,
                       s.status)
    encoder.flush_all()
    encoder.region.close()
    return out.getvalue()


# ---------------------------------------------------------------------- sequential oracle
def permissive_facts(order: str = "<", **kwargs) -> RegionFacts:
    """Facts under which only syntax fails: any thread, any frame index below 2**31."""
    base = {"order": order, "start_time_us": 0, "thread_count": 1 << 30,
            "frame_count": 1 << 31}
    return RegionFacts.of(**{**base, **kwargs})


def scan_records(region: bytes, start: int = 0, stop: int | None = None, *,
                 facts: RegionFacts | None = None, final: bool = True,
                 ) -> tuple[list[Record], FormatError | None]:
    """The records :func:`scan_record` reads one after the other from ``region[start]`` (each
    thread's depth followed), up to *stop*, and the error it stops at (None at the end, or at
    an incomplete record when not *final*). Offsets are region offsets."""
    facts = facts or permissive_facts()
    data = bytes(region)
    end = len(data) if stop is None else stop
    threads = ThreadTable(facts.thread_count, facts.start_time_us)
    depth: dict[int, int] = {}
    out: list[Record] = []
    pos = start
    while pos < end:
        try:
            rec = scan_record(data, pos, end, final=final, facts=facts, threads=threads,
                              depth_of=lambda row: depth.get(row, 0), index=len(out))
        except Incomplete:
            return out, None
        except FormatError as exc:
            return out, exc
        depth[rec.row] = rec.depth
        out.append(rec)
        pos = rec.end
    return out, None


def read_one(region: bytes, offset: int, order: str = "<") -> Record | None:
    """The record at *offset* read for its syntax alone (a record that fails the threads'
    checks, in the state before it): its thread new, a SUFFIX's thread as deep as can be,
    any other thread empty; None if its syntax is bad."""
    deep = region[offset + ENCODING_AT] == SUFFIX
    facts = permissive_facts(order)
    try:
        return scan_record(bytes(region), offset, len(region), final=True, facts=facts,
                           threads=ThreadTable(facts.thread_count, 0),
                           depth_of=lambda row: MAX_STACK_DEPTH if deep else 0, base=0)
    except FormatError:
        return None


def is_state_error(exc: FormatError | None) -> bool:
    return exc is not None and exc.message.startswith(STATE_ERRORS)


def record_row(rec: Record) -> tuple:
    """What a record says, comparable with :func:`batch_rows`."""
    return (rec.offset, rec.encoding, rec.thread_id, rec.interpreter_id, rec.arg,
            list(rec.deltas), list(rec.statuses), list(rec.frames))


def batch_deltas(batch: RecordBatch) -> list[int]:
    """Every sample's delta, the wide ones put back."""
    delta = batch.delta.astype(np.uint64)
    delta[batch.wide] = batch.wide_delta
    return delta.tolist()


def batch_rows(batch: RecordBatch | None) -> list[tuple]:
    """Per record of a batch: what :func:`record_row` gives for it."""
    if batch is None:
        return []
    deltas, statuses, frames = batch_deltas(batch), batch.status.tolist(), batch.frames.tolist()
    rows, s, f = [], 0, 0
    for r in range(batch.size):
        ns, nf = int(batch.nsamp[r]), int(batch.npush[r])
        rows.append((int(batch.offset[r]), int(batch.encoding[r]), int(batch.thread_id[r]),
                     int(batch.interpreter_id[r]), int(batch.arg[r]), deltas[s:s + ns],
                     statuses[s:s + ns], frames[f:f + nf]))
        s, f = s + ns, f + nf
    return rows


def batch_of(rows: list[tuple], *, narrow_deltas: bool = False, filler: int = 0xA5,
             ) -> RecordBatch:
    """A batch of records given as :func:`record_row` tuples. *narrow_deltas*: the uint8 form
    discovery hands over, the deltas above 0xFF in ``wide`` (their byte in ``delta`` is
    *filler*: the batch's contract leaves it unspecified)."""
    deltas = [d for row in rows for d in row[5]]
    if narrow_deltas:
        wide = np.array([i for i, d in enumerate(deltas) if d > 0xFF], np.intp)
        delta = np.array([filler if d > 0xFF else d for d in deltas], np.uint8)
        extra = {"wide": wide, "wide_delta": np.array([deltas[i] for i in wide], np.uint64)}
    else:
        delta, extra = np.array(deltas, np.uint64), {}
    return RecordBatch(
        offset=np.array([r[0] for r in rows], np.int64),
        encoding=np.array([r[1] for r in rows], np.uint8),
        thread_id=np.array([r[2] for r in rows], np.uint64),
        interpreter_id=np.array([r[3] for r in rows], np.uint32),
        nsamp=np.array([len(r[5]) for r in rows], np.int64),
        arg=np.array([r[4] for r in rows], np.int64),
        npush=np.array([len(r[7]) for r in rows], np.int64),
        delta=delta, status=np.array([s for r in rows for s in r[6]], np.uint8),
        frames=np.array([f for r in rows for f in r[7]], np.int64), **extra)
