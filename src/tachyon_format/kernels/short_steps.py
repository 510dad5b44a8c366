"""The path from 0 through a table of short forward steps, found without a loop per step.

A run of back-to-back records whose size depends on their content (each record's end is where
the next begins) is a chain ``0, step[0], step[step[0]], ...``: sequential if walked one record
at a time. When every step moves forward by at most ``max_step`` places, the chain crosses each
block of ``block`` places at one of ``max_step`` phases, so all blocks are walked at once for
every phase (numpy over the lanes, one iteration per record of a block), the phases are
chained from block to block (one Python iteration per block), and the blocks are walked again
on their one true phase to mark the path.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BLOCK = 512
"""Places per block: a walk of about ``BLOCK / min_step`` iterations, over ``max_step`` lanes
per block."""


def walk_short_steps(nxt: npt.NDArray[np.integer], max_step: int, min_step: int = 1,
                     block: int = BLOCK) -> npt.NDArray[np.intp]:
    """Vectorised: the places ``0, nxt[0], nxt[nxt[0]], ...`` (in order) while they are below
    ``nxt.size``, given ``min_step <= nxt[r] - r <= max_step`` for every ``r``, or ``nxt[r] >=
    nxt.size`` (a place with no way on, where the path stops)."""
    size = nxt.size
    if size == 0:
        return np.zeros(0, np.intp)
    if block < max_step:
        raise ValueError("a block must be at least one step long")
    dtype = np.int32 if size + block < 2**31 else np.int64
    nxt = np.asarray(nxt, dtype)
    blocks = -(-size // block)
    steps = block // min_step + 1  # iterations that take every lane out of its block
    block_end = np.minimum((np.arange(blocks, dtype=dtype) + 1) * block, size).astype(dtype)
    # 1. where the path leaves each block, for each phase it may enter it at: every lane
    #    steps until it is out of its block (then stays), no compaction
    place = (np.arange(blocks, dtype=dtype) * block)[:, None] + np.arange(max_step, dtype=dtype)
    place = place.ravel()
    limit = np.repeat(block_end, max_step)
    following = np.empty_like(place)
    inside = np.empty(place.size, bool)
    for _ in range(steps):
        np.less(place, limit, out=inside)
        np.take(nxt, place, mode="clip", out=following)
        np.copyto(place, following, where=inside)
    # 2. the place the path enters each block at (-1: the path stopped before it)
    exits = place.reshape(blocks, max_step).tolist()
    entry = np.full(blocks, -1, dtype)
    at = 0
    for b in range(blocks):
        phase = at - b * block
        if at >= size or phase >= max_step:  # (stopped, or a step longer than promised)
            break
        entry[b] = at
        at = exits[b][phase]
    # 3. each block walked on its true phase, marking the path (places at or past the
    #    block's end mark the spare last slot)
    on_path = np.zeros(size + 1, bool)
    started = np.flatnonzero(entry >= 0)
    place, limit = entry[started], block_end[started]
    following = np.empty_like(place)
    inside = np.empty(place.size, bool)
    for _ in range(steps):
        np.less(place, limit, out=inside)
        on_path[np.where(inside, place, size)] = True
        np.take(nxt, place, mode="clip", out=following)
        np.copyto(place, following, where=inside)
    return np.flatnonzero(on_path[:size])
