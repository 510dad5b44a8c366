"""The stack prefix tree (Firefox-profiler style) grown from the records' pushed frames.

Every pushed frame (an *event*) becomes a node ``(parent, frame)``, deduplicated exactly, so a
node id names a whole call stack. The parent of a record's bottom pushed frame is the node
at level ``keep`` of its thread's stack before the record: the record's *base*.

A batch is built without a loop per stack level:

1. *Events* in canonical order: records in order, each record's frames outermost first.
2. *Bases*: a record's base is the latest push of its thread at level ``keep`` in this batch
   (one sort of the events by thread, level and index), else it is on the stack carried
   from earlier batches (found by walking up from the thread's current node).
3. *Path hashes*: ``H(event) = H(parent) + term(frame, level)`` mod 2**64, the term a product
   of seeded random values per frame and per level (odd) from two tables; within a record
   one cumsum, across records pointer jumping over the bases.
4. *Nodes*: events grouped by hash (one sort), groups looked up among the existing nodes'
   hashes; new nodes numbered by first event, so ids never depend on hash values (nor on
   how records are cut into batches) and every parent id is below its children's. New
   nodes reach the hash store at the next batch (a single batch never builds it).
5. *Proof*: every event must agree with its node on frame and parent node. By induction from
   the root, that makes each node's path the path of each of its events, and equal paths
   have equal hashes: a hash collision cannot slip through. On a disagreement the batch is
   redone with exact grouping, then under a fresh random seed (all stored hashes
   recomputed), and if that also fails, level by level without hashes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..schema import tachyon as spec
from . import kernels

MAX_DEPTH = spec.MAX_STACK_DEPTH
_LEVEL_BITS = 9  # levels 0 (the root, no frame) to MAX_DEPTH
# (fresh seed first?, group by full hashes?): a shared run of high hash bits, then a
# collision of full hashes, then (once all of these failed) the exact path
_HASHED_ATTEMPTS = ((False, False), (False, True), (True, True))

__all__ = ["StackTree"]


def _new_seed() -> int:
    """A 64-bit seed from OS entropy, so crafted input cannot aim at collisions."""
    return int.from_bytes(os.urandom(8), "little")


class _HashStore:
    """Path hash -> node id, as sorted runs of uint64 keys (a hash's high 32 bits, the id in
    the low 32) merged geometrically (a sorted-array LSM; merging two runs is one timsort).
    A key proposes a node; the node's full hash confirms it. A filter of 8 to 32 bits per
    node, by the hash's high bits, answers most absent hashes without a search."""

    HIGH = np.uint64(0xFFFFFFFF00000000)

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []
        self.size = 0
        self._filter_bits = 13  # log2 of its size in bits
        self._filter = np.zeros(1 << (self._filter_bits - 3), np.uint8)

    def lookup(self, hashes: np.ndarray, node_hash: np.ndarray) -> np.ndarray:
        """Vectorised: node ids of sorted *hashes* (-1 where absent), given every node's
        full hash."""
        out = np.full(hashes.size, -1, dtype=np.int32)
        if not self.size:
            return out
        slot = self._slots(hashes)
        maybe = self._filter[slot >> 3] >> (slot & 7).astype(np.uint8)
        maybe = np.flatnonzero(maybe & 1)
        high = hashes[maybe] & self.HIGH
        for run in self.runs:
            pos = np.searchsorted(run, high)
            todo = np.arange(maybe.size)
            while todo.size:  # (more than one round only where high bits are shared)
                p = pos[todo]
                inside = p < run.size
                todo, p = todo[inside], p[inside]
                key = run[p]
                same_high = (key & self.HIGH) == high[todo]
                todo, p, key = todo[same_high], p[same_high], key[same_high]
                node = (key & ~self.HIGH).astype(np.intp)
                hit = node_hash[node] == hashes[maybe[todo]]
                out[maybe[todo[hit]]] = node[hit]
                todo = todo[~hit]
                pos[todo] = p[~hit] + 1
        return out

    def add(self, hashes: np.ndarray, ids: np.ndarray) -> None:
        """Vectorised: add nodes *ids* (below 2**32) with their *hashes* as a sorted run,
        merging runs of similar size."""
        if not hashes.size:
            return
        run = hashes & self.HIGH
        run |= ids.astype(np.uint64)
        run.sort()
        self.runs.append(run)
        self.size += run.size
        while len(self.runs) > 1 and self.runs[-2].size <= 2 * self.runs[-1].size:
            merged = np.concatenate(self.runs[-2:])
            merged.sort(kind="stable")  # timsort: one merge of two sorted runs
            self.runs[-2:] = [merged]
        if 8 * self.size > 1 << self._filter_bits and self._filter_bits < 32:
            self._filter_bits = min(32, (16 * self.size - 1).bit_length())
            self._filter = np.zeros(1 << (self._filter_bits - 3), np.uint8)
            for r in self.runs:
                self._set_bits(r)
        else:
            self._set_bits(run)

    def _set_bits(self, run: np.ndarray) -> None:
        """Vectorised: set the filter bits of a sorted run (its bytes in increasing order,
        so one OR per byte by ``reduceat``)."""
        slot = (run >> np.uint64(64 - self._filter_bits)).astype(np.uint32)
        bit = np.left_shift(np.uint8(1), (slot & np.uint32(7)).astype(np.uint8))
        slot >>= np.uint32(3)  # the byte
        starts = np.flatnonzero(slot[1:] != slot[:-1])
        starts += 1
        starts = np.r_[0, starts]
        self._filter[slot[starts]] |= np.bitwise_or.reduceat(bit, starts)

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        """The filter slot of each hash (or key: the same high bits)."""
        return (keys >> np.uint64(64 - self._filter_bits)).astype(np.intp)


@dataclass
class _Events:
    """A batch's pushed frames in canonical order (records in order, outermost first)."""

    npush: np.ndarray  # per record: its number of events
    start: np.ndarray  # per record: index of its first (outermost) event
    end: np.ndarray  # per record: one past its last (innermost) event
    first_level: np.ndarray  # per record: level of its first event, minus that event's index
    pushing: np.ndarray  # the records with events
    record: np.ndarray  # per event: its record
    frame: np.ndarray  # per event: frame index (int64: int32 indices gather slower)
    level: np.ndarray  # per event: stack level, 1 = outermost frame of a stack

    @classmethod
    def build(cls, npush, frames, keep) -> _Events:
        """Vectorised: reverse each record's frames (they are listed innermost first)."""
        end = np.cumsum(npush)
        start = end - npush
        iota = np.arange(frames.size)
        record = np.repeat(np.arange(npush.size), npush)
        flat = (start + end - 1)[record]
        flat -= iota
        frame = frames[flat]
        first_level = keep + 1 - start
        level = first_level[record]
        level += iota
        return cls(npush, start, end, first_level, np.flatnonzero(npush), record, frame, level)

    def latest_push(self, thr, rec: np.ndarray, level: np.ndarray, threads: int) -> np.ndarray:
        """Vectorised (one SIMD sort of the events by thread, level and index): for each
        record of *rec* the last event of an earlier record of its thread at *level*, -1
        if none."""
        nf = self.frame.size
        bits = max(1, (nf - 1).bit_length())
        dtype = np.uint32 if _key_bits(threads, nf) <= 32 else np.uint64
        thread_level = thr.astype(np.int64) << _LEVEL_BITS
        # (thread << 9 | level) << bits | event, as per-record constants (mod 2**64, they
        # may be negative) plus event * (2**bits + 1)
        per_record = (thread_level + self.first_level) << bits
        keys = per_record.view(np.uint64).astype(dtype)[self.record]
        scaled = np.arange(nf, dtype=dtype)
        scaled *= dtype((1 << bits) + 1)
        keys += scaled
        del scaled
        keys.sort()
        group = thread_level[rec] + level
        query = ((group << bits) + self.start[rec]).astype(dtype)
        j = _search_sorted_needles(keys, query)
        j -= 1
        found = keys[np.maximum(j, 0)].astype(np.int64)
        ok = (j >= 0) & (found >> bits == group)
        return np.where(ok, found & ((1 << bits) - 1), -1)


@dataclass
class _Bases:
    """Per record: what its pushed frames (or, if it pushes none, its stack) rest on."""

    event: np.ndarray  # an event of an earlier record of this batch, else -1
    node: np.ndarray  # else: a node carried from earlier batches, or -1 (the root)
    carried: np.ndarray  # the records whose base is a carried node


class StackTree:
    """Growing prefix tree of stacks plus each thread's current stack in it."""

    def __init__(self) -> None:
        self.threads = 0
        # per thread: the node of its current stack (-1: empty) and its depth
        self._cur_node = np.zeros(0, np.int32)
        self._cur_depth = np.zeros(0, np.int64)
        self._node_frame = np.zeros(1024, np.int32)
        self._node_parent = np.zeros(1024, np.int32)
        self._node_hash = np.zeros(0, np.uint64)  # path hash of each node
        self._num_nodes = 0
        # (ids, path hashes) of nodes not yet in the hash store nor in _node_hash: both are
        # needed from the next batch on only (so never, for a single batch)
        self._unindexed: list[tuple[np.ndarray, np.ndarray]] = []
        self._frame_terms = np.zeros(0, np.uint64)
        self._set_seed(_new_seed())
        self._store = _HashStore()
        self._stale = False  # nodes were added without hashes: rehash before the next batch

    @property
    def frame(self) -> np.ndarray:
        """Frame-table index of each node."""
        return self._node_frame[: self._num_nodes]

    @property
    def parent(self) -> np.ndarray:
        """Parent node of each node (the next frame outward), -1 for an outermost frame."""
        return self._node_parent[: self._num_nodes]

    def add_thread(self) -> int:
        """Register the next thread row (its stack starts empty); returns the row."""
        row = self.threads
        if row >= self._cur_node.size:
            cap = max(16, 2 * row)
            self._cur_node = _grown(self._cur_node, cap, row)
            self._cur_depth = _grown(self._cur_depth, cap, row)
        self._cur_node[row] = -1
        self._cur_depth[row] = 0
        self.threads += 1
        return row

    def add_records(self, change, npush, frames, thr, keep) -> np.ndarray:
        """Vectorised: the prefix-tree node of each stack-change record's new stack (-1 for an
        empty stack, and for REPEAT records, which keep their thread's stack).

        Per record: *change* (False for REPEAT), *npush* (frames listed), *thr* (thread row, below
        :attr:`threads`), *keep* (levels kept below the listed frames, at most the thread's
        depth); *frames* are the listed frame indices of all records, innermost first per
        record."""
        if change.all():
            return self._add_changes(npush, frames, thr, keep)
        rec_stack = np.full(change.size, -1, np.int32)
        changes = np.flatnonzero(change)  # (REPEAT records list no frames)
        if changes.size:
            rec_stack[changes] = self._add_changes(npush[changes], frames, thr[changes],
                                                   keep[changes])
        return rec_stack

    def _add_changes(self, npush, frames, thr, keep) -> np.ndarray:
        """Vectorised: :meth:`add_records` for stack-change records only."""
        n = npush.size
        if _key_bits(self.threads, frames.size) > 64 and n > 1:
            return self._add_halves(npush, frames, thr, keep)
        if self._stale:
            self._rehash()
        self._index_new_nodes()
        if frames.size:
            self._cover_frames(int(frames.max()))
        ev = _Events.build(npush, frames, keep)
        base = self._bases(ev, thr, keep)
        for reseed, exact in _HASHED_ATTEMPTS:
            if reseed:
                self._set_seed(_new_seed())
                self._rehash()
            node = self._hashed_nodes(ev, base, exact)
            if node is not None:
                break
        else:
            node = self._exact_nodes(ev, base)
            self._stale = True
        rec_stack = np.full(n, -1, np.int32)
        has = ev.pushing
        rec_stack[has] = node[ev.end[has] - 1]
        # records that only pop (or keep) end on their base
        bare = np.flatnonzero((npush == 0) & (keep > 0))
        be = base.event[bare]
        rec_stack[bare] = np.where(be >= 0, node[np.maximum(be, 0)] if node.size else -1,
                                   base.node[bare])
        self._carry(npush, thr, keep, rec_stack)
        return rec_stack

    def _add_halves(self, npush, frames, thr, keep) -> np.ndarray:
        """Two batches in turn (so that the packed sort keys of each fit in 64 bits)."""
        h = npush.size // 2
        f = int(npush[:h].sum())
        return np.concatenate([self._add_changes(npush[:h], frames[:f], thr[:h], keep[:h]),
                               self._add_changes(npush[h:], frames[f:], thr[h:], keep[h:])])

    # ------------------------------------------------------------------ bases
    def _bases(self, ev: _Events, thr, keep) -> _Bases:
        """Vectorised: each record's base, the node at level *keep* of its thread's stack:
        the latest push of that thread at that level in an earlier record of this batch,
        else carried from earlier batches."""
        n = keep.size
        event = np.full(n, -1, np.int64)
        rec = np.flatnonzero(keep)
        if ev.frame.size and rec.size:
            event[rec] = ev.latest_push(thr, rec, keep[rec], self.threads)
        node = np.full(n, -1, np.int32)
        carried = rec[event[rec] < 0]
        node[carried] = self._ancestors(thr[carried], keep[carried])
        return _Bases(event, node, carried)

    def _ancestors(self, thread: np.ndarray, level: np.ndarray) -> np.ndarray:
        """Vectorised over queries, sequential over levels: the node at *level* of each
        *thread*'s current stack, walking up from its current node."""
        if level.size and (level > self._cur_depth[thread]).any():
            raise ValueError("a record keeps more levels than its thread's stack has")
        node = self._cur_node[thread]
        depth = self._cur_depth[thread]
        up = np.flatnonzero(depth > level)
        while up.size:
            node[up] = self._node_parent[node[up]]
            depth[up] -= 1
            up = up[depth[up] > level[up]]
        return node

    # ------------------------------------------------------------------ nodes by hash
    def _hashed_nodes(self, ev: _Events, base: _Bases, exact: bool):
        """Vectorised: the node of every event by path hashes, proven exactly; None if the
        proof fails (the tree is then unchanged). Events are grouped by the high bits of
        their hashes, or by the full hashes if *exact*."""
        nf = ev.frame.size
        base_hash = np.zeros(ev.start.size, np.uint64)
        c = base.carried
        base_hash[c] = np.where(base.node[c] >= 0, self._node_hash[base.node[c]], 0)
        event_hash = self._event_hashes(ev, base, base_hash)
        order, head = kernels.group_by_hash(event_hash, exact)
        heads = np.flatnonzero(head)
        first = order[heads]  # the first event of each group; groups by increasing hash
        group_hash = event_hash[first]
        ids = self._store.lookup(group_hash, self._node_hash)
        new = np.flatnonzero(ids < 0)
        group = np.cumsum(head, dtype=np.int32)
        group -= 1
        group_of = np.empty(nf, np.int32)  # the group of each event
        group_of[order] = group
        del group
        is_new_first = np.zeros(nf, bool)
        is_new_first[first[new]] = True
        new_first = np.flatnonzero(is_new_first)  # new nodes in canonical order
        ids[group_of[new_first]] = np.arange(self._num_nodes, self._num_nodes + new.size,
                                             dtype=np.int32)
        node = ids[group_of]
        del group_of
        parent = self._event_parents(ev, base, node)
        self._write_nodes(ev.frame[new_first], parent[new_first])
        # every event but the first of a new node (the node was just made from it)
        check = np.flatnonzero(~is_new_first) if 2 * new.size > nf else slice(None)
        if not self._proven(ev.frame, parent, node, check):
            return None
        self._num_nodes += new.size
        self._unindexed.append((ids[new], group_hash[new]))
        return node

    def _event_hashes(self, ev: _Events, base: _Bases, base_hash: np.ndarray) -> np.ndarray:
        """Vectorised: path hash of every event (within a record a cumsum of terms; each
        record's base hash by pointer jumping along base records). *base_hash* holds those
        of carried bases on entry, of all bases on return."""
        h = self._terms(ev.frame, ev.level)
        np.cumsum(h, out=h)
        before = np.zeros(ev.start.size, np.uint64)  # the cumsum before each record
        inner = np.flatnonzero(ev.start)
        before[inner] = h[ev.start[inner] - 1]
        has = np.flatnonzero(base.event >= 0)
        be = base.event[has]
        base_record = np.full(ev.start.size, -1, np.int64)
        base_record[has] = ev.record[be]
        base_hash[has] = h[be] - before[base_record[has]]
        kernels.decode_chain_sums(base_hash, base_record)
        offset = base_hash - before
        h += np.repeat(offset, ev.npush)
        return h

    def _event_parents(self, ev: _Events, base: _Bases, node: np.ndarray) -> np.ndarray:
        """Vectorised: parent node of each event: the event before it in its record, or the
        record's base for its first event."""
        parent = np.empty(node.size, np.int32)
        parent[1:] = node[:-1]
        has = ev.pushing
        be = base.event[has]
        parent[ev.start[has]] = np.where(be >= 0, node[np.maximum(be, 0)], base.node[has])
        return parent

    def _proven(self, frame, parent, node, events) -> bool:
        """Vectorised: whether these *events* (indices or a slice) agree with their nodes
        (found, or new and written after the counted ones) on frame and parent node."""
        node = node[events]
        return bool((self._node_frame[node] == frame[events]).all()
                    and (self._node_parent[node] == parent[events]).all())

    # ------------------------------------------------------------------ nodes, exact
    def _exact_nodes(self, ev: _Events, base: _Bases) -> np.ndarray:
        """Vectorised per stack level: node of every event by exact (parent, frame) keys,
        without hashes (after hash proofs failed under two seeds); same ids as hashing."""
        nf = ev.frame.size
        m = self._num_nodes
        known_keys = _pair_keys(self._node_parent[:m], self._node_frame[:m])
        known_order = np.argsort(known_keys)
        known_keys = known_keys[known_order]
        node = np.full(nf, -1, np.int64)
        # parent of each event: the event before it, or for a record's first its base
        parent_event = np.arange(nf) - 1
        parent_node = np.full(nf, -2, np.int64)  # -2: take the parent event's node
        has = ev.pushing
        starts, be = ev.start[has], base.event[has]
        parent_event[starts] = be
        parent_node[starts] = np.where(be >= 0, -2, base.node[has])
        temp_first: list[np.ndarray] = []  # per new (temporary) node: its first event
        temp_keys: list[np.ndarray] = []
        temp_count = 0
        by_level = np.argsort(ev.level, kind="stable")
        bounds = np.flatnonzero(np.r_[True, np.diff(ev.level[by_level]) != 0, True])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=False):
            sel = by_level[lo:hi]
            pn = parent_node[sel]
            from_event = pn == -2
            pn[from_event] = node[parent_event[sel[from_event]]]
            uniq, first, inverse = kernels.unique_inverse(_pair_keys(pn, ev.frame[sel]))
            ids = _find_sorted(known_keys, uniq)
            ids[ids >= 0] = known_order[ids[ids >= 0]]
            miss = np.flatnonzero(ids < 0)
            ids[miss] = m + temp_count + np.arange(miss.size)
            temp_count += miss.size
            temp_first.append(sel[first[miss]])
            temp_keys.append(uniq[miss])
            node[sel] = ids[inverse.reshape(-1)]
        # number the new nodes by first event, as the hashed path does
        first_event = np.concatenate(temp_first) if temp_first else np.zeros(0, np.int64)
        order = np.argsort(first_event)
        renumber = np.arange(m + first_event.size)
        renumber[m + order] = np.arange(m, m + first_event.size)
        keys = np.concatenate(temp_keys) if temp_keys else np.zeros(0, np.uint64)
        frame = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
        parent = (keys >> np.uint64(32)).astype(np.int64) - 1
        parent = np.where(parent >= 0, renumber[np.maximum(parent, 0)], -1)
        self._write_nodes(frame[order], parent[order])  # (hashes: at the next rehash)
        self._num_nodes += order.size
        return renumber[node].astype(np.int32)

    # ------------------------------------------------------------------ hashes
    def _set_seed(self, seed: int) -> None:
        """New random terms: per level (odd, so a term tells frames apart) and per frame."""
        self._seed = seed
        self._level_terms = kernels.hash_table(MAX_DEPTH + 1, seed ^ 0x5EED) | np.uint64(1)
        self._frame_terms = kernels.hash_table(self._frame_terms.size, seed)

    def _cover_frames(self, top: int) -> None:
        """Extend the per-frame terms up to frame index *top*."""
        have = self._frame_terms.size
        if top >= have:
            more = max(top + 1, 2 * have, 1024) - have
            self._frame_terms = np.concatenate(
                [self._frame_terms, kernels.hash_table(more, self._seed, first=have)])

    def _terms(self, frame: np.ndarray, level: np.ndarray) -> np.ndarray:
        """Vectorised: the path-hash term of each (frame, level) pair (a new array)."""
        terms = self._frame_terms[frame]
        terms *= self._level_terms[level]
        return terms

    # ------------------------------------------------------------------ state
    def _write_nodes(self, frame: np.ndarray, parent: np.ndarray) -> None:
        """Write nodes with ids from the current count on (without counting them)."""
        need = self._num_nodes + frame.size
        if need > self._node_frame.size:
            cap = max(need, 2 * self._node_frame.size)
            self._node_frame = _grown(self._node_frame, cap, self._num_nodes)
            self._node_parent = _grown(self._node_parent, cap, self._num_nodes)
        self._node_frame[self._num_nodes:need] = frame
        self._node_parent[self._num_nodes:need] = parent

    def _index_new_nodes(self) -> None:
        """Put the path hashes of the nodes of earlier batches in _node_hash and the store."""
        if not self._unindexed:
            return
        if self._node_hash.size < self._num_nodes:
            cap = max(self._num_nodes, 2 * self._node_hash.size)
            self._node_hash = _grown(self._node_hash, cap, self._node_hash.size)
        for ids, path_hash in self._unindexed:
            self._node_hash[ids] = path_hash
            self._store.add(path_hash, ids)
        self._unindexed.clear()

    def _carry(self, npush, thr, keep, rec_stack) -> None:
        """Vectorised: each thread's current node and depth after the batch (of stack-change
        records): its last record's."""
        last = np.full(self.threads, -1, np.int64)
        np.maximum.at(last, thr, np.arange(thr.size))
        t = np.flatnonzero(last >= 0)
        r = last[t]
        self._cur_node[t] = rec_stack[r]
        self._cur_depth[t] = keep[r] + npush[r]

    def _rehash(self) -> None:
        """Vectorised (pointer jumping): path hashes of all nodes under the current seed, and
        the hash store rebuilt from them."""
        m = self._num_nodes
        parent = self._node_parent[:m]
        level = kernels.decode_chain_sums(np.ones(m, np.uint64), parent.astype(np.int64))
        terms = self._terms(self._node_frame[:m], level)
        self._node_hash = kernels.decode_chain_sums(terms, parent.astype(np.int64))
        self._store = _HashStore()
        self._store.add(self._node_hash, np.arange(m))
        self._unindexed.clear()
        self._stale = False


# ---------------------------------------------------------------------- helpers
def _key_bits(threads: int, events: int) -> int:
    """Bits of the packed (thread, level, event) sort keys of a batch."""
    return (max(threads, 1) << _LEVEL_BITS).bit_length() + max(1, (events - 1).bit_length())


def _search_sorted_needles(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Vectorised: ``np.searchsorted(haystack, needles)``, the needles sorted first (with
    their index packed in, by one SIMD sort): sorted needles search about 3 times faster."""
    bits = max(1, (needles.size - 1).bit_length())
    if needles.dtype.itemsize * 8 + bits > 64:
        order = np.argsort(needles)
    else:
        packed = needles.astype(np.uint64) << np.uint64(bits)
        packed |= np.arange(needles.size, dtype=np.uint64)
        packed.sort()
        packed &= np.uint64((1 << bits) - 1)
        order = packed.view(np.intp)
    out = np.empty(needles.size, np.intp)
    out[order] = np.searchsorted(haystack, needles[order])
    return out


def _pair_keys(parent: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Vectorised: exact uint64 keys of (parent node or -1, frame < 2**32) pairs."""
    keys = (parent.astype(np.int64) + 1).astype(np.uint64) << np.uint64(32)
    keys |= frame.astype(np.uint64)
    return keys


def _find_sorted(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Vectorised: index of each needle in the sorted *haystack*, -1 where absent."""
    if not haystack.size:
        return np.full(needles.size, -1, np.int64)
    pos = np.minimum(np.searchsorted(haystack, needles), haystack.size - 1)
    return np.where(haystack[pos] == needles, pos, -1)


def _grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    """A larger array starting with ``a[:used]`` (np.resize would also fill the rest)."""
    out = np.empty(cap, a.dtype)
    out[:used] = a[:used]
    return out
