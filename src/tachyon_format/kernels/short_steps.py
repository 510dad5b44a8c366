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


def walk_short_steps(nxt: npt.NDArray[np.integer], max_step: int,
                     block: int = BLOCK) -> npt.NDArray[np.intp]:
    """Vectorised: the places ``0, nxt[0], nxt[nxt[0]], ...`` (in order) while they are below
    ``nxt.size``, given ``0 < nxt[r] - r <= max_step`` for every ``r``, or ``nxt[r] >=
    nxt.size`` (a place with no way on, where the path stops)."""
    size = nxt.size
    if size == 0:
        return np.zeros(0, np.intp)
    if block < max_step:
        raise ValueError("a block must be at least one step long")
    blocks = -(-size // block)
    block_end = np.minimum((np.arange(blocks, dtype=np.intp) + 1) * block, size)
    # 1. where the path leaves each block, for each phase it may enter it at
    lane = np.arange(blocks * max_step, dtype=np.intp)
    place = (lane // max_step) * block + lane % max_step
    exits = np.full(lane.size, size, np.intp)
    inside = place < block_end[lane // max_step]
    lane, place = lane[inside], place[inside]
    limit = block_end[lane // max_step]
    while lane.size:
        place = nxt[place].astype(np.intp)
        left = place >= limit
        exits[lane[left]] = place[left]
        keep = ~left
        lane, place, limit = lane[keep], place[keep], limit[keep]
    # 2. the phase the path enters each block at (-1: the path stopped before it)
    exits = exits.reshape(blocks, max_step).tolist()
    entry = np.full(blocks, -1, np.intp)
    at = 0
    for b in range(blocks):
        phase = at - b * block
        if at >= size or phase >= max_step:  # (stopped, or a step longer than promised)
            break
        entry[b] = at
        at = exits[b][phase]
    # 3. each block walked on its true phase, marking the path
    on_path = np.zeros(size, bool)
    started = np.flatnonzero(entry >= 0)
    place, limit = entry[started], block_end[started]
    while place.size:
        on_path[place] = True
        place = nxt[place].astype(np.intp)
        keep = place < limit
        place, limit = place[keep], limit[keep]
    return np.flatnonzero(on_path)
