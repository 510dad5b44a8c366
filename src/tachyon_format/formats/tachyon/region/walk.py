"""The sample region record by record: the reference decoder, and compiled, the fast walk.

One source for two uses (Cython's pure-Python mode: the annotations are its C types):

* run by the interpreter, it is the readable reference of what the records mean
  (docs/format/records.md) and of CPython's checks while replaying them, in CPython's order and
  with its messages (docs/format/reader.md#checks-during-replay, numbered as there below);
* compiled (``setup.py`` builds it where a C compiler is at hand), it is the fast walk behind
  ``read``, ``iter_batches`` and salvage: one pass over the bytes, each thread's stack
  evolving record by record. Where it is not compiled, the vectorised decoder
  (:mod:`.decoder`) runs instead, with the same results; :mod:`.engines` chooses.

The record layout comes from the declarations (:mod:`.layout`). A :class:`RegionWalk` keeps,
across calls of :meth:`RegionWalk.walk` over consecutive stretches of the region:

* the thread table: the (thread_id, interpreter_id) pairs in order of first appearance, each
  with its clock (µs, mod 2**64, from the header's ``start_time_us``), stack depth and
  current stack node;
* the stack prefix tree: node ``i`` is frame ``node_frame[i]`` over the stack of node
  ``node_parent[i]`` (-1: the empty stack). A record's new stack is found or added level by
  level from the outermost frame it changes, so nodes are numbered as met: records in order,
  each record's new frames outermost first;
* CPython's ``get_stats()`` counters, and a REPEAT whose entries are still to come.

It writes either the sample columns (timestamp, thread row, status, stack node) and the
record rows (region offset, encoding, first sample) into arrays the caller provides
(:meth:`RegionWalk.set_samples`, :meth:`RegionWalk.set_records`), stopping when they are
full; or, with *aggregate*, the number of samples of each distinct (stack, thread, status)
in order of first appearance, in arrays of its own.

Untrusted bytes: every read of the input is checked against its end before it is made, and
the compiled module keeps Cython's bounds checks on, so that a mistake here is an
``IndexError``, never a read or write out of bounds. Memory grows with the threads, nodes and
rows found (each at least one record of at least 2 bytes), never with a count the input
claims. The hash tables are seeded from the OS, so that input cannot aim at collisions.

The string and frame tables are scanned here too (:func:`scan_string_table`,
:func:`scan_frame_table`, behind ``formats/tachyon/tables.py``): entry by entry, each one's
start depends on every one before it, which a compiled loop walks at a few ns an entry.

Over 500 lines: one stateful loop over the records and the three tables it keeps (threads,
tree, counts), which compile into one extension; split, the parts would call each other
through Python.
"""

from __future__ import annotations

import os

import numpy as np

try:
    import cython
except ModuleNotFoundError:  # (interpreted without Cython: it is a build dependency only)
    from . import _cython_shadow as cython

from tachyon_format.errors import FormatError
from tachyon_format.schema import tachyon_values

from . import layout, replay_checks
from .replay_checks import CHECKS

COMPILED = cython.compiled
"""Whether this module runs compiled."""

# -- the layout, as C constants (derived from the declarations in .layout)
PREFIX_SIZE = cython.declare(cython.Py_ssize_t, layout.PREFIX_SIZE)
THREAD_ID_AT = cython.declare(cython.Py_ssize_t, layout.THREAD_ID_AT)
INTERPRETER_ID_AT = cython.declare(cython.Py_ssize_t, layout.INTERPRETER_ID_AT)
ENCODING_AT = cython.declare(cython.Py_ssize_t, layout.ENCODING_AT)
REPEAT = cython.declare(cython.int, layout.REPEAT)
FULL = cython.declare(cython.int, layout.FULL)
SUFFIX = cython.declare(cython.int, layout.SUFFIX)
POP_PUSH = cython.declare(cython.int, layout.POP_PUSH)
MAX_ENCODING = cython.declare(cython.int, layout.MAX_ENCODING)
NUM_COUNTS_FULL = cython.declare(cython.int, len(layout.COUNTS[layout.FULL]))
NUM_COUNTS_SUFFIX = cython.declare(cython.int, len(layout.COUNTS[layout.SUFFIX]))
NUM_COUNTS_POP_PUSH = cython.declare(cython.int, len(layout.COUNTS[layout.POP_PUSH]))
MAX_DEPTH = cython.declare(cython.longlong, layout.MAX_STACK_DEPTH)
MIN_ENTRY = cython.declare(cython.longlong, layout.MIN_REPEAT_ENTRY_SIZE)
OPCODE_NONE = cython.declare(cython.int, tachyon_values.OPCODE_NONE)

U32_MAX = cython.declare(cython.ulonglong, 0xFFFFFFFF)
U32_MASK = cython.declare(cython.longlong, 0xFFFFFFFF)
INT32_BIAS = cython.declare(cython.longlong, 0x80000000)
U64_MAX = cython.declare(cython.ulonglong, 0xFFFFFFFFFFFFFFFF)
MIX_1 = cython.declare(cython.ulonglong, 0xBF58476D1CE4E5B9)
MIX_2 = cython.declare(cython.ulonglong, 0x94D049BB133111EB)
GOLDEN = cython.declare(cython.ulonglong, 0x9E3779B97F4A7C15)

# -- varint results besides a position
TRUNCATED = cython.declare(cython.Py_ssize_t, -1)  # runs past the end of the data
OVERLONG = cython.declare(cython.Py_ssize_t, -2)  # a continuation bit on its 10th byte

# -- why walk() stopped (RegionWalk.why: the name in REASONS)
REASONS = ("done", "need_data", "samples_full", "records_full", "window", "failed")
"""done: every byte up to the end of the data is decoded; need_data: the record (or REPEAT
entry) at the position is cut by the end of data that is not final (call again with more);
samples_full, records_full: no room for another row (call again after
:meth:`RegionWalk.set_samples` or :meth:`RegionWalk.set_records`); window: the walk reached
the *stop* position it was given; failed: CPython's reader fails here
(:attr:`RegionWalk.failure` says why)."""
DONE = cython.declare(cython.int, 0)
NEED_DATA = cython.declare(cython.int, 1)
SAMPLES_FULL = cython.declare(cython.int, 2)
RECORDS_FULL = cython.declare(cython.int, 3)
WINDOW = cython.declare(cython.int, 4)
FAILED = cython.declare(cython.int, 5)

# -- CPython's checks (region/replay_checks.py): the walk records a check's code, its place in
# CHECKS, and up to two numbers where it fails, without the GIL; the text is made from them
TRUNCATED_DATA = cython.declare(cython.int, CHECKS.index(replay_checks.TRUNCATED_DATA))
THREAD_COUNT = cython.declare(cython.int, CHECKS.index(replay_checks.THREAD_COUNT))
UNKNOWN_ENCODING = cython.declare(cython.int, CHECKS.index(replay_checks.UNKNOWN_ENCODING))
RLE_COUNT_VARINT = cython.declare(cython.int, CHECKS.index(replay_checks.RLE_COUNT_VARINT))
RLE_COUNT = cython.declare(cython.int, CHECKS.index(replay_checks.RLE_COUNT))
RLE_VARINT = cython.declare(cython.int, CHECKS.index(replay_checks.RLE_VARINT))
RLE_END = cython.declare(cython.int, CHECKS.index(replay_checks.RLE_END))
SAMPLE_VARINT = cython.declare(cython.int, CHECKS.index(replay_checks.SAMPLE_VARINT))
SAMPLE_END = cython.declare(cython.int, CHECKS.index(replay_checks.SAMPLE_END))
VARINT = cython.declare(cython.int, CHECKS.index(replay_checks.VARINT))
STACK_DEPTH = cython.declare(cython.int, CHECKS.index(replay_checks.STACK_DEPTH))
SHARED_COUNT = cython.declare(cython.int, CHECKS.index(replay_checks.SHARED_COUNT))
FINAL_DEPTH = cython.declare(cython.int, CHECKS.index(replay_checks.FINAL_DEPTH))
FRAME_INDEX = cython.declare(cython.int, CHECKS.index(replay_checks.FRAME_INDEX))
STRING_INDEX = cython.declare(cython.int, CHECKS.index(replay_checks.STRING_INDEX))


@cython.cfunc
@cython.nogil
@cython.inline
@cython.exceptval(check=False)
def _mix(x: cython.ulonglong) -> cython.ulonglong:
    """A 64-bit finaliser (splitmix64's): every input bit moves every output bit."""
    x = ((x ^ (x >> 30)) * MIX_1) & U64_MAX
    x = ((x ^ (x >> 27)) * MIX_2) & U64_MAX
    return x ^ (x >> 31)


def _array(size: int, dtype) -> memoryview:
    """A new array, as a memoryview: typed memoryviews take it compiled, and interpreted it
    indexes as Python ints (a numpy array would give numpy scalars)."""
    return memoryview(np.empty(max(size, 1), dtype))


def _grown(old, used: int, size: int) -> memoryview:
    """A larger copy of an array's first *used* rows."""
    old = np.asarray(old)
    new = np.empty((size, *old.shape[1:]), old.dtype)
    new[:used] = old[:used]
    return memoryview(new)


def _resized(arrays: dict, name: str, rows: int, columns: int | None = None) -> memoryview:
    """``arrays[name]`` with *rows* rows (of *columns*, if given), the start of its memory
    kept (numpy's ``resize``: the first rows, where the columns stay): resized in place
    (``realloc``: the system moves a large array's pages without copying them, so the old
    and the new array never take memory at once) where nothing else refers to it, else a
    copy. The caller lets go of its memoryview of the array first."""
    array = arrays.pop(name)  # (the one reference: resize() refuses while others exist)
    shape = (max(rows, 1), *(array.shape[1:] if columns is None else (columns,)))
    try:
        array.resize(shape)
    except ValueError:
        copy = np.empty(shape, array.dtype)
        kept = min(copy.size, array.size)
        copy.reshape(-1)[:kept] = array.reshape(-1)[:kept]
        array = copy
    arrays[name] = array
    return memoryview(array)


@cython.final  # (methods called directly, not through a table: inlined where small)
@cython.cclass
class RegionWalk:
    """The state of one region's decoding, and :meth:`walk`, its decoder (module docs)."""

    # -- what the header and the tables say
    big_endian: cython.bint
    start_time_us: cython.ulonglong
    thread_count: cython.ulonglong
    frame_count: cython.ulonglong
    frame_ok: cython.const[cython.uchar][:]  # per frame: 1 if its strings exist
    check_strings: cython.bint
    region_size: cython.longlong  # bytes in the whole region; -1 when not known
    aggregate: cython.bint
    seed: cython.ulonglong
    # -- the thread table (rows in first-appearance order), and its hash table
    num_threads: cython.Py_ssize_t
    thread_id: cython.ulonglong[:]
    interpreter_id: cython.uint[:]
    clock: cython.ulonglong[:]
    depth: cython.longlong[:]
    node: cython.int[:]  # the current stack's node, -1 for the empty stack
    thread_slots: cython.int[:]  # row + 1 (0: free); size a power of 2
    # -- the prefix tree, its hash table, and each node's last child looked up
    num_nodes: cython.Py_ssize_t
    # per node, side by side for the lookups: parent, frame, and its child looked up last
    # and the one before (-1: none yet; their frames are in their own rows, which the next
    # level's lookup reads anyway); the root's (the empty stack's) in root_child_frame,
    # root_child. When the walk is over, only (parent, frame) stay (see _finish)
    nodes: cython.int[:, ::1]
    node_row: cython.int[:]  # aggregate: per node, its stack's first row (-1: none yet)
    root_child_frame: cython.longlong
    root_child: cython.int
    root_row: cython.int
    # hash table: (high 32 bits of the key's hash) << 32 | node + 1; 0: free
    node_slots: cython.ulonglong[:]
    # -- aggregate: rows of (stack, thread, status) with their counts, and a hash table
    num_rows: cython.Py_ssize_t
    row_stack: cython.int[:]
    row_thread: cython.int[:]
    row_status: cython.uchar[:]
    row_count: cython.longlong[:]
    row_hashed: cython.uchar[:]  # whether in the hash table (a stack's first row is not)
    num_hashed_rows: cython.Py_ssize_t
    row_slots: cython.int[:]
    # -- the caller's output columns, and how much of them is filled
    sample_timestamp: cython.ulonglong[:]
    sample_thread: cython.int[:]
    sample_status: cython.uchar[:]
    sample_stack: cython.int[:]
    num_samples_out: cython.Py_ssize_t
    record_offset: cython.longlong[:]
    record_encoding: cython.uchar[:]
    record_first: cython.longlong[:]
    num_records_out: cython.Py_ssize_t
    # -- get_stats() counters; samples is also the number of the next sample
    repeat_records: cython.longlong
    full_records: cython.longlong
    suffix_records: cython.longlong
    pop_push_records: cython.longlong
    samples: cython.longlong
    records: cython.longlong  # records met so far: the number of the next one
    # -- a REPEAT whose entries are still to come
    repeat_left: cython.ulonglong
    repeat_count: cython.ulonglong
    repeat_row: cython.Py_ssize_t
    repeat_offset: cython.longlong
    repeat_index: cython.longlong
    repeat_entries_at: cython.longlong  # region offset of its first entry
    repeat_checked: cython.bint  # its count was checked against the region's size
    repeat_status: cython.int  # aggregate: the status of the entry before, -1 none ...
    repeat_agg_row: cython.Py_ssize_t  # ... and its row
    # -- the last walk()
    stopped: cython.int
    error: cython.int  # when it FAILED: the check's index in CHECKS, ...
    error_a: cython.ulonglong  # ... the numbers it shows, ...
    error_b: cython.ulonglong
    error_offset: cython.longlong  # ... the region offset of the record ...
    error_record: cython.longlong  # ... and its number
    # -- the arrays that grow in place (see _resized), by name; finished: see _finish
    arrays: dict
    finished: cython.bint
    # -- scratch: one record's listed frames, and a stack's nodes by level
    listed: cython.ulonglong[:]
    levels: cython.int[:]
    value: cython.ulonglong  # the last varint read

    def __init__(self, *, big_endian: bool, start_time_us: int, thread_count: int,
                 frame_count: int, frame_ok=None, region_size: int | None = None,
                 aggregate: bool = False, seed: int | None = None) -> None:
        self.big_endian = big_endian
        self.start_time_us = start_time_us & 0xFFFFFFFFFFFFFFFF
        self.thread_count = thread_count
        self.frame_count = frame_count
        self.check_strings = frame_ok is not None
        self.frame_ok = memoryview(np.ascontiguousarray(
            np.zeros(1, np.uint8) if frame_ok is None else frame_ok, dtype=np.uint8))
        self.region_size = -1 if region_size is None else region_size
        self.aggregate = aggregate
        self.seed = (int.from_bytes(os.urandom(8), "little") if seed is None
                     else seed & 0xFFFFFFFFFFFFFFFF)
        self.num_threads = 0
        self.thread_id = _array(16, np.uint64)
        self.interpreter_id = _array(16, np.uint32)
        self.clock = _array(16, np.uint64)
        self.depth = _array(16, np.int64)
        self.node = _array(16, np.int32)
        self.thread_slots = memoryview(np.zeros(32, np.int32))
        self.num_nodes = 0
        self.arrays = {"nodes": np.empty((1024, 4), np.int32),
                       "node_row": np.full(1024 if aggregate else 1, -1, np.int32)}
        self.nodes = memoryview(self.arrays["nodes"])
        self.node_row = memoryview(self.arrays["node_row"])
        self.finished = False
        self.root_child_frame = -1
        self.root_child = -1
        self.root_row = -1
        self.node_slots = memoryview(np.zeros(2048, np.uint64))
        self.num_rows = 0
        self.arrays.update(row_stack=np.empty(1024, np.int32),
                           row_thread=np.empty(1024, np.int32),
                           row_status=np.empty(1024, np.uint8),
                           row_count=np.empty(1024, np.int64),
                           row_hashed=np.empty(1024, np.uint8))
        self.row_stack = memoryview(self.arrays["row_stack"])
        self.row_thread = memoryview(self.arrays["row_thread"])
        self.row_status = memoryview(self.arrays["row_status"])
        self.row_count = memoryview(self.arrays["row_count"])
        self.row_hashed = memoryview(self.arrays["row_hashed"])
        self.num_hashed_rows = 0
        self.row_slots = memoryview(np.zeros(2048, np.int32))
        self.set_samples(None, 0)
        self.set_records(None, 0)
        self.repeat_records = self.full_records = self.suffix_records = 0
        self.pop_push_records = self.samples = self.records = 0
        self.repeat_left = self.repeat_count = 0
        self.repeat_row = -1
        self.repeat_offset = self.repeat_index = self.repeat_entries_at = 0
        self.repeat_checked = True
        self.repeat_status = -1
        self.repeat_agg_row = 0
        self.value = 0
        self.stopped = DONE
        self.error = -1
        self.error_a = self.error_b = self.error_offset = self.error_record = 0
        self.listed = _array(layout.MAX_STACK_DEPTH + 1, np.uint64)
        self.levels = _array(layout.MAX_STACK_DEPTH + 1, np.int32)

    # ------------------------------------------------------------------ the caller's arrays
    def set_samples(self, columns, filled: int) -> None:
        """Write samples into *columns* (timestamp_us, thread, status, stack arrays of equal
        length), from row *filled* on; None: none (aggregate)."""
        if columns is None:
            columns = {"timestamp_us": np.zeros(1, np.uint64), "thread": np.zeros(1, np.int32),
                       "status": np.zeros(1, np.uint8), "stack": np.zeros(1, np.int32)}
            filled = 1
        self.sample_timestamp = memoryview(columns["timestamp_us"])
        self.sample_thread = memoryview(columns["thread"])
        self.sample_status = memoryview(columns["status"])
        self.sample_stack = memoryview(columns["stack"])
        self.num_samples_out = filled

    def set_records(self, columns, filled: int) -> None:
        """Write record rows into *columns* (offset, encoding, first_sample), from row
        *filled* on; None: none."""
        if columns is None:
            columns = {"offset": np.zeros(1, np.int64), "encoding": np.zeros(1, np.uint8),
                       "first_sample": np.zeros(1, np.int64)}
            filled = 1
        self.record_offset = memoryview(columns["offset"])
        self.record_encoding = memoryview(columns["encoding"])
        self.record_first = memoryview(columns["first_sample"])
        self.num_records_out = filled

    @property
    def samples_filled(self) -> int:
        return self.num_samples_out

    @property
    def records_filled(self) -> int:
        return self.num_records_out

    # ------------------------------------------------------------------ results
    def threads(self) -> tuple[np.ndarray, np.ndarray]:
        """(interpreter_id uint32, thread_id uint64) of every row."""
        n = self.num_threads
        return (np.asarray(self.interpreter_id)[:n].copy(),
                np.asarray(self.thread_id)[:n].copy())

    def tree(self, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(frame, parent) of the nodes of the prefix tree from *start* on (int32)."""
        nodes = np.asarray(self.nodes)[start:self.num_nodes]
        return np.ascontiguousarray(nodes[:, 1]), np.ascontiguousarray(nodes[:, 0])

    def counts(self) -> dict[str, np.ndarray]:
        """Aggregate: the rows in order of first appearance: ``stack``, ``thread``,
        ``status`` and ``values`` (the counts, shape ``(rows, 1)``)."""
        n = self.num_rows
        return {"stack": np.asarray(self.row_stack)[:n].copy(),
                "thread": np.asarray(self.row_thread)[:n].copy(),
                "status": np.asarray(self.row_status)[:n].copy(),
                "values": np.asarray(self.row_count)[:n].copy().reshape(n, 1)}

    def stats(self) -> dict[str, int]:
        """CPython's ``BinaryReader.get_stats()`` of the records walked so far."""
        changes = self.full_records + self.suffix_records + self.pop_push_records
        return {"repeat_records": self.repeat_records,
                "repeat_samples": self.samples - changes,
                "full_records": self.full_records, "suffix_records": self.suffix_records,
                "pop_push_records": self.pop_push_records,
                "total_records": self.repeat_records + changes,
                "total_samples": self.samples, "stack_reconstructions": changes}

    @property
    def total_samples(self) -> int:
        return self.samples

    @property
    def why(self) -> str:
        """Why the last :meth:`walk` stopped (one of :data:`REASONS`)."""
        return REASONS[self.stopped]

    @property
    def failure(self) -> FormatError:
        """CPython's error of the failing record (its check's, at its region offset)."""
        return CHECKS[self.error].error(self.error_a, self.error_b, offset=self.error_offset,
                                        record=self.error_record)

    @property
    def in_repeat(self) -> bool:
        """Whether a REPEAT's entries are still to come."""
        return self.repeat_left > 0

    @property
    def unfinished_repeat(self) -> tuple[int, int, int]:
        """(record offset, record number, entries still to come) of the REPEAT under way."""
        return self.repeat_offset, self.repeat_index, self.repeat_left

    # ------------------------------------------------------------------ the walk
    @cython.ccall
    def walk(self, data: cython.const[cython.uchar][:], pos: cython.Py_ssize_t,
             stop: cython.Py_ssize_t, base: cython.longlong,
             final: cython.bint) -> cython.Py_ssize_t:
        """Decode the records of ``data[pos:]`` (*base*: the region offset of ``data[0]``;
        *final*: the region ends with *data*) until one of the reasons of :attr:`why`;
        returns the position where it stopped (a record or REPEAT entry not decoded yet).

        A REPEAT's entries may stop anywhere (the walk carries on with them at the next
        call); any other record is decoded whole or not at all. Once the whole region is
        decoded (*final*, done), the walk lets go of its lookup tables (:meth:`_finish`)."""
        end: cython.Py_ssize_t = data.shape[0]
        if self.finished:
            raise ValueError("the walk is over: the whole region was decoded")
        with cython.nogil:  # (other threads run meanwhile: a zstd decompression, say)
            pos = self._walk(data, pos, stop, end, base, final)
        if final and self.stopped == DONE:
            self._finish()
        return pos

    def _finish(self) -> None:
        """No stack is looked up again: the hash tables, the caches of the last children
        and the nodes' first rows go, and the nodes (packed to their parent and frame) and
        rows are trimmed in place, before
        the caller copies them out (:meth:`tree`, :meth:`counts`). Where every sample has
        a stack of its own, those tables are as large as the tree itself."""
        self.finished = True
        self.node_slots = None
        self.node_slots = memoryview(np.zeros(1, np.uint64))
        self.row_slots = None
        self.row_slots = memoryview(np.zeros(1, np.int32))
        self._pack_nodes()
        self.nodes = None
        self.node_row = None
        self.nodes = _resized(self.arrays, "nodes", self.num_nodes, columns=2)
        self.node_row = _resized(self.arrays, "node_row", 0)
        if self.aggregate:
            self.row_stack = None
            self.row_thread = None
            self.row_status = None
            self.row_count = None
            self.row_hashed = None
            self.row_stack = _resized(self.arrays, "row_stack", self.num_rows)
            self.row_thread = _resized(self.arrays, "row_thread", self.num_rows)
            self.row_status = _resized(self.arrays, "row_status", self.num_rows)
            self.row_count = _resized(self.arrays, "row_count", self.num_rows)
            self.row_hashed = _resized(self.arrays, "row_hashed", 0)

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-3)
    def _walk(self, data: cython.const[cython.uchar][:], pos: cython.Py_ssize_t,
              stop: cython.Py_ssize_t, end: cython.Py_ssize_t, base: cython.longlong,
              final: cython.bint) -> cython.Py_ssize_t:
        """:meth:`walk`, without the GIL."""
        after: cython.Py_ssize_t
        while True:
            if self.repeat_left:
                pos = self._entries(data, pos, end, stop, base, final)
                if self.repeat_left:
                    return pos
            if pos >= end:
                self.stopped = DONE
                return pos
            if pos >= stop:
                self.stopped = WINDOW
                return pos
            if self.num_records_out >= self.record_offset.shape[0]:
                self.stopped = RECORDS_FULL
                return pos
            if not self.aggregate and self.num_samples_out >= self.sample_timestamp.shape[0]:
                self.stopped = SAMPLES_FULL
                return pos
            after = self._record(data, pos, end, base, final)
            if after < 0:
                return pos
            if not self.repeat_left and data[pos + ENCODING_AT] == REPEAT:  # (count 0)
                after = self._same_empty_repeats(data, pos, after, min(stop, end), base)
            pos = after

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-3)
    def _same_empty_repeats(self, data: cython.const[cython.uchar][:],
                            first: cython.Py_ssize_t, pos: cython.Py_ssize_t,
                            stop: cython.Py_ssize_t,
                            base: cython.longlong) -> cython.Py_ssize_t:
        """After the REPEAT of count 0 at ``data[first:pos]`` (just decoded by
        :meth:`_record`; its count in any form), the records from *pos* that are byte for
        byte the same (starting before *stop*, as many as the record rows hold): each has
        what :meth:`_record` gives it (its thread is known, its count 0), so only its row
        and the counters are written. A region of them (never written by CPython) costs a
        compare a record, not a decode."""
        size: cython.Py_ssize_t = pos - first
        k: cython.Py_ssize_t = self.num_records_out
        rows: cython.Py_ssize_t = self.record_offset.shape[0]
        end: cython.Py_ssize_t = data.shape[0]
        j: cython.Py_ssize_t
        at: cython.longlong = self.num_samples_out if not self.aggregate else self.samples
        last: cython.Py_ssize_t = first
        while pos < stop and pos + size <= end and k < rows:
            for j in range(size):
                if data[pos + j] != data[first + j]:
                    break
            else:
                self.record_offset[k] = base + pos
                self.record_encoding[k] = REPEAT
                self.record_first[k] = at
                k += 1
                last = pos
                pos += size
                continue
            break
        if last != first:
            self.records += (k - self.num_records_out)
            self.repeat_records += (k - self.num_records_out)
            self.num_records_out = k
            self.repeat_offset = base + last
            self.repeat_index = self.records - 1
            self.repeat_entries_at = base + last + size
        return pos

    # ------------------------------------------------------------------ one record
    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-3)  # (-1: stopped; else a position)
    def _record(self, data: cython.const[cython.uchar][:], pos: cython.Py_ssize_t,
                end: cython.Py_ssize_t, base: cython.longlong,
                final: cython.bint) -> cython.Py_ssize_t:
        """The record at ``data[pos]``, decoded and applied: the position after it (after its
        count, for a REPEAT: its entries follow), or -1 with :attr:`stopped` set (NEED_DATA,
        FAILED) and nothing applied."""
        offset: cython.longlong = base + pos
        tid: cython.ulonglong = 0
        iid: cython.ulonglong = 0
        k: cython.Py_ssize_t
        row: cython.Py_ssize_t
        enc: cython.int
        p: cython.Py_ssize_t
        delta: cython.ulonglong
        status: cython.int
        arg: cython.ulonglong = 0
        count: cython.ulonglong
        num_counts: cython.int
        d: cython.longlong
        kept: cython.longlong
        frame: cython.ulonglong
        left: cython.longlong
        node: cython.int
        # 1. the prefix: thread_id u64, interpreter_id u32, encoding u8
        if end - pos < PREFIX_SIZE:
            return self._short(final, TRUNCATED_DATA, offset, end - pos)
        for k in range(8):
            if self.big_endian:
                tid = (tid << 8) | data[pos + THREAD_ID_AT + k]
            else:
                tid |= cython.cast(cython.ulonglong, data[pos + THREAD_ID_AT + k]) << (8 * k)
        for k in range(4):
            if self.big_endian:
                iid = (iid << 8) | data[pos + INTERPRETER_ID_AT + k]
            else:
                iid |= cython.cast(cython.ulonglong, data[pos + INTERPRETER_ID_AT + k]) << (
                    8 * k)
        enc = data[pos + ENCODING_AT]
        # 2. one thread more than the header declares (checked before the encoding)
        row = self._thread_row(tid, iid)
        if row < 0:
            return self._fail(THREAD_COUNT, offset, self.thread_count, self.num_threads + 1)
        if enc > MAX_ENCODING:  # 3.
            return self._fail(UNKNOWN_ENCODING, offset, enc)
        p = pos + PREFIX_SIZE

        if enc == REPEAT:  # count, then count (delta_us, status) entries; the stack stays
            p = self._varint(data, p, end)
            if p == TRUNCATED and not final:
                return self._need_data()
            if p < 0 or self.value > U32_MAX:  # 4. (a u32: check 6 cannot fail)
                return self._fail(RLE_COUNT_VARINT, offset)
            count = self.value
            # 5. an entry takes at least 2 bytes: checked here when the region's size is
            # known, else when its end is (see _entries)
            if final or self.region_size >= 0:
                left = max((end - p) if final else (self.region_size - base - p), 0)
                if count > cython.cast(cython.ulonglong, left // MIN_ENTRY):
                    return self._fail(RLE_COUNT, offset, count, left // MIN_ENTRY)
            self._add_record(offset, enc)
            self.repeat_records += 1
            self.repeat_left = count
            self.repeat_count = count
            self.repeat_row = row
            self.repeat_offset = offset
            self.repeat_index = self.records - 1
            self.repeat_entries_at = base + p
            self.repeat_checked = final or self.region_size >= 0
            self.repeat_status = -1
            return p

        # 9. and 10. one sample: delta_us, status
        p = self._varint(data, p, end)
        if p == TRUNCATED and not final:
            return self._need_data()
        if p < 0:
            return self._fail(SAMPLE_VARINT, offset)
        delta = self.value
        if p >= end:
            return self._short(final, SAMPLE_END, offset)
        status = data[p]
        p += 1
        # then its counts (docs/format/sample-region.md): FULL depth; SUFFIX shared, new;
        # POP_PUSH pop, push; the last one counts the listed frames
        num_counts = (NUM_COUNTS_FULL if enc == FULL
                      else NUM_COUNTS_SUFFIX if enc == SUFFIX else NUM_COUNTS_POP_PUSH)
        count = 0
        for k in range(num_counts):
            p = self._varint(data, p, end)
            if p == TRUNCATED and not final:
                return self._need_data()
            if p < 0 or self.value > U32_MAX:  # 11.
                return self._fail(VARINT, offset)
            if k < num_counts - 1:
                arg = self.value
            else:
                count = self.value
        d = self.depth[row]
        if enc == FULL:
            if count > cython.cast(cython.ulonglong, MAX_DEPTH):  # 12.
                return self._fail(STACK_DEPTH, offset, count, MAX_DEPTH)
            kept = 0
        else:
            if enc == SUFFIX:
                if arg > cython.cast(cython.ulonglong, d):  # 13.
                    return self._fail(SHARED_COUNT, offset, arg, d)
                kept = cython.cast(cython.longlong, arg)
            else:  # a pop deeper than the stack is clamped
                kept = d - cython.cast(cython.longlong, arg) if arg < cython.cast(
                    cython.ulonglong, d) else 0
            if count > cython.cast(cython.ulonglong, MAX_DEPTH - kept):  # 14.
                return self._fail(FINAL_DEPTH, offset, kept + count, MAX_DEPTH)
        for k in range(cython.cast(cython.Py_ssize_t, count)):  # 11. the listed frames
            if p < end and data[p] < 0x80:  # (one byte)
                self.listed[k] = data[p]
                p += 1
                continue
            p = self._varint(data, p, end)
            if p == TRUNCATED and not final:
                return self._need_data()
            if p < 0 or self.value > U32_MAX:
                return self._fail(VARINT, offset)
            self.listed[k] = self.value
        # 15. and 16., when the stack is materialised for collect(): the kept frames passed
        # them when they were listed, so only the listed ones can fail
        for k in range(cython.cast(cython.Py_ssize_t, count)):
            frame = self.listed[k]
            if frame >= self.frame_count:
                return self._fail(FRAME_INDEX, offset, frame)
            if self.check_strings and not self.frame_ok[frame]:
                return self._fail(STRING_INDEX, offset, frame)
        # the record is whole and valid: its new stack (docs/format/records.md#record-types)
        if enc == FULL:
            node = self._full(row, cython.cast(cython.Py_ssize_t, count))
            d = cython.cast(cython.longlong, count)
            self.full_records += 1
        elif enc == SUFFIX:
            if count or arg == cython.cast(cython.ulonglong, d):  # new frames over `shared`
                node = self._push(self._ancestor(self.node[row], d - kept),
                                  cython.cast(cython.Py_ssize_t, count))
                d = kept + cython.cast(cython.longlong, count)
            else:  # none new: CPython keeps the `shared` *innermost* frames
                node = self._innermost(self.node[row], kept)
                d = kept
            self.suffix_records += 1
        else:  # POP_PUSH: `pop` innermost frames dropped (clamped), then the pushed ones
            node = self._push(self._ancestor(self.node[row], d - kept),
                              cython.cast(cython.Py_ssize_t, count))
            d = kept + cython.cast(cython.longlong, count)
            self.pop_push_records += 1
        self.node[row] = node
        self.depth[row] = d
        self._add_record(offset, enc)
        self._sample(row, delta, status)
        return p

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _entries(self, data: cython.const[cython.uchar][:], pos: cython.Py_ssize_t,
                 end: cython.Py_ssize_t, stop: cython.Py_ssize_t, base: cython.longlong,
                 final: cython.bint) -> cython.Py_ssize_t:
        """7. and 8. The entries of the REPEAT under way from ``data[pos]``, as far as the
        data, the window and the sample columns go: the position after the last one."""
        row: cython.Py_ssize_t = self.repeat_row
        delta: cython.ulonglong
        status: cython.int
        q: cython.Py_ssize_t
        left: cython.longlong
        while self.repeat_left:
            if pos >= stop and pos < end:
                self.stopped = WINDOW
                return pos
            if not self.aggregate and self.num_samples_out >= self.sample_timestamp.shape[0]:
                self.stopped = SAMPLES_FULL
                return pos
            pos = self._fast_entries(data, pos, min(stop, end), end)
            if not self.repeat_left or (pos >= stop and pos < end):
                continue
            if not self.aggregate and self.num_samples_out >= self.sample_timestamp.shape[0]:
                continue
            # an entry the fast loop leaves: cut by the end of the data, or malformed
            q = self._varint(data, pos, end)
            if q >= end or q == TRUNCATED:
                if not final:
                    self.stopped = NEED_DATA
                    return pos
                if not self.repeat_checked:  # 5., now that the region's end is known
                    left = base + end - self.repeat_entries_at
                    if self.repeat_count > cython.cast(cython.ulonglong, left // MIN_ENTRY):
                        self._fail(RLE_COUNT, self.repeat_offset, self.repeat_count,
                                   left // MIN_ENTRY)
                        self.error_record = self.repeat_index
                        return pos
            if q < 0:
                self._fail(RLE_VARINT, self.repeat_offset)
                self.error_record = self.repeat_index
                return pos
            if q >= end:
                self._fail(RLE_END, self.repeat_offset)
                self.error_record = self.repeat_index
                return pos
            delta = self.value
            status = data[q]
            pos = q + 1
            self._sample(row, delta, status)
            self.repeat_left -= 1
        return pos

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _fast_entries(self, data: cython.const[cython.uchar][:], pos: cython.Py_ssize_t,
                      stop: cython.Py_ssize_t, end: cython.Py_ssize_t) -> cython.Py_ssize_t:
        """The REPEAT's entries from ``data[pos]`` while each lies whole before *end*, starts
        before *stop* and fits the sample columns: a tight loop of what :meth:`_entries`
        and :meth:`_sample` do (counts: runs of one status counted at once). Leaves the
        rest (the end of the data, a malformed delta) to :meth:`_entries`; returns the
        position after the entries decoded."""
        row: cython.Py_ssize_t = self.repeat_row
        left: cython.ulonglong = self.repeat_left
        start: cython.ulonglong = left
        node: cython.int = self.node[row]
        clock: cython.ulonglong = self.clock[row]
        delta: cython.ulonglong
        byte: cython.ulonglong
        shift: cython.int
        q: cython.Py_ssize_t
        k: cython.Py_ssize_t = self.num_samples_out
        room: cython.Py_ssize_t = 0
        status: cython.int
        run_status: cython.int = -1
        run: cython.longlong = 0
        timestamp: cython.ulonglong[:] = self.sample_timestamp
        thread: cython.int[:] = self.sample_thread
        status_out: cython.uchar[:] = self.sample_status
        stack: cython.int[:] = self.sample_stack
        if not self.aggregate:
            room = timestamp.shape[0]
        while left and pos < stop and (self.aggregate or k < room):
            byte = data[pos]  # (pos < stop <= end)
            delta = byte
            q = pos + 1
            if byte >= 0x80:  # a delta of several bytes
                delta = byte & 0x7F
                shift = 7
                while q < end:
                    byte = data[q]
                    q += 1
                    delta = (delta | ((byte & 0x7F) << shift)) & U64_MAX
                    if byte < 0x80:
                        break
                    shift += 7
                    if shift >= 70:
                        break
                if byte >= 0x80:  # overlong, or cut by the end: _entries says which
                    break
            if q >= end:  # no status byte here
                break
            status = data[q]
            pos = q + 1
            left -= 1
            if self.aggregate:
                if status != run_status:
                    if run:
                        self._count(row, node, run_status, run)
                    run_status = status
                    run = 0
                run += 1
            else:
                clock = (clock + delta) & U64_MAX
                timestamp[k] = clock
                thread[k] = row
                status_out[k] = status
                stack[k] = node
                k += 1
        if self.aggregate:
            if run:
                self.repeat_left = left + 1  # (_count's cache keys on an entry under way)
                self._count(row, node, run_status, run)
        else:
            self.clock[row] = clock
            self.num_samples_out = k
        self.samples += start - left
        self.repeat_left = left
        return pos

    # ------------------------------------------------------------------ outputs
    @cython.cfunc
    @cython.nogil
    @cython.inline
    @cython.exceptval(-1)
    def _add_record(self, offset: cython.longlong, enc: cython.int) -> cython.int:
        """A record row (the caller checked there is room)."""
        k: cython.Py_ssize_t = self.num_records_out
        self.record_offset[k] = offset
        self.record_encoding[k] = enc
        self.record_first[k] = self.num_samples_out if not self.aggregate else self.samples
        self.num_records_out = k + 1
        self.records += 1
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.inline
    @cython.exceptval(-1)
    def _sample(self, row: cython.Py_ssize_t, delta: cython.ulonglong,
                status: cython.int) -> cython.int:
        """One sample of thread *row*: its clock moves on by *delta*; a sample row, or a count
        (the caller checked there is room)."""
        k: cython.Py_ssize_t
        clock: cython.ulonglong
        self.samples += 1
        if self.aggregate:  # (no clocks: counts have no timestamps)
            return self._count(row, self.node[row], status, 1)
        clock = (self.clock[row] + delta) & U64_MAX
        self.clock[row] = clock
        k = self.num_samples_out
        self.sample_timestamp[k] = clock
        self.sample_thread[k] = row
        self.sample_status[k] = status
        self.sample_stack[k] = self.node[row]
        self.num_samples_out = k + 1
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _count(self, row: cython.Py_ssize_t, stack: cython.int, status: cython.int,
               n: cython.longlong) -> cython.int:
        """Aggregate: *n* more samples of (stack, thread, status)."""
        r: cython.Py_ssize_t
        if row == self.repeat_row and status == self.repeat_status and self.repeat_left:
            self.row_count[self.repeat_agg_row] += n  # a REPEAT's run of one status
            return 0
        # a stack's first row hangs on its node; only its others go to the hash table
        r = self.root_row if stack < 0 else self.node_row[stack]
        if r < 0:
            r = self._new_row(row, stack, status, False)
            if stack < 0:
                self.root_row = r
            else:
                self.node_row[stack] = r
        elif self.row_thread[r] != row or self.row_status[r] != status:
            r = self._find_row(row, stack, status)
        self.row_count[r] += n
        if row == self.repeat_row and self.repeat_left:
            self.repeat_status = status
            self.repeat_agg_row = r
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _find_row(self, row: cython.Py_ssize_t, stack: cython.int,
                  status: cython.int) -> cython.Py_ssize_t:
        """The row of (stack, thread, status), added if new."""
        mask: cython.Py_ssize_t
        slot: cython.Py_ssize_t
        r: cython.Py_ssize_t
        mask = self.row_slots.shape[0] - 1
        slot = _mix(((cython.cast(cython.ulonglong, stack + 1) << 32) | cython.cast(
            cython.ulonglong, row)) ^ (cython.cast(cython.ulonglong, status) << 56)
            ^ self.seed) & mask
        while True:
            r = self.row_slots[slot] - 1
            if r < 0:
                r = self._new_row(row, stack, status, True)
                break
            if (self.row_stack[r] == stack and self.row_thread[r] == row
                    and self.row_status[r] == status):
                break
            slot = (slot + 1) & mask
        return r

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _new_row(self, row: cython.Py_ssize_t, stack: cython.int, status: cython.int,
                 hashed: cython.bint) -> cython.Py_ssize_t:
        """A new row of (stack, thread, status), in the hash table if *hashed*."""
        r: cython.Py_ssize_t = self.num_rows
        if r >= self.row_stack.shape[0]:
            with cython.gil:  # (by half, in place: see _grow_nodes)
                self.row_stack = None
                self.row_thread = None
                self.row_status = None
                self.row_count = None
                self.row_hashed = None
                self.row_stack = _resized(self.arrays, "row_stack", r + r // 2)
                self.row_thread = _resized(self.arrays, "row_thread", r + r // 2)
                self.row_status = _resized(self.arrays, "row_status", r + r // 2)
                self.row_count = _resized(self.arrays, "row_count", r + r // 2)
                self.row_hashed = _resized(self.arrays, "row_hashed", r + r // 2)
        self.row_stack[r] = stack
        self.row_thread[r] = row
        self.row_status[r] = status
        self.row_count[r] = 0
        self.row_hashed[r] = hashed
        self.num_rows = r + 1
        if hashed:
            self.num_hashed_rows += 1
            if 2 * self.num_hashed_rows > self.row_slots.shape[0]:
                self._rehash_rows()
            else:
                self._place_row(r)
        return r

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _place_row(self, r: cython.Py_ssize_t) -> cython.int:
        mask: cython.Py_ssize_t = self.row_slots.shape[0] - 1
        slot: cython.Py_ssize_t = _mix(
            ((cython.cast(cython.ulonglong, self.row_stack[r] + 1) << 32)
             | cython.cast(cython.ulonglong, self.row_thread[r]))
            ^ (cython.cast(cython.ulonglong, self.row_status[r]) << 56) ^ self.seed) & mask
        while self.row_slots[slot]:
            slot = (slot + 1) & mask
        self.row_slots[slot] = r + 1
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _rehash_rows(self) -> cython.int:
        r: cython.Py_ssize_t
        size: cython.Py_ssize_t = 4 * self.row_slots.shape[0]
        with cython.gil:
            self.row_slots = None  # (the rows hold all it held)
            self.row_slots = memoryview(np.zeros(size, np.int32))
        for r in range(self.num_rows):
            if self.row_hashed[r]:
                self._place_row(r)
        return 0

    # ------------------------------------------------------------------ threads
    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)
    def _thread_row(self, tid: cython.ulonglong, iid: cython.ulonglong) -> cython.Py_ssize_t:
        """The row of the pair, added (with a fresh clock and an empty stack) if new; -1 if
        new and the table is full (the header's thread_count)."""
        mask: cython.Py_ssize_t = self.thread_slots.shape[0] - 1
        slot: cython.Py_ssize_t = _mix(tid ^ ((iid * GOLDEN) & U64_MAX) ^ self.seed) & mask
        r: cython.Py_ssize_t
        while True:
            r = self.thread_slots[slot] - 1
            if r < 0:
                break
            if self.thread_id[r] == tid and self.interpreter_id[r] == iid:
                return r
            slot = (slot + 1) & mask
        if cython.cast(cython.ulonglong, self.num_threads) >= self.thread_count:
            return -1
        r = self.num_threads
        if r >= self.thread_id.shape[0]:
            with cython.gil:
                self.thread_id = _grown(self.thread_id, r, 2 * r)
                self.interpreter_id = _grown(self.interpreter_id, r, 2 * r)
                self.clock = _grown(self.clock, r, 2 * r)
                self.depth = _grown(self.depth, r, 2 * r)
                self.node = _grown(self.node, r, 2 * r)
        self.thread_id[r] = tid
        self.interpreter_id[r] = iid
        self.clock[r] = self.start_time_us
        self.depth[r] = 0
        self.node[r] = -1
        self.num_threads = r + 1
        self.thread_slots[slot] = r + 1
        if 2 * self.num_threads > self.thread_slots.shape[0]:
            self._rehash_threads()
        return r

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _rehash_threads(self) -> cython.int:
        r: cython.Py_ssize_t
        slot: cython.Py_ssize_t
        mask: cython.Py_ssize_t = 4 * self.thread_slots.shape[0] - 1
        with cython.gil:
            self.thread_slots = memoryview(np.zeros(mask + 1, np.int32))
        for r in range(self.num_threads):
            slot = _mix(self.thread_id[r] ^ ((self.interpreter_id[r] * GOLDEN) & U64_MAX)
                        ^ self.seed) & mask
            while self.thread_slots[slot]:
                slot = (slot + 1) & mask
            self.thread_slots[slot] = r + 1
        return 0

    # ------------------------------------------------------------------ the prefix tree
    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)  # (a node is -1 or more)
    def _full(self, row: cython.Py_ssize_t, count: cython.Py_ssize_t) -> cython.int:
        """The node of the stack a FULL record lists (``listed[:count]``, innermost first).
        The outer levels it shares with its thread's stack are that stack's nodes; from
        the first that differs, found or added level by level."""
        d: cython.Py_ssize_t = self.depth[row]
        node: cython.int = self.node[row]
        k: cython.Py_ssize_t = d
        while k > 0:  # the thread's stack by level: levels[k] at level k + 1
            k -= 1
            self.levels[k] = node
            node = self.nodes[node, 0]
        k = 0
        while k < d and k < count and self.nodes[self.levels[k], 1] == cython.cast(
                cython.longlong, self.listed[count - 1 - k]):
            k += 1
        return self._push(self.levels[k - 1] if k else -1, count - k)

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)  # (a node is -1 or more)
    def _push(self, base: cython.int, count: cython.Py_ssize_t) -> cython.int:
        """The node of the stack made of the listed frames (``listed[:count]``, innermost
        first) over the stack of node *base*: found or added level by level, outermost
        first."""
        k: cython.Py_ssize_t
        node: cython.int = base
        for k in range(count - 1, -1, -1):
            node = self._child(node, self.listed[k])
        return node

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)  # (a node is -1 or more)
    def _ancestor(self, node: cython.int, steps: cython.longlong) -> cython.int:
        """The node *steps* levels out from *node* (-1 past the outermost)."""
        while steps > 0 and node >= 0:
            node = self.nodes[node, 0]
            steps -= 1
        return node

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)  # (a node is -1 or more)
    def _innermost(self, node: cython.int, shared: cython.longlong) -> cython.int:
        """The stack of the *shared* innermost frames of the stack of *node*, as a stack of
        its own (a SUFFIX with no new frame: docs/format/records.md#suffix)."""
        k: cython.Py_ssize_t
        for k in range(shared):
            self.listed[k] = self.nodes[node, 1]
            node = self.nodes[node, 0]
        return self._push(-1, shared)

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-2)  # (a node is -1 or more)
    def _child(self, parent: cython.int, frame: cython.ulonglong) -> cython.int:
        """The node (parent, frame), added if new."""
        mask: cython.Py_ssize_t
        slot: cython.Py_ssize_t
        n: cython.Py_ssize_t
        h: cython.ulonglong
        tag: cython.ulonglong
        entry: cython.ulonglong
        if parent < 0:
            if self.root_child_frame == cython.cast(cython.longlong, frame):
                return self.root_child
        else:
            n = self.nodes[parent, 2]
            if n >= 0 and self.nodes[n, 1] == cython.cast(cython.longlong, frame):
                return n  # the same child as last time
            n = self.nodes[parent, 3]
            if n >= 0 and self.nodes[n, 1] == cython.cast(cython.longlong, frame):
                self.nodes[parent, 3] = self.nodes[parent, 2]  # (now the last one)
                self.nodes[parent, 2] = n
                return n
        h = _mix(((cython.cast(cython.ulonglong, parent + 1) << 32) | frame) ^ self.seed)
        tag = h >> 32
        mask = self.node_slots.shape[0] - 1
        slot = h & mask
        while True:
            entry = self.node_slots[slot]
            if not entry:
                n = self._new_node(parent, frame, slot, tag)
                break
            n = cython.cast(cython.Py_ssize_t, entry & U32_MAX) - 1
            if (entry >> 32) == tag and self.nodes[n, 0] == parent and self.nodes[
                    n, 1] == cython.cast(cython.longlong, frame):
                break
            slot = (slot + 1) & mask
        if parent < 0:
            self.root_child_frame = frame
            self.root_child = n
        else:
            self.nodes[parent, 3] = self.nodes[parent, 2]
            self.nodes[parent, 2] = n
        return n

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _new_node(self, parent: cython.int, frame: cython.ulonglong, slot: cython.Py_ssize_t,
                  tag: cython.ulonglong) -> cython.Py_ssize_t:
        n: cython.Py_ssize_t = self.num_nodes
        if n >= self.nodes.shape[0]:
            self._grow_nodes(n + n // 2)  # (by half: grown in place, what is unused counts)
        self.nodes[n, 0] = parent
        self.nodes[n, 1] = frame
        self.nodes[n, 2] = -1
        self.nodes[n, 3] = -1
        if self.aggregate:
            self.node_row[n] = -1
        self.num_nodes = n + 1
        self.node_slots[slot] = (tag << 32) | cython.cast(cython.ulonglong, n + 1)
        if 4 * self.num_nodes > 3 * self.node_slots.shape[0]:  # (at most 3/4 full)
            self._rehash_nodes()
        return n

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _grow_nodes(self, rows: cython.Py_ssize_t) -> cython.int:
        """Room for *rows* nodes, the node columns resized in place."""
        with cython.gil:
            self.nodes = None  # (their memoryviews go first: see _resized)
            self.nodes = _resized(self.arrays, "nodes", rows)
            if self.aggregate:
                self.node_row = None
                self.node_row = _resized(self.arrays, "node_row", rows)
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _pack_nodes(self) -> cython.int:
        """Node i's (parent, frame) moved to where pair i of an array of pairs is (in row
        i // 2, which is read already), the caches dropped: the first half of the rows'
        memory is then the tree, in place."""
        i: cython.Py_ssize_t
        parent: cython.int
        frame: cython.int
        for i in range(self.num_nodes):
            parent = self.nodes[i, 0]
            frame = self.nodes[i, 1]
            self.nodes[i >> 1, 2 * (i & 1)] = parent
            self.nodes[i >> 1, 2 * (i & 1) + 1] = frame
        return 0

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(-1)
    def _rehash_nodes(self) -> cython.int:
        """A hash table twice the size, filled from the nodes (the old one goes first: the
        nodes hold all it held)."""
        n: cython.Py_ssize_t
        slot: cython.Py_ssize_t
        h: cython.ulonglong
        mask: cython.Py_ssize_t = 2 * self.node_slots.shape[0] - 1
        with cython.gil:
            self.node_slots = None
            self.node_slots = memoryview(np.zeros(mask + 1, np.uint64))
        for n in range(self.num_nodes):
            h = _mix(((cython.cast(cython.ulonglong, self.nodes[n, 0] + 1) << 32)
                      | cython.cast(cython.ulonglong, self.nodes[n, 1])) ^ self.seed)
            slot = h & mask
            while self.node_slots[slot]:
                slot = (slot + 1) & mask
            self.node_slots[slot] = ((h >> 32) << 32) | cython.cast(cython.ulonglong, n + 1)
        return 0

    # ------------------------------------------------------------------ helpers
    @cython.cfunc
    @cython.nogil
    @cython.inline
    @cython.exceptval(-3)  # (TRUNCATED and OVERLONG are results)
    def _varint(self, data: cython.const[cython.uchar][:], p: cython.Py_ssize_t,
                end: cython.Py_ssize_t) -> cython.Py_ssize_t:
        """The ULEB128 at ``data[p:end]`` as CPython reads it (docs/format/primitives.md):
        its value into :attr:`value`, and the position after it; TRUNCATED or OVERLONG.
        At most 10 bytes; of a 10th byte only bit 0 counts (the value is mod 2**64);
        non-canonical forms are accepted."""
        value: cython.ulonglong = 0
        shift: cython.int = 0
        byte: cython.ulonglong
        while True:
            if p >= end:
                return TRUNCATED
            byte = data[p]
            p += 1
            value = (value | ((byte & 0x7F) << shift)) & U64_MAX
            if byte < 0x80:
                self.value = value
                return p
            shift += 7
            if shift >= 70:
                return OVERLONG

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(check=False)
    def _fail(self, error: cython.int, offset: cython.longlong, a: cython.ulonglong = 0,
              b: cython.ulonglong = 0) -> cython.Py_ssize_t:
        """Stop: CPython's reader fails on the record at *offset* with message *error* of
        :data:`CHECKS` (showing *a* and *b*)."""
        self.stopped = FAILED
        self.error = error
        self.error_a = a
        self.error_b = b
        self.error_offset = offset
        self.error_record = self.records
        return -1

    @cython.cfunc
    @cython.nogil
    @cython.exceptval(check=False)
    def _short(self, final: cython.bint, error: cython.int, offset: cython.longlong,
               a: cython.ulonglong = 0) -> cython.Py_ssize_t:
        """The record is cut short: wait for more data, or fail at the end of the region."""
        if not final:
            return self._need_data()
        return self._fail(error, offset, a)

    @cython.cfunc
    @cython.inline
    @cython.nogil
    @cython.exceptval(check=False)
    def _need_data(self) -> cython.Py_ssize_t:
        self.stopped = NEED_DATA
        return -1


# ---------------------------------------------------------------------- the file's tables
# The string and frame tables are read entry by entry too (an entry's start depends on the
# lengths of all before it); they live here because this is the one compiled module.
# (formats/tachyon/tables.py calls them, docs/format/tables.md says what an entry is.)

@cython.cfunc
@cython.nogil
@cython.inline
@cython.exceptval(check=False)
def _u32_varint(data: cython.const[cython.uchar][::1], p: cython.Py_ssize_t,
                end: cython.Py_ssize_t) -> cython.longlong:
    """The ULEB128 at ``data[p:end]`` read as a u32 field as CPython reads one: ``value << 4 |
    length``; -1 where it runs into *end*, is longer than 10 bytes or exceeds u32 (its value
    taken mod 2**64 first, so a 10th byte counts for its bit 0 only)."""
    value: cython.ulonglong = 0
    shift: cython.int = 0
    byte: cython.ulonglong
    q: cython.Py_ssize_t = p
    while True:
        if q >= end:
            return -1
        byte = data[q]
        q += 1
        value = (value | ((byte & 0x7F) << shift)) & U64_MAX
        if byte < 0x80:
            break
        shift += 7
        if shift >= 70:
            return -1
    if value > U32_MAX:
        return -1
    return cython.cast(cython.longlong, value << 4) | (q - p)


@cython.cfunc
@cython.nogil
@cython.inline
@cython.exceptval(check=False)
def _zigzag32(value: cython.longlong) -> cython.longlong:
    """A u32 zigzag value as the int32 it stands for."""
    return (value >> 1) ^ -(value & 1)


@cython.cfunc
@cython.nogil
@cython.inline
@cython.exceptval(check=False)
def _end_position(start: cython.longlong, delta: cython.longlong) -> cython.longlong:
    """``-1 if start == -1 else start + delta`` in int32 arithmetic (C's wrap-around)."""
    if start == -1:
        return -1
    return ((start + delta + INT32_BIAS) & U32_MASK) - INT32_BIAS


@cython.ccall
def scan_frame_table(data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
                     stop: cython.Py_ssize_t, filename: cython.uint[::1],
                     funcname: cython.uint[::1], lineno: cython.int[::1],
                     end_lineno: cython.int[::1], column: cython.int[::1],
                     end_column: cython.int[::1], opcode: cython.short[::1],
                     starts: cython.longlong[::1]) -> tuple:
    """Frame-table entries (layout L3) from ``data[pos:]`` into the columns, as many as they
    hold, none starting at or after *stop*, up to the first that does not parse (CPython's
    checks: each of the six varints at most 10 bytes and within u32, then the opcode byte
    before the end of *data*). Positions are reconstructed as CPython does (`end = -1 if
    start == -1 else start + delta`, int32), opcode 255 is -1. Each entry's start goes to
    *starts* if it is not empty. Returns ``(entries, position)``: how many were decoded and
    where the next one starts (the broken one, if that stopped the scan)."""
    end: cython.Py_ssize_t = data.shape[0]
    room: cython.Py_ssize_t = filename.shape[0]
    offsets: cython.bint = starts.shape[0] > 0
    i: cython.Py_ssize_t = 0
    p: cython.Py_ssize_t
    f: cython.longlong
    line: cython.longlong
    col: cython.longlong
    # an entry's fields go to row i as they are read; a broken entry leaves row i written
    # but not counted
    with cython.nogil:
        while i < room and pos < stop:
            p = pos
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            filename[i] = f >> 4
            p += f & 15
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            funcname[i] = f >> 4
            p += f & 15
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            line = _zigzag32(f >> 4)
            p += f & 15
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            end_lineno[i] = _end_position(line, _zigzag32(f >> 4))
            p += f & 15
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            col = _zigzag32(f >> 4)
            p += f & 15
            f = _u32_varint(data, p, end)
            if f < 0:
                break
            end_column[i] = _end_position(col, _zigzag32(f >> 4))
            p += f & 15
            if p >= end:
                break
            lineno[i] = line
            column[i] = col
            opcode[i] = -1 if data[p] == OPCODE_NONE else data[p]
            if offsets:
                starts[i] = pos
            pos = p + 1
            i += 1
    return i, pos


@cython.ccall
def scan_string_table(data: cython.const[cython.uchar][::1], pos: cython.Py_ssize_t,
                      stop: cython.Py_ssize_t, starts: cython.longlong[::1],
                      text_starts: cython.longlong[::1]) -> tuple:
    """String-table entries from ``data[pos:]``: where each starts and where its text starts
    (it ends where the next entry starts), as many as *starts* holds, none starting at or
    after *stop*, up to the first that does not parse (CPython's checks: a length of at most
    10 bytes and within u32, and that many bytes before the end of *data*). Returns
    ``(entries, position)``: how many were found and where the next one starts."""
    end: cython.Py_ssize_t = data.shape[0]
    room: cython.Py_ssize_t = starts.shape[0]
    i: cython.Py_ssize_t = 0
    f: cython.longlong
    text: cython.Py_ssize_t
    with cython.nogil:
        while i < room and pos < stop:
            f = _u32_varint(data, pos, end)
            if f < 0:
                break
            text = pos + (f & 15)
            if f >> 4 > end - text:
                break
            starts[i] = pos
            text_starts[i] = text
            pos = text + (f >> 4)
            i += 1
    return i, pos
