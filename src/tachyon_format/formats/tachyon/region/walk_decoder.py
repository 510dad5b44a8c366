"""The record walk (:mod:`.walk`) behind the interface of the vectorised decoder
(:class:`.decoder.SampleDecoder`): chunks of the region in, columns or counts out.

* Chunks: the walk stops at a record cut by the end of a chunk (or inside a REPEAT's
  entries, which it carries on with); those few bytes (a stack change is at most 2,604
  bytes: 13 + 10 + 1 + 2 x 10 + 256 x 10, every varint at its longest, non-canonical form;
  a REPEAT entry 11) wait for the next chunk, joined to its first :data:`JOIN` bytes, so that
  no chunk is ever copied whole.
* Columns: the walk writes into the caller's :class:`.columns.GrowingColumns` and stops when
  they are full; they grow here (within their limit) and the walk goes on.
* Counts (``read(..., aggregate=True)``): the walk counts the samples per distinct (stack,
  thread, status) itself; :meth:`WalkDecoder.sample_counts` is their view for the reader.
* Errors: CPython's message, with the region offset and the number of the record, as a
  :class:`~tachyon_format.FormatError`; the samples of the records before it are in the
  columns.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import numpy.typing as npt

from .columns import GrowingColumns
from .interface import JOIN, RegionDecoder

__all__ = ["WalkCounts", "WalkDecoder"]


class WalkCounts:
    """The counts of an aggregating walk, where the reader expects a
    :class:`.counting.SampleCounts`."""

    def __init__(self, decoder: WalkDecoder) -> None:
        self._walk = decoder.walk

    @property
    def size(self) -> int:
        """Samples counted so far."""
        return self._walk.total_samples

    def finish(self) -> dict[str, np.ndarray]:
        return self._walk.counts()


class WalkDecoder(RegionDecoder):
    """Incremental decoder of a sample region by the record walk; the interface of
    :class:`.decoder.SampleDecoder` (*threads* is accepted and ignored: the walk is one
    pass). *facts*: :class:`.interface.RegionDecoder`'s."""

    def __init__(self, *, threads: bool | None = None, aggregate: bool = False,
                 module: ModuleType | None = None, **facts) -> None:
        if module is None:
            from . import walk as module
        super().__init__(**facts)
        self.aggregate = aggregate
        self._module = module
        ok = self.facts.frame_string_ok
        self.walk = module.RegionWalk(
            big_endian=self.order == ">", start_time_us=self.facts.start_time_us,
            thread_count=self.facts.thread_count, frame_count=self.facts.frame_count,
            frame_ok=None if ok is None or ok.all() else ok.astype(np.uint8),
            region_size=self.facts.region_size, aggregate=aggregate)
        self._nodes = GrowingColumns({"frame": np.int32, "parent": np.int32}, 1024)
        self._tail = b""  # the bytes of a record (or REPEAT entry) cut by the last chunk
        self._tail_offset = 0  # the region offset of its first byte
        self._finished = False

    # ------------------------------------------------------------------ public views
    @property
    def threads(self) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]:
        """(interpreter_id uint32, thread_id uint64) of every thread, first-appearance order."""
        return self.walk.threads()

    @property
    def stack_frame(self) -> npt.NDArray[np.int32]:
        """Frame-table index of each prefix-tree node."""
        return self._tree()[0]

    @property
    def stack_parent(self) -> npt.NDArray[np.int32]:
        """Parent node of each node (the next frame outward), -1 for an outermost frame."""
        return self._tree()[1]

    def _tree(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The tree's columns, copied out of the walk's node table once per node (a batch of
        ``iter_batches`` asks for them all again): views of growing arrays."""
        have = self._nodes.size
        frame, parent = self.walk.tree(have)
        if frame.size:
            self._nodes.reserve(frame.size)
            new = self._nodes.append(frame.size)
            new["frame"][...] = frame
            new["parent"][...] = parent
        return self._nodes.view("frame"), self._nodes.view("parent")

    @property
    def total_samples(self) -> int:
        """Samples decoded so far."""
        return self.walk.total_samples

    @property
    def stats(self) -> dict[str, int]:
        """Counters with the keys and meaning of CPython's ``BinaryReader.get_stats()``."""
        return self.walk.stats()

    def sample_counts(self) -> WalkCounts:
        """Where the samples are counted, for ``decode_into`` (the decoder must have been
        made with *aggregate*)."""
        if not self.aggregate:
            raise ValueError("this decoder was made to fill sample columns")
        return WalkCounts(self)

    # ------------------------------------------------------------------ driver
    def decode_into(self, data, *, final: bool, samples: GrowingColumns | WalkCounts,
                    records: GrowingColumns) -> None:
        """Decode every complete record of (carried-over tail + *data*), appending the samples
        and records to the given columns (or counting the samples); the rest of *data* is
        kept for the next call."""
        if self._finished:
            raise ValueError("decoder already finished")
        if isinstance(samples, WalkCounts) != self.aggregate:
            raise ValueError("samples must be this decoder's sample_counts() exactly when it"
                             " aggregates")
        view = _bytes_view(data)
        columns = None if self.aggregate else samples
        self._attach(columns, records)
        pos, base = 0, self._tail_offset
        if self._tail:
            head = len(self._tail)
            whole = len(view) <= JOIN  # then the joined bytes are all there is
            joined = memoryview(self._tail + bytes(view[:JOIN]))
            at = self._walk(joined, 0, len(joined) if whole else head, base, final and whole,
                            columns, records)
            if at < head and not whole:  # (never: a record is shorter than JOIN)
                joined = memoryview(self._tail + bytes(view))
                whole = True
                at = self._walk(joined, at, len(joined), base, final, columns, records)
            if whole:
                self._keep(joined, at, base, final)
                return
            pos, base = at - head, base + head
        at = self._walk(view, pos, len(view), base, final, columns, records)
        self._keep(view, at, base, final)

    # ------------------------------------------------------------------ helpers
    def _walk(self, data: memoryview, pos: int, stop: int, base: int, final: bool,
              columns: GrowingColumns | None, records: GrowingColumns) -> int:
        """Walk ``data`` from *pos* up to *stop* (or the end of what can be decoded), growing
        the columns as needed; returns where the walk stopped."""
        walk = self.walk
        while True:
            pos = walk.walk(data, pos, stop, base, final)
            self._sync(columns, records)
            why = walk.why
            if why == "samples_full":  # (the walk lets go of the arrays: grown in place)
                assert columns is not None
                walk.set_samples(None, 0)
                columns.reserve(1)
                self._attach(columns, None)
            elif why == "records_full":
                walk.set_records(None, 0)
                records.reserve(1)
                self._attach(None, records)
            elif why == "failed":
                raise walk.failure
            else:  # done, need_data, window
                return pos

    def _keep(self, data: memoryview, at: int, base: int, final: bool) -> None:
        """What is left of *data* from *at* waits for the next chunk; at the end, the walk
        lets go of the caller's columns (so that they are trimmed in place)."""
        self._tail = bytes(data[at:])
        self._tail_offset = base + at
        if final:
            self._finished = True
            self.walk.set_records(None, 0)
            if not self.aggregate:
                self.walk.set_samples(None, 0)

    def _attach(self, columns: GrowingColumns | None, records: GrowingColumns | None) -> None:
        """Point the walk at the columns' arrays (spare rows included)."""
        if columns is not None:
            self.walk.set_samples(columns.arrays(), columns.size)
        if records is not None:
            self.walk.set_records(records.arrays(), records.size)

    def _sync(self, columns: GrowingColumns | None, records: GrowingColumns) -> None:
        """The rows the walk filled, counted by the columns."""
        if columns is not None:
            columns.size = self.walk.samples_filled
        records.size = self.walk.records_filled


def _bytes_view(data) -> memoryview:
    """*data* (bytes, a memoryview, a uint8 array) as a flat memoryview of unsigned bytes."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view
