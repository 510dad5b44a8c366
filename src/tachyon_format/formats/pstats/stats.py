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
the stack alone is the group), then the counts come from numpy over the frames of the
distinct stacks; Python touches only the frame table (to build the keys) and the result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count
from tachyon_format.model.internal import internal_frames

NS_PER_UNIT = {"nanoseconds": 1, "microseconds": 1_000, "milliseconds": 1_000_000,
               "seconds": 1_000_000_000}

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


def sample_weights(profile: Profile, sample_type: str | None = None) -> npt.NDArray[np.int64]:
    """How many samples each row stands for: the values of *sample_type*; by default those of
    a ``samples`` type when the profile has one (pprof and gperftools profiles carry a count
    beside a time), else :meth:`Profile.weights`'s default."""
    if sample_type is None:
        return np.asarray(profile.sample_counts(), dtype=np.int64)
    return np.asarray(profile.weights(sample_type), dtype=np.int64)


def interval_us_of(profile: Profile) -> int | float:
    """The sampling interval in microseconds: a Tachyon file's ``sample_interval_us``, else
    the profile's period in its time unit (0 when it has none)."""
    facts = profile.extras.get("tachyon")
    info = getattr(facts, "info", None)
    if isinstance(info, dict) and info.get("sample_interval_us") is not None:
        return info["sample_interval_us"]
    period_type = profile.meta.period_type
    if period_type is None or period_type.unit not in NS_PER_UNIT or profile.meta.period <= 0:
        return 0
    ns = profile.meta.period * NS_PER_UNIT[period_type.unit]
    return ns // 1000 if ns % 1000 == 0 else ns / 1000


def function_stats(profile: Profile, sample_type: str | None = None) -> FunctionStats:
    """The counts of the module docstring for *profile* (see :func:`sample_weights` for
    *sample_type*). A profile whose rows each stand for several samples (an aggregated one)
    gives the same counts; only the first-meeting order follows the rows' order."""
    # 1. One row per distinct stack: its summed weight and the first sample that holds it.
    #    (A sample of weight 0, which CPython never sees, and an empty stack count nothing.)
    stack = profile.samples.stack
    weights = sample_weights(profile, sample_type)
    counted = (stack >= 0) & (weights > 0)
    if not counted.all():
        stack, weights = stack[counted], weights[counted]
    keys, stack_weight = group_count({"stack": stack}, weights)
    _, stack_first = np.unique(stack, return_index=True)
    stack_ids = keys["stack"].astype(np.int64)
    # 2. The frames of those stacks, innermost first, mapped to functions; internal dropped.
    function_of_frame, functions, internal = _frame_functions(profile)
    offsets, frame_rows = profile.stacks.to_csr(stack_ids)
    segment = np.repeat(np.arange(stack_ids.size), np.diff(offsets))
    position = np.arange(frame_rows.size) - offsets[segment]
    keep = ~internal[frame_rows]
    func, segment, position = function_of_frame[frame_rows][keep], segment[keep], position[keep]
    weight = stack_weight[segment]
    # 3. direct: the innermost kept frame of each stack.
    innermost = np.ones(func.size, bool)
    innermost[1:] = segment[1:] != segment[:-1]
    direct = np.zeros(len(functions), np.int64)
    np.add.at(direct, func[innermost], weight[innermost])
    # 4. cumulative: each distinct function of a stack once.
    pairs, _ = group_count({"segment": segment, "func": func})
    cumulative = np.zeros(len(functions), np.int64)
    np.add.at(cumulative, pairs["func"], stack_weight[pairs["segment"]])
    # 5. caller edges: adjacent frames of one stack, every occurrence.
    adjacent = ~innermost[1:]
    edges, edge_count = group_count({"callee": func[:-1][adjacent],
                                     "caller": func[1:][adjacent]}, weight[1:][adjacent])
    # 6. First-meeting order: by the first sample of the stack, then the frame's position.
    by_meeting = np.lexsort((position, stack_first[segment]))
    met, first_at = np.unique(func[by_meeting], return_index=True)
    order = met[np.argsort(first_at, kind="stable")]
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
