"""The stack prefix tree (Firefox-profiler style) grown from the records' pushed frames.

Every pushed frame (an *event*) becomes a node ``(parent, frame)``, deduplicated exactly, so a
node id names a whole call stack. The parent of a record's bottom pushed frame is the node
at level ``keep`` of its thread's stack before the record: the record's *base*.

A batch is built without a loop per stack level:

1. *Events* in canonical order: records in order, each record's frames outermost first.
2. *Bases*: a record's base is the latest push of its thread at level ``keep`` in this batch
   (one sort of the events by thread, level and index), else it is on the stack carried
   from earlier batches (found by walking up from the thread's current node).
3. *Path hashes*: ``H(event) = H(parent) + term(frame, level)`` mod 2**64 with seeded random
   terms; within a record one cumsum, across records pointer jumping over the bases.
4. *Nodes*: events grouped by hash (one sort), groups looked up among the existing nodes'
   hashes; new nodes numbered by first event, so ids never depend on hash values (nor on
   how records are cut into batches) and every parent id is below its children's.
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

from . import kernels

MAX_DEPTH = 256
_LEVEL_BITS = 9  # levels 0 (the root, no frame) to MAX_DEPTH
# (fresh seed first?, group by full hashes?): a shared run of high hash bits, then a
# collision of full hashes, then (once all of these failed) the exact path
_HASHED_ATTEMPTS = ((False, False), (False, True), (True, True))

__all__ = ["StackTree"]


def _new_seed() -> int:
    """A 64-bit seed from OS entropy, so crafted input cannot aim at collisions."""
    return int.from_bytes(os.urandom(8), "little")


class _HashStore:
    """Path hash -> node id: sorted uint64 runs merged geometrically (sorted-array LSM)."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Vectorised: node ids of sorted *keys*, -1 where absent."""
        out = np.full(keys.size, -1, dtype=np.int32)
        for run_keys, run_ids in self.runs:
            pos = np.searchsorted(run_keys, keys)
            np.minimum(pos, run_keys.size - 1, out=pos)
            hit = np.flatnonzero(run_keys[pos] == keys)
            out[hit] = run_ids[pos[hit]]
        return out

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add sorted new *keys* with their *ids*, merging runs of similar size."""
        if not keys.size:
            return
        self.runs.append((keys, ids))
        while len(self.runs) > 1 and self.runs[-2][0].size <= 2 * self.runs[-1][0].size:
            k2, i2 = self.runs.pop()
            k1, i1 = self.runs.pop()
            self.runs.append(kernels.merge_sorted(k1, i1, k2, i2))


@dataclass
class _Events:
    """A batch's pushed frames in canonical order (records in order, outermost first)."""

    npush: np.ndarray  # per record: its number of events
    start: np.ndarray  # per record: index of its first (outermost) event
    end: np.ndarray  # per record: one past its last (innermost) event
    record: np.ndarray  # per event: its record
    frame: np.ndarray  # per event: frame index (int32, as the nodes')
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
        frame = frames[flat].astype(np.int32)
        level = (keep + 1 - start)[record]  # + event index: the event's level
        level += iota
        return cls(npush, start, end, record, frame, level)

    def latest_push(self, thr, rec: np.ndarray, level: np.ndarray, threads: int) -> np.ndarray:
        """Vectorised (one SIMD sort of the events by thread, level and index): for each
        record of *rec* the last event of an earlier record of its thread at *level*, -1
        if none."""
        nf = self.frame.size
        bits = max(1, (nf - 1).bit_length())
        high = (max(threads, 1) << _LEVEL_BITS).bit_length()
        if high + bits > 64:  # (never, for the batches of a real file)
            return self._latest_push_lexsort(thr, rec, level)
        dtype = np.uint32 if high + bits <= 32 else np.uint64
        thread_level = thr.astype(np.int64) << _LEVEL_BITS
        # per event (thread << 9 | level) << bits | event
        keys = (thread_level[self.record] + self.level).astype(dtype)
        keys <<= dtype(bits)
        keys |= np.arange(nf, dtype=dtype)
        keys.sort()
        group = thread_level[rec] + level
        query = ((group << bits) + self.start[rec]).astype(dtype)
        by_query = np.argsort(query)  # (sorted needles search about 3 times faster)
        j = np.empty(query.size, np.int64)
        j[by_query] = np.searchsorted(keys, query[by_query])
        j -= 1
        found = keys[np.maximum(j, 0)].astype(np.int64)
        ok = (j >= 0) & (found >> bits == group)
        return np.where(ok, found & ((1 << bits) - 1), -1)

    def _latest_push_lexsort(self, thr, rec, level) -> np.ndarray:
        """:meth:`latest_push` by a lexsort (keys too wide for 64 bits)."""
        thread = thr[self.record]
        order = np.lexsort((np.arange(self.frame.size), self.level, thread))
        out = np.full(rec.size, -1, np.int64)
        for i, (r, lv) in enumerate(zip(rec.tolist(), level.tolist(), strict=True)):
            t = thr[r]
            mine = order[(thread[order] == t) & (self.level[order] == lv)
                         & (order < self.start[r])]
            out[i] = mine[-1] if mine.size else -1
        return out


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
        # per thread: the node of its current stack (-1: empty), its depth and path hash
        self._cur_node = np.zeros(0, np.int32)
        self._cur_depth = np.zeros(0, np.int64)
        self._cur_hash = np.zeros(0, np.uint64)
        self._node_frame = np.zeros(1024, np.int32)
        self._node_parent = np.zeros(1024, np.int32)
        self._num_nodes = 0
        self._seed = _new_seed()
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
            self._cur_hash = _grown(self._cur_hash, cap, row)
        self._cur_node[row] = -1
        self._cur_depth[row] = 0
        self._cur_hash[row] = 0
        self.threads += 1
        return row

    def add_records(self, change, npush, frames, thr, keep) -> np.ndarray:
        """Vectorised: the prefix-tree node of each stack-change record's new stack (-1 for an
        empty stack, and for REPEAT records, which keep their thread's stack).

        Per record: *change* (False for REPEAT), *npush* (frames listed), *thr* (thread row, below
        :attr:`threads`), *keep* (levels kept below the listed frames, at most the thread's
        depth); *frames* are the listed frame indices of all records, innermost first per
        record."""
        n = change.size
        rec_stack = np.full(n, -1, np.int32)
        if not change.any():
            return rec_stack
        if self._stale:
            self._rehash()
        ev = _Events.build(npush, frames, keep)
        base = self._bases(ev, change, thr, keep)
        for reseed, exact in _HASHED_ATTEMPTS:
            if reseed:
                self._seed = _new_seed()
                self._rehash()
            node, event_hash, base_hash = self._hashed_nodes(ev, base, thr, keep, exact)
            if node is not None:
                break
        else:
            node, event_hash, base_hash = self._exact_nodes(ev, base), None, None
            self._stale = True
        has = np.flatnonzero(npush)
        rec_stack[has] = node[ev.end[has] - 1]
        # records that only pop (or keep) end on their base
        bare = np.flatnonzero(change & (npush == 0) & (keep > 0))
        be = base.event[bare]
        rec_stack[bare] = np.where(be >= 0, node[np.maximum(be, 0)] if node.size else -1,
                                   base.node[bare])
        self._carry(change, npush, thr, keep, rec_stack, ev, event_hash, base_hash)
        return rec_stack

    # ------------------------------------------------------------------ bases
    def _bases(self, ev: _Events, change, thr, keep) -> _Bases:
        """Vectorised: each record's base, the node at level *keep* of its thread's stack:
        the latest push of that thread at that level in an earlier record of this batch,
        else carried from earlier batches."""
        n = change.size
        event = np.full(n, -1, np.int64)
        rec = np.flatnonzero(change & (keep > 0))
        if ev.frame.size:
            event[rec] = ev.latest_push(thr, rec, keep[rec], self.threads)
        node = np.full(n, -1, np.int32)
        carried = rec[event[rec] < 0]
        node[carried] = self._ancestors(thr[carried], keep[carried])[0]
        return _Bases(event, node, carried)

    def _ancestors(self, thread: np.ndarray, level: np.ndarray):
        """Vectorised over queries, sequential over levels: (node, path hash) at *level* of
        each *thread*'s current stack, walking up from its current node."""
        if level.size and (level > self._cur_depth[thread]).any():
            raise ValueError("a record keeps more levels than its thread's stack has")
        node = self._cur_node[thread]
        path_hash = self._cur_hash[thread]
        depth = self._cur_depth[thread]
        up = np.flatnonzero(depth > level)
        while up.size:
            at = node[up]
            path_hash[up] -= kernels.path_hash_terms(self._node_frame[at], depth[up],
                                                     self._seed)
            node[up] = self._node_parent[at]
            depth[up] -= 1
            up = up[depth[up] > level[up]]
        return node, path_hash

    # ------------------------------------------------------------------ nodes by hash
    def _hashed_nodes(self, ev: _Events, base: _Bases, thr, keep, exact: bool):
        """Vectorised: (node and path hash of every event, path hash of every record's base)
        by path hashes, proven exactly; Nones if the proof fails (the tree is then
        unchanged). Events are grouped by the high bits of their hashes, or by the full
        hashes if *exact*."""
        nf = ev.frame.size
        base_hash = np.zeros(ev.start.size, np.uint64)
        c = base.carried
        base_hash[c] = self._ancestors(thr[c], keep[c])[1]
        event_hash = self._event_hashes(ev, base, base_hash)
        order, head = kernels.group_by_hash(event_hash, exact)
        heads = np.flatnonzero(head)
        first = order[heads]  # the first event of each group; groups by increasing hash
        group_hash = event_hash[first]
        ids = self._store.lookup(group_hash)
        new = np.flatnonzero(ids < 0)
        new_first, new_canonical = _by_first_event(first, new, nf)
        ids[new_canonical] = np.arange(self._num_nodes, self._num_nodes + new.size,
                                       dtype=np.int32)
        group = np.cumsum(head, dtype=np.int32)
        group -= 1
        node_sorted = ids[group]
        del group
        node = np.empty(nf, np.int32)
        node[order] = node_sorted
        del node_sorted
        parent = self._event_parents(ev, base, node)
        self._write_nodes(ev.frame[new_first], parent[new_first])  # not counted yet
        if not self._proven(ev.frame, parent, node):
            return None, None, None
        self._num_nodes += new.size
        self._store.add(group_hash[new], ids[new])
        return node, event_hash, base_hash

    def _event_hashes(self, ev: _Events, base: _Bases, base_hash: np.ndarray) -> np.ndarray:
        """Vectorised: path hash of every event (within a record a cumsum of terms; each
        record's base hash by pointer jumping along base records). *base_hash* holds those
        of carried bases on entry, of all bases on return."""
        h = kernels.path_hash_terms(ev.frame, ev.level, self._seed)
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
        has = np.flatnonzero(ev.npush)
        be = base.event[has]
        parent[ev.start[has]] = np.where(be >= 0, node[np.maximum(be, 0)], base.node[has])
        return parent

    def _proven(self, frame, parent, node) -> bool:
        """Vectorised: whether every event agrees with its node (found, or new and written
        after the counted ones) on frame and parent node."""
        return bool((self._node_frame[node] == frame).all()
                    and (self._node_parent[node] == parent).all())

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
        has = np.flatnonzero(ev.npush)
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
        self._write_nodes(frame[order], parent[order])
        self._num_nodes += order.size
        return renumber[node].astype(np.int32)

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

    def _carry(self, change, npush, thr, keep, rec_stack, ev, event_hash, base_hash) -> None:
        """Vectorised: each thread's current node, depth and path hash after the batch (its
        last stack-change record's)."""
        rec = np.flatnonzero(change)
        last = np.full(self.threads, -1, np.int64)
        np.maximum.at(last, thr[rec], rec)
        t = np.flatnonzero(last >= 0)
        r = last[t]
        self._cur_node[t] = rec_stack[r]
        self._cur_depth[t] = keep[r] + npush[r]
        if event_hash is None:
            return  # stale: the rehash before the next batch sets the hashes
        pushed = npush[r] > 0
        self._cur_hash[t] = np.where(pushed, event_hash[np.maximum(ev.end[r] - 1, 0)]
                                     if event_hash.size else 0, base_hash[r])

    def _rehash(self) -> None:
        """Vectorised (pointer jumping): path hashes of all nodes under the current seed, the
        hash store and the threads' current path hashes rebuilt from them."""
        m = self._num_nodes
        parent = self._node_parent[:m]
        level = kernels.decode_chain_sums(np.ones(m, np.uint64), parent.astype(np.int64))
        terms = kernels.path_hash_terms(self._node_frame[:m], level, self._seed)
        node_hash = kernels.decode_chain_sums(terms, parent.astype(np.int64))
        order = np.argsort(node_hash)
        self._store = _HashStore()
        self._store.add(node_hash[order], order.astype(np.int32))
        cur = self._cur_node[: self.threads]
        self._cur_hash[: self.threads] = np.where(
            cur >= 0, node_hash[np.maximum(cur, 0)] if m else 0, 0)
        self._stale = False


# ---------------------------------------------------------------------- helpers
def _by_first_event(first: np.ndarray, new: np.ndarray, n: int):
    """Vectorised: (first events, groups) of the *new* groups in the order of their first
    events (each below *n*), by a mask over events instead of a sort."""
    is_first = np.zeros(n, bool)
    new_at = first[new]
    is_first[new_at] = True
    new_first = np.flatnonzero(is_first)
    group_of = np.empty(n, np.int32)
    group_of[new_at] = new
    return new_first, group_of[new_first]


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
