"""The call tree of a profile merged by function: what a flame graph draws.

A node is a path of functions from the outermost call, a function being a (file name,
function name) pair; frames of one function at different lines merge. Built with numpy from
the *distinct* stacks (one :func:`group_count` over the samples first), one vectorised pass per
stack depth, so a profile of millions of samples costs one sort plus work per tree node.

Nodes are numbered breadth first: node 0 is the root (all samples), every parent comes before
its children, and the children of one parent are consecutive and sorted by function name —
so a page can lay the tree out in one forward pass over flat arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count


@dataclass(frozen=True)
class Functions:
    """The functions of a tree: ``name`` and ``file`` index :attr:`CallTree.texts`; ``line``
    is the smallest line number any of its frames had (-1 when none had one)."""

    name: npt.NDArray[np.int32]
    file: npt.NDArray[np.int32]
    line: npt.NDArray[np.int32]


@dataclass(frozen=True)
class CallTree:
    """Per node: ``parent`` (-1 for the root, node 0), ``function`` (a row of
    :attr:`functions`, -1 for the root), ``self_weight`` (samples whose innermost frame it is;
    the root's are the samples with an empty stack) and ``total`` (its subtree's)."""

    parent: npt.NDArray[np.int32]
    function: npt.NDArray[np.int32]
    self_weight: npt.NDArray[np.int64]
    total: npt.NDArray[np.int64]
    depth: npt.NDArray[np.int32]
    functions: Functions
    texts: list[str]

    def __len__(self) -> int:
        return int(self.parent.size)

    def name(self, node: int) -> str:
        function = int(self.function[node])
        return "all" if function < 0 else self.texts[self.functions.name[function]]

    def file(self, node: int) -> str:
        function = int(self.function[node])
        return "" if function < 0 else self.texts[self.functions.file[function]]

    def line(self, node: int) -> int:
        function = int(self.function[node])
        return -1 if function < 0 else int(self.functions.line[function])

    def offsets(self) -> npt.NDArray[np.int64]:
        """Per node, where it starts inside its parent's span, in weight units from the
        root's start (children follow each other in node order). Vectorised per depth."""
        x = np.zeros(len(self), np.int64)
        if len(self) <= 1:
            return x
        parent = self.parent.astype(np.int64)
        # breadth-first numbering: the nodes of one depth are one run, grouped by parent
        cuts = np.flatnonzero(np.diff(self.depth[1:])) + 1
        for level in np.split(np.arange(1, len(self)), cuts):
            totals = self.total[level]
            before = np.cumsum(totals) - totals
            first = np.ones(level.size, bool)
            first[1:] = parent[level[1:]] != parent[level[:-1]]
            starts = np.maximum.accumulate(np.where(first, np.arange(level.size), 0))
            x[level] = x[parent[level]] + before - before[starts]
        return x

    def paths(self) -> dict[tuple[tuple[str, str], ...], tuple[int, int]]:
        """``path of (file, function name) -> (total, self)`` for every node but the root (a
        scalar view for tests and small trees)."""
        out: dict[tuple[tuple[str, str], ...], tuple[int, int]] = {}
        path_of: list[tuple[tuple[str, str], ...]] = [()]
        for node in range(1, len(self)):
            path = path_of[int(self.parent[node])] + ((self.file(node), self.name(node)),)
            path_of.append(path)
            out[path] = (int(self.total[node]), int(self.self_weight[node]))
        return out


PROFILER_FILE_SUFFIXES = ("_sync_coordinator.py",)
"""Files whose frames are the profiler's own (CPython's ``_INTERNAL_FRAME_SUFFIXES``)."""


def call_tree(profile: Profile, sample_type: str | None = None, *,
              profiler_frames: bool = False) -> CallTree:
    """The function-merged call tree of *profile*, weighted by :meth:`Profile.sample_counts`
    (or by *sample_type*'s values when given). A profile whose rows stand for many samples
    (an aggregated one) gives the same tree as its samples one by one. The profiler's own
    frames are left out, as CPython's collectors leave them out, unless *profiler_frames*."""
    weights = profile.sample_weights(sample_type)
    texts = profile.strings.texts()
    functions, function_of_frame = _functions(profile, texts)
    keys, counts = group_count({"stack": profile.samples.stack}, weights)
    stacks = profile.stacks
    if not profiler_frames and len(stacks):
        internal = np.fromiter((t.endswith(PROFILER_FILE_SUFFIXES) for t in texts), bool,
                               len(texts))
        drop = internal[profile.frames.filename.astype(np.int64)]
        if drop.any():
            stacks, new_ids = stacks.without_frames(drop, keys["stack"])
            keys, counts = group_count({"stack": new_ids}, counts)
    stack_ids = keys["stack"].astype(np.int64)
    empty = int(counts[stack_ids < 0].sum())
    stack_ids, counts = stack_ids[stack_ids >= 0], counts[stack_ids >= 0]

    node_self = np.bincount(stack_ids, counts, minlength=len(stacks)).astype(np.int64)
    node_depth = stacks.depth().astype(np.int64) if len(stacks) else np.zeros(0, np.int64)
    node_parent = stacks.parent.astype(np.int64)
    node_function = function_of_frame[stacks.frame.astype(np.int64)] if len(stacks) else \
        np.zeros(0, np.int64)
    used = np.zeros(len(stacks), bool)
    used[stack_ids] = True
    order = np.argsort(node_depth, kind="stable")
    levels = np.split(order, np.flatnonzero(np.diff(node_depth[order])) + 1) \
        if order.size else []
    for level in reversed(levels):  # every ancestor of a sampled stack is used
        parents = node_parent[level[used[level]]]
        used[parents[parents >= 0]] = True

    merged_of_node = np.full(len(stacks), -1, np.int64)
    parents_out: list[np.ndarray] = [np.array([-1], np.int64)]
    functions_out: list[np.ndarray] = [np.array([-1], np.int64)]
    count = 1
    for level in levels:
        level = level[used[level]]
        if not level.size:
            continue
        parent = np.where(node_parent[level] >= 0,
                          merged_of_node[np.maximum(node_parent[level], 0)], 0)
        pairs = np.stack([parent, node_function[level]], axis=1)
        distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
        merged_of_node[level] = count + inverse.reshape(-1)
        parents_out.append(distinct[:, 0])
        functions_out.append(distinct[:, 1])
        count += len(distinct)
    parent = np.concatenate(parents_out)
    self_weight = np.zeros(count, np.int64)
    self_weight[0] = empty
    sampled = node_self > 0
    self_weight += np.bincount(merged_of_node[sampled], node_self[sampled],
                               minlength=count).astype(np.int64)
    depth = np.zeros(count, np.int64)
    for start, stop in _runs(parents_out):
        depth[start:stop] = depth[parent[start:stop]] + 1
    total = self_weight.copy()
    for start, stop in reversed(_runs(parents_out)):
        np.add.at(total, parent[start:stop], total[start:stop])
    return CallTree(parent.astype(np.int32), np.concatenate(functions_out).astype(np.int32),
                    self_weight, total, depth.astype(np.int32), functions, texts)


def _runs(parts: list[np.ndarray]) -> list[tuple[int, int]]:
    """(start, stop) of each level after the root's."""
    out, start = [], int(parts[0].size)
    for part in parts[1:]:
        out.append((start, start + int(part.size)))
        start += int(part.size)
    return out


def _functions(profile: Profile, texts: list[str]) -> tuple[Functions, np.ndarray]:
    """The distinct (file, name) texts of the frame table, numbered in name then file order,
    and the function of each frame row."""
    frames = profile.frames
    if not len(frames):
        none = np.zeros(0, np.int32)
        return Functions(none, none, none), np.zeros(0, np.int64)
    # one id per distinct text (a table may hold the same text twice)
    _, text_id = np.unique(np.array(texts, dtype=object), return_inverse=True) \
        if texts else (None, np.zeros(0, np.int64))
    text_id = np.asarray(text_id, np.int64).reshape(-1)
    name = text_id[frames.funcname.astype(np.int64)]
    file = text_id[frames.filename.astype(np.int64)]
    pairs, function_of_frame = np.unique(np.stack([name, file], axis=1), axis=0,
                                         return_inverse=True)
    function_of_frame = function_of_frame.reshape(-1).astype(np.int64)
    # a representative string row per distinct text, for the names shown
    row_of_text = np.zeros(int(text_id.max()) + 1 if text_id.size else 0, np.int64)
    row_of_text[text_id[::-1]] = np.arange(text_id.size)[::-1]
    lines = np.where(frames.lineno >= 0, frames.lineno, np.iinfo(np.int32).max).astype(np.int64)
    line = np.full(len(pairs), np.iinfo(np.int32).max, np.int64)
    np.minimum.at(line, function_of_frame, lines)
    line[line == np.iinfo(np.int32).max] = -1
    return (Functions(row_of_text[pairs[:, 0]].astype(np.int32),
                      row_of_text[pairs[:, 1]].astype(np.int32), line.astype(np.int32)),
            function_of_frame)
