"""Evented profiles: open/close events to weighted intervals (reading), and back (writing).

Reading (tier d, one sequential scan): the events are replayed on a stack as speedscope's
``CallTreeProfileBuilder`` does, with its checks (``at`` never decreases, a close names the
frame on top, nothing is left open at the end, and no stack deeper than ``MAX_STACK_DEPTH``).
Every stretch of time in which the stack is not empty becomes one interval: its start, its
end, and the stack as a node of a prefix tree built on the way (one tree for all the
profiles of a file). speedscope shows the same: a frame's weight is the time it was on the
stack. An open adds at most one node and an interval names its node, so memory grows with
the events, never with the depth of the stacks they make.

Writing (vectorised): consecutive samples of one thread share the outer frames of their two
stacks (found for all pairs at once, one numpy step per level of the deeper stack); between
them only the frames that differ are closed (innermost first) and opened (outermost first).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.model import Stacks

from ..sources import MAX_STACK_DEPTH
from .file import MAX_AT, fail


class Intervals:
    """The intervals of the evented profiles of a file (``start``, ``end``, ``node``, one
    profile after the other), and the prefix tree (``frame``, ``parent``, parents first)
    their nodes belong to."""

    def __init__(self) -> None:
        self.frame: list[int] = []
        self.parent: list[int] = []
        self.start: list[Any] = []
        self.end: list[Any] = []
        self.node: list[int] = []
        self.children: dict[tuple[int, int], int] = {}  # (parent, frame) -> node

    def __len__(self) -> int:
        return len(self.node)

    def stacks(self) -> Stacks:
        return Stacks(np.array(self.frame, np.int32), np.array(self.parent, np.int32))


def scan_events(events: Any, where: str, num_frames: int, out: Intervals | None = None
                ) -> Intervals:
    """Replay *events* (the JSON list of an evented profile at path *where*), appending its
    intervals to *out* (a new :class:`Intervals` by default), which is returned."""
    if not isinstance(events, list):
        raise fail(where, "not a list")
    if out is None:
        out = Intervals()
    children = out.children
    stack: list[int] = []  # nodes, outermost first
    frames_on: list[int] = []
    last = None
    for i, event in enumerate(events):
        if type(event) is not dict:
            raise fail(f"{where}[{i}]", "an event is an object")
        kind, frame, at = event.get("type"), event.get("frame"), event.get("at")
        if type(frame) is not int or not 0 <= frame < num_frames:
            raise fail(f"{where}[{i}].frame", f"not an index of the {num_frames} shared "
                       f"frames: {frame!r}")
        if type(at) not in (int, float) or not -MAX_AT <= at <= MAX_AT:
            raise fail(f"{where}[{i}].at", f"not a number within +-2**62: {at!r}")
        if last is not None and at > last and stack:
            out.start.append(last)
            out.end.append(at)
            out.node.append(stack[-1])
        elif last is not None and at < last:
            raise fail(f"{where}[{i}].at", f"events out of order: {at} after {last}")
        last = at
        if kind == "O":
            if len(stack) >= MAX_STACK_DEPTH:
                raise fail(f"{where}[{i}]", f"opens a stack of {len(stack) + 1} frames, deeper"
                           f" than the limit of {MAX_STACK_DEPTH} (MAX_STACK_DEPTH)")
            key = (stack[-1] if stack else -1, frame)
            node = children.get(key)
            if node is None:
                node = children[key] = len(out.frame)
                out.frame.append(frame)
                out.parent.append(key[0])
            stack.append(node)
            frames_on.append(frame)
        elif kind == "C":
            if not frames_on or frames_on[-1] != frame:
                top = f"frame {frames_on[-1]} is" if frames_on else "no frame is"
                raise fail(f"{where}[{i}]", f"closes frame {frame} while {top} on top")
            stack.pop()
            frames_on.pop()
        else:
            raise fail(f"{where}[{i}].type", f"not 'O' or 'C': {kind!r}")
    if stack:
        raise fail(where, f"{len(stack)} frames still open after the last event")
    return out


def graft(base: Stacks, tree: Stacks) -> tuple[Stacks, npt.NDArray[np.int64]]:
    """*base* with the stacks of *tree* (parents first) added where it lacks them, and the
    node of *base*'s result for each node of *tree*: one pass over the nodes, so the cost
    grows with the nodes, not with their depths."""
    if not len(base):
        return tree, np.arange(len(tree), dtype=np.int64)
    frame, parent = base.frame.tolist(), base.parent.tolist()
    node_of = {key: node for node, key in enumerate(zip(parent, frame, strict=True))}
    mapped: list[int] = []
    for f, p in zip(tree.frame.tolist(), tree.parent.tolist(), strict=True):
        key = (mapped[p] if p >= 0 else -1, f)
        node = node_of.get(key)
        if node is None:
            node = node_of[key] = len(frame)
            frame.append(f)
            parent.append(key[0])
        mapped.append(node)
    return (Stacks(np.array(frame, np.int32), np.array(parent, np.int32)),
            np.array(mapped, np.int64))


def common_depth(stacks: Stacks, a: npt.NDArray[np.int64],
                 b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per pair, the number of outer frames stacks ``a[i]`` and ``b[i]`` share (the depth
    of their lowest common ancestor; -1 is the empty stack)."""
    depth_of = stacks.depth()
    parent = stacks.parent.astype(np.int64)

    def depth(nodes):
        if not depth_of.size:  # (every stack empty)
            return np.zeros(nodes.size, np.int64)
        return np.where(nodes >= 0, depth_of[np.maximum(nodes, 0)], 0)

    a, b = a.copy(), b.copy()
    da, db = depth(a), depth(b)
    while True:  # climb the deeper one until both are as deep
        up_a, up_b = da > db, db > da
        if not (up_a.any() or up_b.any()):
            break
        a[up_a] = parent[a[up_a]]
        da[up_a] -= 1
        b[up_b] = parent[b[up_b]]
        db[up_b] -= 1
    while True:  # then climb both until they meet
        differ = a != b
        if not differ.any():
            return da
        a[differ] = parent[a[differ]]
        b[differ] = parent[b[differ]]
        da[differ] -= 1


def encode_events(stacks: Stacks, nodes: npt.NDArray[np.int64], starts: npt.NDArray[np.int64],
                  ends: npt.NDArray[np.int64]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The events of one thread whose stack is ``nodes[i]`` from ``starts[i]`` to ``ends[i]``
    (sorted, not overlapping, ``ends[i] <= starts[i + 1]``): ``(is_open, frame, at)``.

    Between two samples that touch, the frames they share stay open; where time passes
    between them, everything closes and opens again."""
    n = nodes.size
    if n == 0:
        return np.zeros(0, bool), np.zeros(0, np.int32), np.zeros(0, np.int64)
    offsets, frames = stacks.to_csr(nodes)  # innermost first
    depth = np.diff(offsets)
    touching = ends[:-1] == starts[1:]
    shared = np.zeros(n + 1, np.int64)  # shared[i]: frames kept open from sample i-1 to i
    if n > 1:
        shared[1:-1] = np.where(touching, common_depth(stacks, nodes[:-1], nodes[1:]), 0)
    closes = depth - shared[1:]          # after sample i: its innermost frames not kept
    opens = depth - shared[:-1]          # before sample i: its innermost frames not kept
    # events in order: sample i's opens (outermost first) at starts[i], then its closes
    # (innermost first) at ends[i]
    per_sample = opens + closes
    total = int(per_sample.sum())
    base = np.zeros(n + 1, np.int64)
    np.cumsum(per_sample, out=base[1:])
    is_open = np.zeros(total, bool)
    frame = np.empty(total, np.int32)
    at = np.empty(total, np.int64)
    open_at = decode_ragged_ranges(base[:-1], opens)
    is_open[open_at] = True
    # the k-th open of sample i is frame offsets[i] + opens[i] - 1 - k (outermost first)
    k = open_at - np.repeat(base[:-1], opens)
    frame[open_at] = frames[np.repeat(offsets[:-1] + opens - 1, opens) - k]
    at[open_at] = np.repeat(starts, opens)
    close_at = decode_ragged_ranges(base[:-1] + opens, closes)
    k = close_at - np.repeat(base[:-1] + opens, closes)
    frame[close_at] = frames[np.repeat(offsets[:-1], closes) + k]
    at[close_at] = np.repeat(ends, closes)
    return is_open, frame, at
