"""The stack prefix tree (Firefox-profiler style) grown from the records' pushed frames.

Every pushed frame (an *event*) becomes a node ``(parent, frame)``, deduplicated exactly, so a
node id names a whole call stack. The parent of a record's bottom pushed frame is the node
at level ``keep`` of its thread's stack before the record: the record's *base*.

A batch is built without a loop per stack level:

The tree knows nothing of threads but what each batch passes in: the node and depth of
each thread's stack before the batch (:class:`.threads.ThreadTable` keeps them).

1. *Listed stacks*: a record that keeps no levels (FULL, mostly) lists its whole stack,
   whatever its thread held before. Its path hash is one cumsum away (step 4); a node of
   an earlier batch with that hash, walked up to the root and compared frame by frame,
   is its stack. Records of the batch listing the same frames (compared likewise) are
   left to the first of them. Only the rest go on: deep profiles list the same
   stacks again and again.
2. *Events* in canonical order: records in order, each record's frames outermost first.
3. *Bases*: a record's base is pushed by the latest earlier record of its thread that
   keeps fewer levels (binary lifting over running minima, per record, not per frame),
   else it is on the stack carried from earlier batches or ends a listed stack (found by
   walking up from that node).
4. *Path hashes* (:mod:`.path_hash`): ``H(event) = H(parent) + term(frame) * R**level`` mod
   2**64; within a record one cumsum, across records pointer jumping over the bases.
5. *Nodes*: events grouped by hash (one sort), groups looked up among the existing nodes'
   hashes; new nodes numbered by first event, so ids never depend on hash values (nor on
   how records are cut into batches) and every parent id is below its children's. New
   nodes reach the hash store (:class:`~tachyon_format.kernels.hash_store.HashStore`) at
   the next batch (a single batch never builds it).
6. *Proof*: every event must agree with its node on frame and parent node. By induction from
   the root, that makes each node's path the path of each of its events, and equal paths
   have equal hashes: a hash collision cannot slip through. On a disagreement the batch is
   redone with exact grouping, then under a fresh random seed (all stored hashes
   recomputed), and if that also fails, level by level without hashes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels import hashing, paths, prefix_tree, segments
from tachyon_format.kernels.hash_store import HashStore
from tachyon_format.schema import tachyon_values as spec

from . import path_hash

MAX_DEPTH = spec.MAX_STACK_DEPTH
# (fresh seed first?, group by full hashes?): a shared run of high hash bits, then a
# collision of full hashes, then (once all of these failed) the exact path
_HASHED_ATTEMPTS = ((False, False), (False, True), (True, True))
_COMPARE_BLOCK = 1 << 20  # frames compared per block (bounded temporaries)

__all__ = ["StackTree"]


@dataclass(eq=False)
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
    def build(cls, npush, frames, keep, src) -> _Events:
        """Vectorised: each record's frames, listed innermost first from ``frames[src]``
        on, reversed."""
        end = np.cumsum(npush)
        start = end - npush
        iota = np.arange(end[-1] if end.size else 0)
        record = np.repeat(np.arange(npush.size), npush)
        flat = (src + end - 1)[record]
        flat -= iota
        frame = frames[flat]
        first_level = keep + 1 - start
        level = first_level[record]
        level += iota
        return cls(npush, start, end, first_level, np.flatnonzero(npush), record, frame, level)


@dataclass(eq=False)
class _Bases:
    """Per record: what its pushed frames (or, if it pushes none, its stack) rest on."""

    event: np.ndarray  # an event of an earlier record of this batch, else -1
    node: np.ndarray  # else: a node carried from earlier batches, or -1 (the root)
    carried: np.ndarray  # the records whose base is a carried node


class StackTree:
    """Growing prefix tree of stacks: node ``i`` is the stack ``frame[i]`` (innermost) over
    the stack of node ``parent[i]`` (-1: the empty stack).

    Array arguments of the methods, unless said otherwise: per record, counts and levels
    (*npush*, *keep*, *src*) are int64 and thread rows (*thr*) int32; frame indices are
    int64 (int32 ones gather slower), node ids int32, path hashes uint64."""

    def __init__(self) -> None:
        self._node_frame = np.zeros(1024, np.int32)
        self._node_parent = np.zeros(1024, np.int32)
        self._node_depth = np.zeros(1024, np.int16)  # its level: 1 for an outermost frame
        self._node_hash = np.zeros(0, np.uint64)  # path hash of each node
        self._num_nodes = 0
        # (ids, path hashes) of nodes not yet in the hash store nor in _node_hash: both are
        # needed from the next batch on only (so never, for a single batch)
        self._unindexed: list[tuple[np.ndarray, np.ndarray]] = []
        self._hash = path_hash.PathHash(path_hash.new_seed())
        self._store = HashStore()
        self._stale = False  # nodes were added without hashes: rehash before the next batch

    @property
    def frame(self) -> npt.NDArray[np.int32]:
        """Frame-table index of each node."""
        return self._node_frame[: self._num_nodes]

    @property
    def parent(self) -> npt.NDArray[np.int32]:
        """Parent node of each node (the next frame outward), -1 for an outermost frame."""
        return self._node_parent[: self._num_nodes]

    @property
    def seed(self) -> int:
        """The seed of the path hashes in use."""
        return self._hash.seed

    @property
    def exact_only(self) -> bool:
        """Whether the last batch needed the exact path (nodes are rehashed at the next)."""
        return self._stale

    def add_records(
        self,
        change: npt.NDArray[np.bool_],
        npush: npt.NDArray[np.int64],
        frames: npt.NDArray[np.int64],
        thr: npt.NDArray[np.int32],
        keep: npt.NDArray[np.int64],
        stack_node: npt.NDArray[np.int32],
        stack_depth: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.int32]:
        """Vectorised: the node of each stack-change record's new stack (-1 for an empty stack,
        and for REPEAT records, which keep their thread's stack).

        Per record: *change* (False for REPEAT), *npush* (frames listed), *thr* (thread row),
        *keep* (levels kept below the listed frames, at most the thread's depth); *frames*
        are the listed frame indices of all records, innermost first per record. Per thread
        row: the node and depth of its stack before the batch (*stack_node*, -1 for the
        empty stack, and *stack_depth*). The caller carries each thread's last stack on."""
        if change.all():
            return self._add_changes(npush, frames, thr, keep, stack_node, stack_depth)
        rec_stack = np.full(change.size, -1, np.int32)
        changes = np.flatnonzero(change)  # (REPEAT records list no frames)
        if changes.size:
            rec_stack[changes] = self._add_changes(npush[changes], frames, thr[changes],
                                                   keep[changes], stack_node, stack_depth)
        return rec_stack

    def _add_changes(self, npush, frames, thr, keep, stack_node, stack_depth) -> np.ndarray:
        """Vectorised: :meth:`add_records` for stack-change records only."""
        if self._stale:
            self._rehash()
        self._index_new_nodes()
        if frames.size:
            self._hash.cover(int(frames.max()))
        src = np.cumsum(npush)
        src -= npush  # each record's first listed frame
        known, rep = self._listed_stacks(npush, frames, keep, src)
        own = np.flatnonzero((rep == np.arange(rep.size)) & (known < 0))  # into the tree
        row = np.zeros(rep.size, np.intp)  # a record's row among those (of its stand-in)
        row[own] = np.arange(own.size)
        row = row[rep]
        ev = _Events.build(npush[own], frames, keep[own], src[own])
        base = self._bases(ev, thr, keep, own, row, known, npush, stack_node, stack_depth)
        for reseed, exact in _HASHED_ATTEMPTS:
            if reseed:
                self._hash.reseed(path_hash.new_seed())
                self._rehash()
            node = self._hashed_nodes(ev, base, exact)
            if node is not None:
                break
        else:
            node = self._exact_nodes(ev, base)
            self._stale = True
        own_stack = np.full(own.size, -1, np.int32)
        has = ev.pushing
        own_stack[has] = node[ev.end[has] - 1]
        # records that only pop (or keep) end on their base
        bare = np.flatnonzero((ev.npush == 0) & (keep[own] > 0))
        be = base.event[bare]
        own_stack[bare] = np.where(be >= 0, node[np.maximum(be, 0)] if node.size else -1,
                                   base.node[bare])
        rec_stack = known.astype(np.int32)
        rest = np.flatnonzero(known < 0)
        rec_stack[rest] = own_stack[row[rest]]
        return rec_stack

    # ------------------------------------------------------------------ listed stacks
    def _listed_stacks(self, npush, frames, keep, src) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised: for records whose new stack is just their listed frames (they keep
        no levels, so it does not depend on their thread's earlier stack): per record, the
        node of a stack of an earlier batch it equals (else -1), and the first record of
        the batch listing the same frames (else the record itself). Only the rest go into
        the tree, so a stack met again costs a comparison of its frames, not a node lookup
        per frame.

        A listing's hash is the path hash of its stack: a node of earlier batches with that
        hash is walked up to the root and compared frame by frame; records with equal
        hashes in the batch are compared frame by frame. Mismatches stay apart."""
        n = npush.size
        known = np.full(n, -1, np.int64)
        rep = np.arange(n)
        fresh = np.flatnonzero((keep == 0) & (npush > 0))
        if not fresh.size:
            return known, rep
        h = self._hash.listings(frames, src[fresh], npush[fresh])
        node = self._store.lookup(h, self._node_hash)
        hit = np.flatnonzero(node >= 0)
        if hit.size:
            ok = self._path_is(node[hit], frames, src[fresh[hit]], npush[fresh[hit]])
            known[fresh[hit[ok]]] = node[hit[ok]]
            left = np.flatnonzero(known[fresh] < 0)
            fresh, h = fresh[left], h[left]
        if fresh.size < 2:
            return known, rep
        order, head = hashing.group_by_hash(h, exact=True)  # equal hashes in record order
        run_first = np.flatnonzero(head)
        first = order[np.repeat(run_first, np.diff(np.r_[run_first, h.size]))]
        later = np.flatnonzero(first != order)
        if not later.size:
            return known, rep
        dup, orig = fresh[order[later]], fresh[first[later]]
        same = npush[dup] == npush[orig]
        dup, orig = dup[same], orig[same]
        same = segments.ranges_equal(frames, src[dup], src[orig], npush[dup], _COMPARE_BLOCK)
        rep[dup[same]] = orig[same]
        return known, rep

    def _path_is(self, node, frames, src, npush) -> np.ndarray:
        """Vectorised over records, sequential over levels: whether each *node*'s stack is
        exactly the listing ``frames[src:src + npush]`` (innermost first)."""
        ok = self._node_depth[node] == npush
        rows = np.flatnonzero(ok)
        offsets, walked = paths.gather_paths(self._node_frame, self._node_parent, node[rows],
                                             npush[rows])
        listed = frames[segments.decode_ragged_ranges(src[rows], npush[rows])]
        differ = np.flatnonzero(walked != listed)
        ok[rows[np.searchsorted(offsets, differ, side="right") - 1]] = False
        return ok

    # ------------------------------------------------------------------ bases
    def _bases(self, ev: _Events, thr, keep, own, row, known, npush, stack_node,
               stack_depth) -> _Bases:
        """Vectorised: the base of each record of *ev*: the batch's records *own*; *row*
        maps every batch record to the row of its stand-in among them, *known* to the node
        of its stack when that was found among earlier batches' nodes. A base is the node
        at level *keep* of the thread's stack, pushed by the latest earlier record of the
        thread in the batch that keeps fewer levels (those in between keep that level, and
        that record set it), else carried from earlier batches."""
        order = np.argsort(thr.astype(segments.small_key_dtype(max(stack_node.size, 1))),
                           kind="stable")  # a radix sort for small keys
        position = np.empty(order.size, np.intp)
        position[order] = np.arange(order.size)
        rows = np.flatnonzero(keep[own])  # rows that need a base
        rec = own[rows]
        k = keep[rec]
        j = segments.previous_below(keep[order], position[rec], k)
        p = order[np.maximum(j, 0)]
        found = (j >= 0) & (thr[p] == thr[rec])
        within = k - keep[p] - 1  # the pushed frame at level k, counted from the outermost
        source = row[p]
        in_tree = found & (known[p] < 0)
        if (in_tree & (within >= ev.npush[source])).any():
            raise ValueError("a record keeps more levels than its thread's stack has")
        event = np.full(own.size, -1, np.int64)
        event[rows[in_tree]] = ev.start[source[in_tree]] + within[in_tree]
        node = np.full(own.size, -1, np.int32)
        on_known = np.flatnonzero(found & ~in_tree)
        node[rows[on_known]] = self._walk_up(known[p[on_known]], npush[p[on_known]],
                                             k[on_known])
        lost = np.flatnonzero(~found)
        node[rows[lost]] = self._walk_up(stack_node[thr[rec[lost]]],
                                         stack_depth[thr[rec[lost]]], k[lost])
        carried = np.sort(np.r_[rows[on_known], rows[lost]])
        return _Bases(event, node, carried)

    def _walk_up(self, node: np.ndarray, depth: np.ndarray, level: np.ndarray) -> np.ndarray:
        """Vectorised over queries, sequential over levels: the node at *level* of the
        stacks ending on *node* at *depth*."""
        steps = np.asarray(depth, np.int64) - level
        if (steps < 0).any():
            raise ValueError("a record keeps more levels than its thread's stack has")
        return paths.node_above(self._node_parent, node, steps).astype(np.int32)

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
        order, head = hashing.group_by_hash(event_hash, exact)
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
        self._write_nodes(ev.frame[new_first], parent[new_first], ev.level[new_first])
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
        h = self._hash.terms(ev.frame, ev.level)
        np.cumsum(h, out=h)
        before = np.zeros(ev.start.size, np.uint64)  # the cumsum before each record
        inner = np.flatnonzero(ev.start)
        before[inner] = h[ev.start[inner] - 1]
        has = np.flatnonzero(base.event >= 0)
        be = base.event[has]
        base_record = np.full(ev.start.size, -1, np.int64)
        base_record[has] = ev.record[be]
        base_hash[has] = h[be] - before[base_record[has]]
        segments.decode_chain_sums(base_hash, base_record)
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
        """Vectorised per stack level: node of every event by exact (parent, frame) pairs
        (:func:`~tachyon_format.kernels.prefix_tree.number_pairs`), without hashes (after
        hash proofs failed under two seeds); same ids as hashing."""
        nf = ev.frame.size
        m = self._num_nodes
        known = prefix_tree.KnownPairs(self._node_parent[:m], self._node_frame[:m])
        node = np.full(nf, -1, np.int64)
        # parent of each event: the event before it, or for a record's first its base
        parent_event = np.arange(nf) - 1
        parent_node = np.full(nf, -2, np.int64)  # -2: take the parent event's node
        has = ev.pushing
        starts, be = ev.start[has], base.event[has]
        parent_event[starts] = be
        parent_node[starts] = np.where(be >= 0, -2, base.node[has])
        # per new (temporary) node, numbered level by level: its first event and parent
        temp_first: list[np.ndarray] = []
        temp_parent: list[np.ndarray] = []
        temp_count = 0
        by_level = np.argsort(ev.level, kind="stable")
        bounds = np.flatnonzero(np.r_[True, np.diff(ev.level[by_level]) != 0, True])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=False):
            sel = by_level[lo:hi]
            pn = parent_node[sel]
            from_event = pn == -2
            pn[from_event] = node[parent_event[sel[from_event]]]
            node[sel], new = prefix_tree.number_pairs(pn, ev.frame[sel], m + temp_count, known)
            temp_count += new.size
            temp_first.append(sel[new])
            temp_parent.append(pn[new])
        # number the new nodes by first event, as the hashed path does
        first_event = np.concatenate(temp_first) if temp_first else np.zeros(0, np.int64)
        order = np.argsort(first_event)
        renumber = np.arange(m + first_event.size)
        renumber[m + order] = np.arange(m, m + first_event.size)
        parent = np.concatenate(temp_parent) if temp_parent else np.zeros(0, np.int64)
        parent = np.where(parent >= 0, renumber[np.maximum(parent, 0)], -1)
        self._write_nodes(ev.frame[first_event[order]], parent[order],
                          ev.level[first_event[order]])
        self._num_nodes += order.size
        return renumber[node].astype(np.int32)

    # ------------------------------------------------------------------ state
    def _write_nodes(self, frame: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> None:
        """Write nodes with ids from the current count on (without counting them; their
        hashes come with the next batch, see _index_new_nodes)."""
        need = self._num_nodes + frame.size
        if need > self._node_frame.size:
            cap = max(need, 2 * self._node_frame.size)
            self._node_frame = segments.grown(self._node_frame, cap, self._num_nodes)
            self._node_parent = segments.grown(self._node_parent, cap, self._num_nodes)
            self._node_depth = segments.grown(self._node_depth, cap, self._num_nodes)
        self._node_frame[self._num_nodes:need] = frame
        self._node_parent[self._num_nodes:need] = parent
        self._node_depth[self._num_nodes:need] = depth

    def _index_new_nodes(self) -> None:
        """Put the path hashes of the nodes of earlier batches in _node_hash and the store."""
        if not self._unindexed:
            return
        if self._node_hash.size < self._num_nodes:
            cap = max(self._num_nodes, 2 * self._node_hash.size)
            self._node_hash = segments.grown(self._node_hash, cap, self._node_hash.size)
        for ids, hashes in self._unindexed:
            self._node_hash[ids] = hashes
            self._store.add(hashes, ids)
        self._unindexed.clear()

    def _rehash(self) -> None:
        """Vectorised (pointer jumping): path hashes of all nodes under the current seed, and
        the hash store rebuilt from them."""
        m = self._num_nodes
        self._node_hash = self._hash.nodes(self._node_frame[:m], self._node_parent[:m],
                                           self._node_depth[:m])
        self._store = HashStore()
        self._store.add(self._node_hash, np.arange(m))
        self._unindexed.clear()
        self._stale = False
