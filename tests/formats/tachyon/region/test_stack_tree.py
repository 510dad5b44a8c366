"""StackTree (the hashed, vectorised prefix-tree builder) against a sequential model.

The model walks the records one by one with a Python stack per thread and a dict
``(parent, frame) -> node``, numbering new nodes as it meets them (records in order, each
record's frames outermost first): the tree must give the very same ids, not just the same
paths, whatever the batches and whatever the hashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tachyon_format.formats.tachyon.region import path_hash
from tachyon_format.formats.tachyon.region.path_hash import PathHash
from tachyon_format.formats.tachyon.region.stack_tree import _HASHED_ATTEMPTS, MAX_DEPTH, StackTree
from tachyon_format.kernels.hash_store import HashStore

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
U64 = (1 << 64) - 1


# ---------------------------------------------------------------------- the model
@dataclass
class Record:
    thread: int
    change: bool  # False: REPEAT
    keep: int  # levels kept below the pushed frames
    frames: list[int]  # innermost first, as in the file


@dataclass
class Model:
    """Sequential reference: per-thread stacks of node ids, one dict of nodes."""

    stacks: dict[int, list[int]] = field(default_factory=dict)
    nodes: dict[tuple[int, int], int] = field(default_factory=dict)
    frame: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)

    def add(self, rec: Record) -> int:
        if not rec.change:
            return -1
        stack = self.stacks.get(rec.thread, [])
        assert rec.keep <= len(stack)
        stack = stack[: rec.keep]
        for f in reversed(rec.frames):
            key = (stack[-1] if stack else -1, f)
            if key not in self.nodes:
                self.nodes[key] = len(self.frame)
                self.frame.append(f)
                self.parent.append(key[0])
            stack.append(self.nodes[key])
        self.stacks[rec.thread] = stack
        return stack[-1] if stack else -1


@dataclass
class Threads:
    """Each thread's stack between batches (the decoder's thread table keeps them)."""

    node: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)


def feed(tree: StackTree, batch: list[Record], threads: Threads) -> list[int]:
    """Add new threads (empty stacks), pass the batch, carry each thread's last stack."""
    for rec in batch:
        while len(threads.node) <= rec.thread:
            threads.node.append(-1)
            threads.depth.append(0)
    change = np.array([r.change for r in batch], bool)
    npush = np.array([len(r.frames) for r in batch], np.int64)
    frames = np.array([f for r in batch for f in r.frames], np.int64)
    thr = np.array([r.thread for r in batch], np.int32)
    keep = np.array([r.keep for r in batch], np.int64)
    got = tree.add_records(change, npush, frames, thr, keep,
                           np.array(threads.node, np.int32),
                           np.array(threads.depth, np.int64)).tolist()
    for rec, node in zip(batch, got, strict=True):
        if rec.change:
            threads.node[rec.thread] = node
            threads.depth[rec.thread] = rec.keep + len(rec.frames)
    return got


def check(records: list[Record], cuts: list[int]) -> StackTree:
    """Feed the records in batches cut at *cuts*; compare with the model exactly."""
    model = Model()
    expected = [model.add(r) for r in records]
    tree = StackTree()
    threads = Threads()
    got: list[int] = []
    bounds = [0, *sorted(cuts), len(records)]
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        got += feed(tree, records[lo:hi], threads)
    assert got == expected
    assert tree.frame.tolist() == model.frame
    assert tree.parent.tolist() == model.parent
    return tree


# ---------------------------------------------------------------------- strategies
@st.composite
def record_streams(draw, max_threads=12, max_records=60, alphabet=6):
    """Valid record streams: keep never exceeds the thread's depth (the decoder checks
    that, and clamps POP_PUSH pops deeper than the stack to keep 0)."""
    threads = draw(st.integers(1, max_threads))
    depth = [0] * threads
    records = []
    for _ in range(draw(st.integers(0, max_records))):
        t = draw(st.integers(0, threads - 1))
        kind = draw(st.sampled_from(["repeat", "full", "suffix", "pop_push", "deep"]))
        if kind == "repeat":
            records.append(Record(t, False, 0, []))
            continue
        if kind == "full":
            keep = 0
        elif kind == "suffix":
            keep = draw(st.integers(0, depth[t]))
        else:  # POP_PUSH: pops may run past the bottom of the stack
            keep = max(depth[t] - draw(st.integers(0, depth[t] + 3)), 0)
        room = MAX_DEPTH - keep
        if kind == "deep":  # long runs of frames, cheap to draw
            npush = draw(st.integers(0, room))
            a, b = draw(st.integers(0, alphabet)), draw(st.integers(1, 3))
            frames = [(a + b * i // 4) % (alphabet + 1) for i in range(npush)]
        else:
            frames = draw(st.lists(st.integers(0, alphabet), max_size=min(room, 8)))
        records.append(Record(t, True, keep, frames))
        depth[t] = keep + len(frames)
    return records


@st.composite
def streams_and_cuts(draw, **kwargs):
    records = draw(record_streams(**kwargs))
    cuts = draw(st.lists(st.integers(0, len(records)), max_size=5))
    return records, cuts


# ---------------------------------------------------------------------- properties
@SETTINGS
@given(streams_and_cuts())
def test_matches_sequential_model(case):
    check(*case)


@SETTINGS
@given(streams_and_cuts(max_threads=40, max_records=120, alphabet=2))
def test_many_threads_few_frames(case):
    check(*case)


@settings(SETTINGS, max_examples=25)
@given(streams_and_cuts(max_threads=2, max_records=40, alphabet=1000))
def test_deep_distinct_frames(case):
    check(*case)


@SETTINGS
@given(record_streams(), st.data())
def test_ids_do_not_depend_on_batches(records, data):
    one = check(records, [])
    cuts = data.draw(st.lists(st.integers(0, len(records)), max_size=8))
    many = check(records, cuts)
    assert one.frame.tolist() == many.frame.tolist()
    assert one.parent.tolist() == many.parent.tolist()


def test_full_depth_stacks_and_empty_ones():
    deep = list(range(MAX_DEPTH))
    records = [Record(0, True, 0, deep), Record(1, True, 0, deep[::-1]),
               Record(0, True, MAX_DEPTH - 1, [7]), Record(0, True, 0, []),
               Record(1, False, 0, []), Record(1, True, 3, []), Record(0, True, 0, deep)]
    for cuts in ([], [1], [2, 3], [1, 2, 3, 4, 5, 6]):
        tree = check(records, cuts)
    assert tree.frame.size == 2 * MAX_DEPTH + 1


def test_parents_come_before_children():
    records = [Record(t % 3, True, 0, [t % 5, 2, t % 4, 1]) for t in range(30)]
    tree = check(records, [7, 19])
    assert (tree.parent < np.arange(tree.parent.size)).all()


def test_listed_stacks_met_again_skip_the_tree():
    """Records that keep no levels list their whole stack: one listing the frames of an
    earlier record of the batch stands in for it, one listing an earlier batch's stack
    takes its node. Later records of their threads rest on those stacks."""
    deep = [9, 8, 7, 6, 5]
    records = [Record(0, True, 0, deep), Record(1, True, 0, deep), Record(2, True, 0, deep[1:]),
               Record(1, True, 3, [4]), Record(2, True, 0, deep), Record(2, True, 5, [3]),
               Record(0, True, 2, [2, 1]), Record(1, True, 0, [7, 6])]
    seen = []
    real = StackTree._listed_stacks

    def spy(self, *args):
        known, rep = real(self, *args)
        seen.append((known.tolist(), rep.tolist()))
        return known, rep

    with mock.patch.object(StackTree, "_listed_stacks", spy):
        check(records, [])
        check(records, [3])
    assert seen[0] == ([-1] * 8, [0, 0, 2, 3, 0, 5, 6, 7])
    assert seen[1] == ([-1] * 3, [0, 0, 2])  # batches cut at record 3
    assert seen[2] == ([-1, 4, -1, -1, -1], [0, 1, 2, 3, 4])


def test_no_records_or_only_repeats():
    tree = StackTree()
    assert feed(tree, [Record(0, False, 0, [])], Threads()) == [-1]
    empty = np.zeros(0, np.int64)
    out = tree.add_records(np.zeros(0, bool), empty, empty, np.zeros(0, np.int32), empty,
                           np.full(1, -1, np.int32), np.zeros(1, np.int64))
    assert out.size == 0 and tree.frame.size == 0


# ---------------------------------------------------------------------- collisions
def _wrong_nodes(self, hashes, node_hash):
    """A hash store that proposes some existing node for every hash."""
    return np.arange(hashes.size, dtype=np.int32) % max(self.size, 1) if self.size else \
        np.full(hashes.size, -1, np.int32)


def _colliding_listings(hasher, frames, src, npush):
    """Every listing of a length shares one hash: only the frame comparison tells them apart."""
    return np.asarray(npush, np.uint64)


def _weak_terms(hasher, frame, level):
    """Terms that collide all the time: paths with equal frame sums share a hash."""
    return np.asarray(frame, np.int64).astype(np.uint64) % np.uint64(3)


def _small_terms(hasher, frame, level):
    """Distinct-ish terms with all high bits 0: the fast grouping lumps paths together."""
    return (np.asarray(frame, np.uint64) * np.uint64(1000003)
            + np.asarray(level, np.uint64) * np.uint64(7919)) & np.uint64(0xFFFFFF)


@pytest.mark.parametrize(("owner", "name", "fake", "alphabet"), [
    # path hash collisions fall back to exact grouping
    (PathHash, "terms", _weak_terms, 3),
    # ties of high bits are regrouped exactly
    (PathHash, "terms", _small_terms, 3),
    # listings sharing a hash stay apart
    (PathHash, "listings", _colliding_listings, 2),
    # stacks the hash store proposes wrongly are refused
    (HashStore, "lookup", _wrong_nodes, 2),
], ids=["weak-terms", "high-bit-ties", "colliding-listings", "wrong-proposals"])
@SETTINGS
@given(data=st.data())
def test_bad_hashes_still_give_the_exact_tree(owner, name, fake, alphabet, data):
    case = data.draw(streams_and_cuts(alphabet=alphabet))
    with mock.patch.object(owner, name, fake):
        check(*case)


def test_a_fresh_seed_retries_a_collision():
    """Weak terms under the first seed only: the batch is redone under the next seed,
    and later batches stay on the hashed path."""
    real = PathHash.terms
    seeds = iter(range(1, 100))

    def weak_under_seed_1(hasher, frame, level):
        return _weak_terms(hasher, frame, level) if hasher.seed == 1 else real(hasher, frame,
                                                                               level)

    records = [Record(t % 2, True, 0, [t % 3, (t // 3) % 3, 1]) for t in range(40)]
    with mock.patch.object(PathHash, "terms", weak_under_seed_1), \
            mock.patch.object(path_hash, "new_seed", lambda: next(seeds)):
        tree = check(records, [10, 25])
    assert tree.seed == 2 and not tree.exact_only


def test_proof_failures_are_noticed():
    """A tree whose proof always fails must still be exact (and must have noticed)."""
    calls = []

    def never(self, *args):
        calls.append(args)
        return False

    records = [Record(0, True, 0, [1, 2, 3]), Record(0, True, 1, [4]), Record(1, True, 0, [3])]
    with mock.patch.object(StackTree, "_proven", never):
        tree = check(records, [1])
    assert len(calls) == 2 * len(_HASHED_ATTEMPTS)
    assert tree.exact_only


def test_terms_tell_frames_apart_at_each_level():
    hasher = PathHash(path_hash.new_seed())
    hasher.cover(999)
    frame = np.repeat(np.arange(1000), 3)
    level = np.tile(np.array([1, 2, MAX_DEPTH]), 1000)
    terms = hasher.terms(frame, level)
    for lv in (1, 2, MAX_DEPTH):
        assert np.unique(terms[level == lv]).size == 1000


@pytest.mark.parametrize("seed", [0, 1, U64])
def test_rehash_reproduces_the_stored_hashes(seed):
    records = [Record(t % 3, True, t % 2, [t % 4, 5, t % 7]) for t in range(3, 40)]
    records = [Record(r.thread, True, 0, r.frames) for r in records[:3]] + records[3:]
    tree = check(records, [])
    def stored(store):
        return sorted(k for run in store.runs for k in run.tolist())

    tree._index_new_nodes()
    before = stored(tree._store)
    hashes = tree._node_hash[: tree.frame.size].tolist()
    tree._rehash()
    assert stored(tree._store) == before
    assert tree._node_hash[: tree.frame.size].tolist() == hashes
    tree._hash.reseed(seed)
    tree._rehash()
    more = [Record(t % 3, True, 1, [t % 5]) for t in range(10)]
    model = Model()
    for r in records:
        model.add(r)
    threads = Threads([model.stacks[t][-1] for t in range(3)],
                      [len(model.stacks[t]) for t in range(3)])
    assert feed(tree, more, threads) == [model.add(r) for r in more]
    assert tree.frame.tolist() == model.frame and tree.parent.tolist() == model.parent
