"""What the stages of the sample-region decoder hand each other.

* :class:`RegionFacts`: what the file's header and tables say, that records are checked
  against (byte order, start time, thread count, frame count, frames whose strings exist).
* :class:`RecordBatch`: consecutive records found in the region with their syntax checked
  (their varints, lengths and per-field ranges), by :mod:`.discover` (vectorised) or
  :mod:`.scan` (one record at a time); their meaning (threads, stacks, clocks, and the
  checks that need them) is :mod:`.commit`'s.
* :class:`ReadStats`: the counters of CPython's ``BinaryReader.get_stats()``.
* :func:`sample_blocks`: how per-sample work is cut into blocks of bounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import segments

from .layout import FULL, POP_PUSH, REPEAT, SUFFIX  # noqa: F401 (the stages' names)

MAX_FRAMES = 1 << 31
"""Frame indices the decoders take (below this): the stack columns hold them as int32."""
SAMPLE_BLOCK = 1 << 16  # samples per block of per-sample temporaries (8 bytes each: 512 KB)

__all__ = ["RecordBatch", "ReadStats", "RegionFacts", "sample_blocks"]


class RegionFacts(NamedTuple):
    """What the header and the tables tell the decoder of the sample region."""

    order: Literal["<", ">"]  # byte order of the record prefixes' ids
    start_time_us: int  # every thread's clock starts here (mod 2**64)
    thread_count: int  # (interpreter_id, thread_id) pairs allowed
    frame_count: int  # frame indices allowed: below this
    frame_string_ok: npt.NDArray[np.bool_] | None  # per frame: its strings exist (None: all)
    region_size: int | None = None  # bytes in the whole region, when known before decoding

    @classmethod
    def of(
        cls,
        *,
        order: Literal["<", ">"],
        start_time_us: int,
        thread_count: int,
        frame_count: int,
        frame_string_ok: npt.ArrayLike | None = None,
        region_size: int | None = None,
    ) -> RegionFacts:
        """Checked and normalised facts."""
        if order not in ("<", ">"):
            raise ValueError(f"order must be '<' or '>', not {order!r}")
        ok = None if frame_string_ok is None else np.asarray(frame_string_ok, dtype=bool)
        # frame indices are int32 in the stack columns: a table of more than 2**31 frames
        # (salvage assumes any u32; a strict table that large needs a 15 GB file) is cut there
        return cls(order, int(start_time_us) & 0xFFFFFFFFFFFFFFFF, int(thread_count),
                   min(int(frame_count), MAX_FRAMES), ok, region_size)

    @property
    def endian(self) -> Literal["little", "big"]:
        return "little" if self.order == "<" else "big"


@dataclass(eq=False)  # (numpy arrays: no field-wise ==)
class RecordBatch:
    """Consecutive records of the region, in order, with their syntax checked.

    Per record, per sample and per listed frame; the samples and frames of each record are
    consecutive, in the record's order."""

    offset: npt.NDArray[np.int64]  # per record: region offset of its first byte
    encoding: npt.NDArray[np.uint8]  # per record: REPEAT, FULL, SUFFIX or POP_PUSH
    thread_id: npt.NDArray[np.uint64]  # per record
    interpreter_id: npt.NDArray[np.uint32]  # per record
    nsamp: npt.NDArray[np.int64]  # per record: its samples (1 but for REPEAT)
    arg: npt.NDArray[np.int64]  # per record: SUFFIX ``shared``, POP_PUSH ``pop``, else 0
    npush: npt.NDArray[np.int64]  # per record: frames listed (FULL depth, SUFFIX new, push)
    delta: npt.NDArray  # per sample: uint64, or uint8 with the wider values in ``wide``
    status: npt.NDArray[np.uint8]  # per sample
    frames: npt.NDArray[np.int64]  # per listed frame: frame index, innermost first
    # the samples whose delta does not fit ``delta``'s dtype, in order, and their deltas
    wide: npt.NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, np.intp))
    wide_delta: npt.NDArray[np.uint64] = field(
        default_factory=lambda: np.zeros(0, np.uint64))

    @property
    def size(self) -> int:
        return int(self.offset.size)

    def split(self, k: int) -> tuple[RecordBatch, RecordBatch]:
        """The first *k* records and the rest, each with their samples and frames."""
        ns, nf = int(self.nsamp[:k].sum()), int(self.npush[:k].sum())
        w = int(np.searchsorted(self.wide, ns))
        head = RecordBatch(
            self.offset[:k], self.encoding[:k], self.thread_id[:k], self.interpreter_id[:k],
            self.nsamp[:k], self.arg[:k], self.npush[:k], self.delta[:ns], self.status[:ns],
            self.frames[:nf], self.wide[:w], self.wide_delta[:w])
        tail = RecordBatch(
            self.offset[k:], self.encoding[k:], self.thread_id[k:], self.interpreter_id[k:],
            self.nsamp[k:], self.arg[k:], self.npush[k:], self.delta[ns:], self.status[ns:],
            self.frames[nf:], self.wide[w:] - ns, self.wide_delta[w:])
        return head, tail


class ReadStats:
    """The counters of CPython's ``BinaryReader.get_stats()`` (docs/format/reader.md#get_stats),
    of the records a decoder has read; the writer's are
    :class:`~tachyon_format.formats.tachyon.encoder.WriteStats`."""

    def __init__(self) -> None:
        self.per_encoding = [0, 0, 0, 0]  # records, by encoding
        self.samples = 0

    def add(self, per_encoding: list[int], samples: int) -> None:
        """Count records (how many of each encoding) holding *samples* samples."""
        for encoding, count in enumerate(per_encoding):
            self.per_encoding[encoding] += count
        self.samples += samples

    def as_stats(self) -> dict[str, int]:
        repeat, full, suffix, pop_push = self.per_encoding
        changes = full + suffix + pop_push  # one sample each
        return {"repeat_records": repeat, "repeat_samples": self.samples - changes,
                "full_records": full, "suffix_records": suffix, "pop_push_records": pop_push,
                "total_records": repeat + changes, "total_samples": self.samples,
                "stack_reconstructions": changes}


def sample_blocks(nsamp: npt.NDArray[np.int64]) -> list[tuple[int, int, int, int]]:
    """``(first record, end record, first sample, end sample)`` of consecutive records
    holding about :data:`SAMPLE_BLOCK` samples each (:func:`segments.group_blocks`)."""
    return segments.group_blocks(nsamp, SAMPLE_BLOCK)
