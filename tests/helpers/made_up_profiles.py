"""Small made-up profiles with a timeline (random stacks, threads, statuses and times) for
hypothesis tests of writers: file names include a profiler-internal one, ``<GC>`` and a
pseudo-file, so that the collectors' special cases come up."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tachyon_format import Frames, Profile, Samples, Stacks, Strings, Threads

names = st.sampled_from(["a.py", "b.py", "<native>", "<GC>", "x/_sync_coordinator.py", "f"])


@st.composite
def profiles(draw) -> Profile:
    """Small profiles with a timeline: random stacks, threads, statuses and times."""
    texts = draw(st.lists(names, min_size=1, max_size=5, unique=True))
    n_frames = draw(st.integers(1, 6))
    pick = st.integers(0, len(texts) - 1)
    frames = Frames(
        filename=np.array(draw(st.lists(pick, min_size=n_frames, max_size=n_frames)), np.uint32),
        funcname=np.array(draw(st.lists(pick, min_size=n_frames, max_size=n_frames)), np.uint32),
        lineno=np.array(draw(st.lists(st.integers(-1, 5), min_size=n_frames,
                                      max_size=n_frames)), np.int32),
        end_lineno=np.full(n_frames, -1, np.int32),
        column=np.array(draw(st.lists(st.integers(-1, 3), min_size=n_frames,
                                      max_size=n_frames)), np.int32),
        end_column=np.full(n_frames, -1, np.int32), opcode=np.full(n_frames, -1, np.int16))
    stack_lists = draw(st.lists(st.lists(st.integers(0, n_frames - 1), max_size=5),
                                min_size=1, max_size=6))
    stacks, ids = Stacks.from_lists(stack_lists)
    n = draw(st.integers(0, 40))
    which = draw(st.lists(st.integers(0, len(stack_lists) - 1), min_size=n, max_size=n))
    n_threads = draw(st.integers(1, 3))
    steps = draw(st.lists(st.integers(-3000, 3000), min_size=n, max_size=n))
    samples = Samples(
        stack=ids[np.array(which, np.int64)].astype(np.int32),
        thread=np.array(draw(st.lists(st.integers(0, n_threads - 1), min_size=n,
                                      max_size=n)), np.int32),
        timestamp_us=(10**6 + np.cumsum(np.array(steps, np.int64))).astype(np.uint64),
        status=np.array(draw(st.lists(st.integers(0, 63), min_size=n, max_size=n)), np.uint8))
    threads = Threads(np.zeros(n_threads, np.uint32), np.arange(7, 7 + n_threads,
                                                                dtype=np.uint64))
    return Profile(Strings.from_texts(texts), frames, stacks, threads, samples)


def renumbered(profile: Profile, permutation: list[int]) -> Profile:
    """*profile* with the nodes of its stack tree numbered by *permutation* (node ``i``
    becomes ``permutation[i]``), so that a parent may come after its children: the same
    stacks, as a reader that numbers its tree otherwise would give them."""
    from dataclasses import replace

    new = np.asarray(permutation, np.int64)
    old = np.empty_like(new)
    old[new] = np.arange(new.size)
    tree = profile.stacks
    new_or_none = np.append(new, -1)  # (index -1: no node, stays -1)
    stacks = Stacks(tree.frame[old], new_or_none[tree.parent[old]].astype(np.int32))
    samples = replace(profile.samples,
                      stack=new_or_none[profile.samples.stack].astype(np.int32))
    return replace(profile, stacks=stacks, samples=samples)
