"""Per-function sample counts and caller edges, as CPython 3.15's ``PstatsCollector`` counts.

A pstats entry is keyed by the function ``(filename, lineno, funcname)``, where ``lineno`` is
the frame's line (0 when the frame has no location). Per sample of weight *w* (CPython's
replay hands the collector one call per run of equal samples, with *w* timestamps), with the
frames innermost first after the profiler's own frames (files ending ``_sync_coordinator.py``)
are taken out, and an empty stack counting for nothing:

* ``direct``: the innermost function gets *w*;
* ``cumulative``: every distinct function of the stack gets *w* once;
* ``callers[callee][caller]``: every adjacent pair (``frames[i - 1]`` called from
  ``frames[i]``) gets *w*, a pair repeated in one stack (recursion) once per repetition.

Computed columnar (tier c): samples are first aggregated per distinct stack with
:func:`~tachyon_format.model.aggregate.group_count` (threads are not part of a pstats key, so
the stack alone is the group); then every count is a pass over the nodes of the stack tree
(:mod:`tachyon_format.kernels.tree`), which the stacks share, not over the frames of every
distinct stack: the weight through a node is the sum over its subtree, a caller edge is a
kept node and the nearest kept node above it, and a function's cumulative count is the
weight through its outermost nodes. Python touches only the frame table (to build the
keys) and the result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.tree import Levels, nearest_kept
from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count
from tachyon_format.model.internal import internal_frames

Function = tuple[str, int, str]
"""A pstats key: ``(filename, lineno, funcname)``."""


@dataclass(frozen=True)
class FunctionStats:
    """Every function that some counted stack holds, in the order CPython's collector first
    meets it (samples in order, each stack innermost first), with its counts; and the caller
    edges: ``edge_callee[i]`` was called from ``edge_caller[i]`` in ``edge_count[i]`` samples
    (rows of :attr:`functions`)."""

    functions: list[Function]
    direct: npt.NDArray[np.int64]
    cumulative: npt.NDArray[np.int64]
    edge_callee: npt.NDArray[np.int64]
    edge_caller: npt.NDArray[np.int64]
    edge_count: npt.NDArray[np.int64]


def interval_us_of(profile: Profile) -> int | float:
    """The sampling interval in microseconds: a Tachyon file's ``sample_interval_us``, else
    the profile's period in its time unit (0 when it has none)."""
    facts = profile.extras.get("tachyon")
    info = getattr(facts, "info", None)
    if isinstance(info, dict) and info.get("sample_interval_us") is not None:
        return info["sample_interval_us"]
    ns = profile.meta.period_ns()
    if ns is None:
        return 0
    return ns // 1000 if ns % 1000 == 0 else ns / 1000


def function_stats(profile: Profile, sample_type: str | None = None) -> FunctionStats:
    """The counts of the module docstring for *profile* (see :meth:`Profile.sample_weights`
    for *sample_type*). A profile whose rows each stand for several samples (an aggregated one)
    gives the same counts; only the first-meeting order follows the rows' order."""
    # 1. One row per distinct stack: its summed weight and the first sample that holds it.
    #    (A sample of weight 0, which CPython never sees, and an empty stack count nothing.)
    stack = profile.samples.stack
    weights = profile.sample_weights(sample_type)
    counted = (stack >= 0) & (weights > 0)
    if not counted.all():
        stack, weights = stack[counted], weights[counted]
    keys, stack_weight = group_count({"stack": stack}, weights)
    stack_ids = keys["stack"].astype(np.int64)
    stack_first = np.full(stack_ids.size, stack.size, np.int64)
    np.minimum.at(stack_first, np.searchsorted(stack_ids, stack), np.arange(stack.size))
    # 2. Per node of the stack tree: its function, whether kept (not the profiler's), the
    #    weight of the stacks through it and the first sample of one.
    function_of_frame, functions, internal = _frame_functions(profile)
    parent = profile.stacks.parent.astype(np.int64)
    func = function_of_frame[profile.stacks.frame]
    kept = ~internal[profile.stacks.frame]
    levels = Levels(parent)
    ending = np.zeros(parent.size, np.int64)
    ending[stack_ids] = stack_weight
    through = levels.subtree_reduce(ending)
    ending[:] = stack.size
    ending[stack_ids] = stack_first
    first = levels.subtree_reduce(ending, np.minimum)
    nearest = nearest_kept(parent, kept)
    live = np.flatnonzero(kept & (through > 0))  # (a kept node's ancestors with it too)
    # 3. direct: the innermost kept frame of each stack.
    innermost = nearest[stack_ids]
    has = innermost >= 0
    direct = np.zeros(len(functions), np.int64)
    np.add.at(direct, func[innermost[has]], stack_weight[has])
    # 4. caller edges: each kept node and the nearest kept node above it, every stack
    #    through it (so a pair repeated in one stack counts once per repetition).
    caller = np.where(parent[live] >= 0, nearest[np.maximum(parent[live], 0)], -1)
    called = caller >= 0
    edges, edge_count = group_count({"callee": func[live[called]],
                                     "caller": func[caller[called]]}, through[live[called]])
    # 5. cumulative: per function, the stacks through its outermost nodes (those with no
    #    node of the function above them: a node's subtree is [start, start + size) in a
    #    preorder, and it is below an earlier node of its function iff that one's end is
    #    past its start).
    start, end = levels.intervals()
    span = parent.size + 1
    by_function = live[np.argsort(func[live] * span + start[live])]
    f = func[by_function]
    reach = np.maximum.accumulate(f * span + end[by_function])
    outermost = np.ones(f.size, bool)
    outermost[1:] = (f[1:] != f[:-1]) | (reach[:-1] - f[1:] * span <= start[by_function][1:])
    cumulative = np.zeros(len(functions), np.int64)
    np.add.at(cumulative, f[outermost], through[by_function[outermost]])
    # 6. First-meeting order: a function is first met in the first sample of its nodes,
    #    at the innermost of them on that stack (the most kept frames above it).
    kept_depth = levels.depth if kept.all() else levels.path_sums(kept.astype(np.int64))
    deepest = int(levels.depth.max(initial=0)) + 1
    meeting = np.full(len(functions), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(meeting, func[live], first[live] * deepest + deepest - kept_depth[live])
    met = np.flatnonzero(meeting < np.iinfo(np.int64).max)
    order = met[np.argsort(meeting[met], kind="stable")]
    rank = np.full(len(functions), -1, np.int64)
    rank[order] = np.arange(order.size)
    return FunctionStats(
        functions=[functions[i] for i in order.tolist()],
        direct=direct[order], cumulative=cumulative[order],
        edge_callee=rank[edges["callee"]], edge_caller=rank[edges["caller"]],
        edge_count=edge_count)


def _frame_functions(profile: Profile) -> tuple[npt.NDArray[np.int64], list[Function],
                                                npt.NDArray[np.bool_]]:
    """Per frame row: its function (a row of the returned distinct keys) and whether it is
    one of the profiler's internal frames. Frames of native code (with an address) whose
    names are empty are named after their address and mapping (see :func:`_native_names`)."""
    frames = profile.frames
    texts = profile.strings.texts()
    n = len(frames)
    filenames = [texts[i] if i < len(texts) else "" for i in frames.filename.tolist()]
    funcnames = [texts[i] if i < len(texts) else "" for i in frames.funcname.tolist()]
    if frames.address is not None:
        filenames, funcnames = _native_names(profile, texts, filenames, funcnames)
    linenos = np.where(frames.lineno == -1, 0, frames.lineno).tolist()
    rows: dict[Function, int] = {}
    function_of_frame = np.fromiter(
        (rows.setdefault(key, len(rows)) for key in zip(filenames, linenos, funcnames,
                                                        strict=True)), np.int64, n)
    return function_of_frame, list(rows), internal_frames(profile)


def _native_names(profile: Profile, texts: list[str], filenames: list[str],
                  funcnames: list[str]) -> tuple[list[str], list[str]]:
    """Names for unsymbolised native frames: the function ``0x<address>``, the file the
    mapping's file name (else ``~``, pstats' file for code without a source file)."""
    frames = profile.frames
    addresses = frames.address.tolist()  # type: ignore[union-attr]
    mapping_rows = (frames.mapping.tolist() if frames.mapping is not None
                    else [-1] * len(addresses))
    mapping_files = [texts[i] if i < len(texts) else ""
                     for i in profile.mappings.filename.tolist()]
    files, names = [], []
    for filename, funcname, address, row in zip(filenames, funcnames, addresses,
                                                mapping_rows, strict=True):
        if not filename:
            filename = (mapping_files[row] if 0 <= row < len(mapping_files) else "") or "~"
        files.append(filename)
        names.append(funcname or f"0x{address:x}")
    return files, names
