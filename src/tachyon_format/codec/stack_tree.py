"""The stack prefix tree (Firefox-profiler style) grown from the records' pushed frames.

Every pushed frame becomes a node ``(parent, frame)``, deduplicated exactly, so a node id
names a whole call stack. The parent of a record's bottom pushed frame is the latest push of
the same thread one level below (in this batch, or carried from earlier batches).
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .kernels import U32_MAX

MAX_DEPTH = 256

__all__ = ["StackTree"]


class _NodeStore:
    """Exact (parent, frame) -> node id map: sorted uint64 key runs merged geometrically."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Vectorised: node ids of sorted unique *keys*, -1 where absent."""
        out = np.full(keys.size, -1, dtype=np.int32)
        for run_keys, run_ids in self.runs:
            pos = np.searchsorted(run_keys, keys)
            pos = np.minimum(pos, run_keys.size - 1)
            hit = run_keys[pos] == keys
            out[hit] = run_ids[pos[hit]]
        return out

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add sorted unique new *keys* with their *ids*, merging runs of similar size."""
        if not keys.size:
            return
        self.runs.append((keys, ids))
        while len(self.runs) > 1 and self.runs[-2][0].size <= 2 * self.runs[-1][0].size:
            (k2, i2), (k1, i1) = self.runs.pop(), self.runs.pop()
            k = np.concatenate([k1, k2])
            order = np.argsort(k, kind="stable")
            self.runs.append((k[order], np.concatenate([i1, i2])[order]))


class StackTree:
    """Growing prefix tree of stacks plus each thread's current path through it."""

    def __init__(self) -> None:
        self.threads = 0
        self._path = np.zeros((0, MAX_DEPTH + 1), np.int32)
        self._node_frame = np.zeros(1024, np.int32)
        self._node_parent = np.zeros(1024, np.int32)
        self._num_nodes = 0
        self._store = _NodeStore()

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
        if row >= self._path.shape[0]:
            path = np.zeros((max(16, 2 * row), MAX_DEPTH + 1), np.int32)
            path[:row] = self._path
            self._path = path
        self._path[row] = 0
        self.threads += 1
        return row

    def add_records(self, change, npush, frames, thr, keep) -> np.ndarray:
        """Vectorised: the prefix-tree node of each stack-change record's new stack (-1 for an
        empty stack, and for REPEAT records, which keep their thread's stack).

        Per record: *change* (False for REPEAT), *npush* (frames listed), *thr* (thread row, below
        :attr:`threads`), *keep* (levels kept below the listed frames); *frames* are the
        listed frame indices of all records, innermost first per record."""
        n = change.size
        rec_stack = np.full(n, -1, np.int32)
        if not change.any():
            return rec_stack
        nf = frames.size
        f_rec = np.repeat(np.arange(n), npush)
        f_first = np.cumsum(npush) - npush
        k = np.arange(nf) - f_first[f_rec]  # 0 = innermost
        level = (keep[f_rec] + npush[f_rec] - k).astype(np.int64)
        nthreads = max(self.threads, 1)
        gkey = (level * nthreads + thr[f_rec]).astype(
            kernels.small_key_dtype((MAX_DEPTH + 1) * nthreads))
        order = np.argsort(gkey, kind="stable")
        g_s = gkey[order].astype(np.int64)
        key2 = g_s * n + f_rec[order]
        # parent of each pushed frame: the frame above in its record, else a lookup
        bottom = k == npush[f_rec] - 1
        parent_f = np.arange(nf) + 1  # flat index of the parent frame
        parent_const = np.full(nf, -2, np.int64)  # node id when the parent is not pushed here
        bidx = np.flatnonzero(bottom)
        pf, pc = self._latest_push(f_rec[bidx], keep[f_rec[bidx]], thr, n, nthreads,
                                   key2, g_s, order)
        parent_f[bidx] = pf
        parent_const[bidx] = pc
        node = np.full(nf, -1, np.int32)
        lev_s = level[order]
        bounds = np.flatnonzero(np.r_[True, lev_s[1:] != lev_s[:-1], True])
        for j in range(bounds.size - 1):
            sel = order[bounds[j]: bounds[j + 1]]
            pc = parent_const[sel]
            parent = np.where(pc != -2, pc, node[np.where(pc != -2, 0, parent_f[sel])])
            node[sel] = self._intern(parent.astype(np.int64), frames[sel])
        has = npush > 0
        rec_stack[has] = node[f_first[has]]
        # records that only pop (or keep) take the node at level `keep`
        zero = np.flatnonzero(change & ~has & (keep > 0))
        if zero.size:
            pf, pc = self._latest_push(zero, keep[zero], thr, n, nthreads, key2, g_s, order)
            inner = node[np.maximum(pf, 0)] if node.size else pc
            rec_stack[zero] = np.where(pc != -2, pc, inner)
        self._carry_paths(thr, level, f_rec, node, order, g_s, nthreads)
        return rec_stack

    def _latest_push(self, rec, lev, thr, n, nthreads, key2, g_s, order):
        """Vectorised: the latest pushed frame at level *lev* of each record's thread before
        that record; returns (flat frame index, node id, or -2 if the frame is pushed here)."""
        lev = np.asarray(lev, np.int64)
        t = thr[rec].astype(np.int64)
        q = (lev * nthreads + t) * n + rec
        j = np.searchsorted(key2, q) - 1
        jj = np.clip(j, 0, max(g_s.size - 1, 0))
        found = (j >= 0) & (lev > 0)
        if g_s.size:
            found &= g_s[jj] == lev * nthreads + t
        else:
            found[:] = False
        pf = np.where(found, order[jj], -1) if order.size else np.full(rec.size, -1)
        carried = self._path[t, np.minimum(lev, MAX_DEPTH)]
        pc = np.where(found, -2, np.where(lev > 0, carried, -1))
        return pf, pc

    def _carry_paths(self, thr, level, f_rec, node, order, g_s, nthreads) -> None:
        """Record, per thread and level, the node of the latest push (for later batches)."""
        if not order.size:
            return
        last = np.flatnonzero(np.r_[g_s[1:] != g_s[:-1], True])
        g = g_s[last]
        self._path[g % nthreads, g // nthreads] = node[order[last]]

    def _intern(self, parent: np.ndarray, frame: np.ndarray) -> np.ndarray:
        """Vectorised: node ids of (parent, frame) pairs, creating the missing ones."""
        keys = ((parent + 1).astype(np.uint64) << np.uint64(32)) | frame.astype(np.uint64)
        uk, _, inv = kernels.unique_inverse(keys)
        ids = self._store.lookup(uk)
        miss = np.flatnonzero(ids < 0)
        if miss.size:
            new_ids = np.arange(self._num_nodes, self._num_nodes + miss.size, dtype=np.int32)
            ids[miss] = new_ids
            self._append_nodes(uk[miss], new_ids)
        return ids[inv.reshape(-1)]

    def _append_nodes(self, keys: np.ndarray, ids: np.ndarray) -> None:
        need = self._num_nodes + ids.size
        if need > self._node_frame.size:
            cap = max(need, 2 * self._node_frame.size)
            self._node_frame = np.resize(self._node_frame, cap)
            self._node_parent = np.resize(self._node_parent, cap)
        s = slice(self._num_nodes, need)
        self._node_frame[s] = (keys & np.uint64(U32_MAX)).astype(np.int32)
        self._node_parent[s] = (keys >> np.uint64(32)).astype(np.int64) - 1
        self._num_nodes = need
        self._store.add(keys, ids)
