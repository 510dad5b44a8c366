"""The costs a callgrind file holds, computed with numpy per distinct stack.

1. Events: one cost column per sample type of the profile (``samples``; pprof's ``cpu``
   nanoseconds...), and, when no sample type is a time but the sampling period is, the time
   ``samples x period`` as a second event (Tachyon: ``wall_ns`` or ``cpu_ns``).
2. The samples are summed per distinct stack (:func:`~tachyon_format.model.aggregate.group_count`);
   everything after works on the distinct stacks, listed once in CSR form.
3. Functions are the distinct (file, function name) texts of the frames; a frame's line is
   its position in the function (0 when unknown).
4. Self cost: each stack's cost goes to its innermost frame's (function, line).
5. Call edges: each frame but the outermost is called from the frame outside it, at that
   frame's line. Its inclusive cost is the stack's cost at the *outermost* occurrence of the
   callee's function in the stack and 0 at the others (recursive calls): so the costs of the
   calls into a function add up to its inclusive cost with every stack counted once, which is
   how ``callgrind_annotate --inclusive=yes`` and KCachegrind read them. ``calls=`` counts the
   samples whose stack makes the call (a sampled profile has no call counts).
6. When a function is the outermost frame of one stack and called in another, its inclusive
   cost would miss the first kind: then every stack is called from one synthetic ``(root)``
   function, as callgrind's ``(below main)``. Samples without a stack are the self cost of a
   synthetic ``(no stack)`` function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count

UNKNOWN_FILE = "???"
"""callgrind's own name for a function's unknown file."""
ROOT, NO_STACK = "(root)", "(no stack)"
UNIT_ABBREVIATIONS = {"nanoseconds": "ns", "microseconds": "us", "milliseconds": "ms",
                      "seconds": "s"}


@dataclass(frozen=True)
class Event:
    """One cost column: its callgrind ``name`` (an identifier) and a long description."""

    name: str
    description: str


@dataclass(frozen=True)
class Costs:
    """What the file says, per distinct function, line and call.

    ``files`` and ``names`` give each function's texts (row ``f`` of the function table);
    ``self_function``, ``self_line`` and ``self_cost`` (rows x events) the self costs, one row
    per distinct (function, line); ``caller``, ``call_line``, ``callee``, ``calls`` and
    ``call_cost`` the calls, one row per distinct (caller, line, callee); ``first_line`` per
    function the lowest line of its frames (callgrind's call target position)."""

    events: tuple[Event, ...]
    files: list[str]
    names: list[str]
    first_line: npt.NDArray[np.int64]
    self_function: npt.NDArray[np.int64]
    self_line: npt.NDArray[np.int64]
    self_cost: npt.NDArray[np.int64]
    caller: npt.NDArray[np.int64]
    call_line: npt.NDArray[np.int64]
    callee: npt.NDArray[np.int64]
    calls: npt.NDArray[np.int64]
    call_cost: npt.NDArray[np.int64]
    total: npt.NDArray[np.int64]


def event_columns(profile: Profile) -> tuple[tuple[Event, ...], npt.NDArray[np.int64]]:
    """The events and, per sample row, its cost in each (samples x events)."""
    meta = profile.meta
    events: list[Event] = []
    columns: list[np.ndarray] = []
    for value_type in meta.sample_types:
        unit = UNIT_ABBREVIATIONS.get(value_type.unit)
        name = value_type.type if unit is None else f"{value_type.type}_{unit}"
        events.append(Event(_identifier(name, {e.name for e in events}),
                            f"{value_type.type} ({value_type.unit})"))
        columns.append(np.asarray(profile.weights(value_type.type), np.int64))
    timed = any(t.unit in UNIT_ABBREVIATIONS for t in meta.sample_types)
    counted = [i for i, t in enumerate(meta.sample_types) if t.unit == "count"]
    period_type = meta.period_type
    if (not timed and counted and period_type is not None and meta.period > 0
            and period_type.unit in UNIT_ABBREVIATIONS):
        name = f"{period_type.type}_{UNIT_ABBREVIATIONS[period_type.unit]}"
        events.append(Event(_identifier(name, {e.name for e in events}),
                            f"{period_type.type} ({period_type.unit}): samples x "
                            f"{meta.period}"))
        columns.append(columns[counted[0]] * np.int64(meta.period))
    n = len(profile.samples.stack)
    matrix = np.stack(columns, axis=1) if columns else np.zeros((n, 0), np.int64)
    if matrix.size and matrix.min() < 0:
        raise ValueError("negative costs (a difference profile?) cannot be written to "
                         "callgrind")
    return tuple(events), matrix


def _identifier(name: str, taken: set[str]) -> str:
    """*name* as a callgrind event name (letters, digits, ``_``), unique among *taken*."""
    name = re.sub(r"\W", "_", name, flags=re.ASCII) or "cost"
    if name[0].isdigit():
        name = "_" + name
    unique, k = name, 2
    while unique in taken:
        unique, k = f"{name}_{k}", k + 1
    return unique


def compute(profile: Profile) -> Costs:
    """The :class:`Costs` of *profile* (steps in the module docstring)."""
    events, per_sample = event_columns(profile)
    keys, cost = _per_stack(profile.samples.stack, per_sample)
    stacks = keys["stack"].astype(np.int64)
    files, names, function_of_row = _functions(profile)
    line_of_row = np.maximum(profile.frames.lineno.astype(np.int64), 0)

    offsets, frame_ids = profile.stacks.to_csr(stacks)  # (stack -1: no frames)
    lengths = np.diff(offsets)
    func = function_of_row[frame_ids]
    line = line_of_row[frame_ids]
    row = np.repeat(np.arange(stacks.size), lengths)
    from_root = offsets[row + 1] - 1 - np.arange(frame_ids.size)

    extra: list[tuple[str, str]] = []
    no_stack = stacks < 0
    leaf = offsets[:-1][~no_stack]
    self_func = [func[leaf]]
    self_line = [line[leaf]]
    self_cost = [cost[~no_stack]]
    if no_stack.any():
        extra.append((UNKNOWN_FILE, NO_STACK))
        self_func.append(np.full(int(no_stack.sum()), len(files), np.int64))
        self_line.append(np.zeros(int(no_stack.sum()), np.int64))
        self_cost.append(cost[no_stack])

    outermost = _outermost(row, func, from_root)
    callee_at = np.flatnonzero(from_root >= 1)
    caller, call_line, callee = func[callee_at + 1], line[callee_at + 1], func[callee_at]
    call_cost = np.where(outermost[callee_at, None], cost[row[callee_at]], 0)
    calls = cost[row[callee_at], 0] if cost.shape[1] else np.zeros(callee_at.size, np.int64)
    roots = np.flatnonzero(from_root == 0)
    if np.isin(func[roots], callee).any():
        root = len(files) + len(extra)
        extra.append((UNKNOWN_FILE, ROOT))
        caller = np.concatenate([caller, np.full(roots.size, root, np.int64)])
        call_line = np.concatenate([call_line, np.zeros(roots.size, np.int64)])
        callee = np.concatenate([callee, func[roots]])
        call_cost = np.concatenate([call_cost, cost[row[roots]]])
        calls = np.concatenate([calls, cost[row[roots], 0] if cost.shape[1]
                                else np.zeros(roots.size, np.int64)])

    first_line = np.full(len(files) + len(extra), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_line, function_of_row, line_of_row)
    first_line[first_line == np.iinfo(np.int64).max] = 0
    files = files + [f for f, _ in extra]
    names = names + [n for _, n in extra]

    self_keys, self_summed = _summed({"function": np.concatenate(self_func),
                                      "line": np.concatenate(self_line)},
                                     np.concatenate(self_cost))
    call_keys, call_summed = _summed({"caller": caller, "callee": callee, "line": call_line},
                                     np.column_stack([calls, call_cost]))
    return Costs(events, files, names, first_line,
                 self_keys["function"], self_keys["line"], self_summed,
                 call_keys["caller"], call_keys["line"], call_keys["callee"],
                 np.maximum(call_summed[:, 0], 1), call_summed[:, 1:],
                 per_sample.sum(axis=0, dtype=np.int64))


def _per_stack(stack: np.ndarray, per_sample: np.ndarray):
    """The distinct stacks and their summed costs (stacks x events)."""
    if per_sample.shape[1] == 0:
        keys, _ = group_count({"stack": stack})
        return keys, np.zeros((keys["stack"].size, 0), np.int64)
    return _summed({"stack": stack}, per_sample)


def _summed(columns: dict[str, np.ndarray], costs: np.ndarray):
    """The distinct rows of *columns* and the sums of each cost column over them."""
    keys, first = group_count(columns, costs[:, 0])
    rest = [group_count(columns, costs[:, i])[1] for i in range(1, costs.shape[1])]
    return keys, np.stack([first, *rest], axis=1).astype(np.int64)


def _functions(profile: Profile) -> tuple[list[str], list[str], npt.NDArray[np.int64]]:
    """The distinct (file, function name) texts, sorted, and each frame row's function."""
    texts = profile.strings.texts()
    frames = profile.frames
    text_ids, inverse = np.unique(np.array(texts, dtype=object), return_inverse=True)
    text_of = inverse.reshape(-1).astype(np.int64)
    pairs = np.stack([text_of[frames.filename.astype(np.int64)],
                      text_of[frames.funcname.astype(np.int64)]], axis=1)
    distinct, function_of_row = np.unique(pairs, axis=0, return_inverse=True)
    files = [_one_line(text_ids[i]) for i in distinct[:, 0].tolist()]
    names = [_one_line(text_ids[i]) for i in distinct[:, 1].tolist()]
    return files, names, function_of_row.reshape(-1).astype(np.int64)


def _outermost(row: np.ndarray, func: np.ndarray, from_root: np.ndarray) -> np.ndarray:
    """Per frame of the listed stacks: is it its function's outermost frame in its stack?"""
    out = np.zeros(row.size, bool)
    if not row.size:
        return out
    order = np.lexsort((from_root, func, row))
    head = np.ones(row.size, bool)
    head[1:] = (row[order][1:] != row[order][:-1]) | (func[order][1:] != func[order][:-1])
    out[order[head]] = True
    return out


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ") or UNKNOWN_FILE
