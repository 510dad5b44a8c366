"""Self and cumulative counts per function (or file and function, line, opcode), per thread
or status if asked, and the callers and callees of a function.

For each sample of weight *w* (one, or its value of a sample type), with the profiler's own
frames taken out of its stack (:mod:`tachyon_format.model.internal`; ``filter_internal=False``
keeps them) and an empty stack counting for nothing:

* ``self``: the key of the innermost frame gets *w*;
* ``cumulative``: every distinct key of the stack gets *w* once (a recursive function is
  counted once per sample, so ``cumulative <= total``).

With ``by="line"`` these are the ``direct`` and ``cumulative`` counts of the pstats entries
CPython 3.15's ``replay --pstats`` writes. Vectorised (tier c): samples are first grouped per
distinct (group, stack) with :func:`~tachyon_format.model.aggregate.group_count`, the frames
of the distinct stacks come from one :meth:`~tachyon_format.model.Stacks.to_csr`, and the
counts from numpy over (row, distinct key of its stack) pairs; an aggregated profile (rows
standing for several samples) gives the same tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count
from tachyon_format.model.internal import internal_frames

from .keys import By, FrameKeys, frame_keys
from .table import Table

PER = ("thread", "status")


@dataclass(frozen=True)
class GroupedStacks:
    """The counted rows of a profile grouped per distinct (group, stack): ``groups`` (the
    group columns), ``segment`` (the row's distinct stack) and ``weight``; and the frames of
    the distinct stacks, innermost first: ``frame_row``, its ``key`` and ``key_segment``
    (the profiler's frames dropped when asked). ``keys`` are the distinct keys."""

    groups: dict[str, np.ndarray]
    segment: npt.NDArray[np.int64]
    weight: npt.NDArray[np.int64]
    key: npt.NDArray[np.int64]
    key_segment: npt.NDArray[np.int64]
    frame_row: npt.NDArray[np.int64]
    keys: FrameKeys
    num_segments: int


def grouped_stacks(profile: Profile, by: By = "function", *, per: tuple[str, ...] = (),
                   sample_type: str | None = None, filter_internal: bool = True) -> GroupedStacks:
    """Step 1 of every count: the profile reduced to its distinct (group, stack) rows."""
    samples = profile.samples
    columns: dict[str, np.ndarray] = {}
    for name in per:
        if name not in PER:
            raise ValueError(f"unknown view {name!r}: per takes {', '.join(PER)}")
        column = getattr(samples, name)
        if column is None:
            raise ValueError(f"this profile has no {name} column")
        columns[name] = column
    weights = profile.sample_weights(sample_type)
    counted = (samples.stack >= 0) & (weights != 0)
    columns = {name: c[counted] for name, c in columns.items()}
    grouped, weight = group_count({**columns, "stack": samples.stack[counted]},
                                  weights[counted])
    distinct, segment = np.unique(grouped.pop("stack"), return_inverse=True)
    offsets, frame_rows = profile.stacks.to_csr(distinct)
    key_segment = np.repeat(np.arange(distinct.size), np.diff(offsets))
    keys = frame_keys(profile, by)
    frame_rows = frame_rows.astype(np.int64)
    if filter_internal:
        keep = ~internal_frames(profile)[frame_rows]
        frame_rows, key_segment = frame_rows[keep], key_segment[keep]
    return GroupedStacks(grouped, segment.reshape(-1).astype(np.int64), weight,
                       keys.key[frame_rows], key_segment, frame_rows, keys, int(distinct.size))


def function_table(profile: Profile, by: By = "function", *, per: str | tuple[str, ...] = (),
                   sample_type: str | None = None, filter_internal: bool = True) -> Table:
    """Per key of *by* (see :mod:`.keys`) and, with *per*, per thread and/or status: the
    ``self`` and ``cumulative`` weights, sorted by ``self`` (largest first). ``total`` is
    the weight of every sample with a (non-empty) stack."""
    per = (per,) if isinstance(per, str) else tuple(per)
    gs = grouped_stacks(profile, by, per=per, sample_type=sample_type,
                        filter_internal=filter_internal)
    # 1. The distinct keys of each distinct stack, and its innermost one.
    pairs, _ = group_count({"segment": gs.key_segment, "key": gs.key})
    innermost = np.full(gs.num_segments, -1, np.int64)
    head = np.ones(gs.key.size, bool)
    head[1:] = gs.key_segment[1:] != gs.key_segment[:-1]
    innermost[gs.key_segment[head]] = gs.key[head]
    # 2. Every (row, distinct key of its stack) pair, with the row's weight.
    start = np.searchsorted(pairs["segment"], np.arange(gs.num_segments + 1))
    per_row = np.diff(start)[gs.segment]
    row = np.repeat(np.arange(gs.segment.size), per_row)
    row_start = np.cumsum(per_row) - per_row
    pair = start[gs.segment][row] + np.arange(row.size) - row_start[row]
    key = pairs["key"][pair]
    weight = gs.weight[row]
    is_self = key == innermost[gs.segment[row]]
    # 3. Sums per (group, key).
    columns = {**{name: c[row] for name, c in gs.groups.items()}, "key": key}
    out, cumulative = group_count(columns, weight)
    _, self_weight = group_count(columns, np.where(is_self, weight, 0))
    total = int(gs.weight[innermost[gs.segment] >= 0].sum())
    table = _render(profile, gs.keys, out, {"self": self_weight, "cumulative": cumulative},
                    total, by)
    return table.sort(("self", "cumulative"))


def top(profile: Profile, n: int = 20, by: By = "function", *, sort: str = "self",
        sample_type: str | None = None, filter_internal: bool = True) -> Table:
    """The *n* keys with the most ``self`` (or ``cumulative``) weight."""
    table = function_table(profile, by, sample_type=sample_type,
                           filter_internal=filter_internal)
    return table.sort((sort, "cumulative" if sort == "self" else "self")).head(n)


def callers(profile: Profile, funcname: str, **options) -> Table:
    """Who calls the functions whose name matches the regex *funcname* (whole name), and in
    how many samples (each stack counts a caller once); see :func:`neighbours`."""
    return neighbours(profile, funcname, direction="callers", **options)


def callees(profile: Profile, funcname: str, **options) -> Table:
    """What the functions whose name matches the regex *funcname* call; see
    :func:`neighbours`."""
    return neighbours(profile, funcname, direction="callees", **options)


def neighbours(profile: Profile, funcname: str, *, direction: str, by: By = "function",
               filename: str | None = None, sample_type: str | None = None,
               filter_internal: bool = True) -> Table:
    """Per key of *by*: the weight of the samples in which it calls (``callers``) or is
    called by (``callees``) a frame of a matching function (a regex matched against the
    whole function name, and *filename* searched in the file name if given). ``total`` is
    the matching functions' cumulative weight, so ``count / total`` is the share of their
    samples that go through each neighbour."""
    if direction not in ("callers", "callees"):
        raise ValueError("direction is 'callers' or 'callees'")
    gs = grouped_stacks(profile, by, sample_type=sample_type, filter_internal=filter_internal)
    target = _matching_frames(profile, funcname, filename)
    frame_target = target[gs.frame_row]
    same = gs.key_segment[1:] == gs.key_segment[:-1]  # adjacent frames of one stack
    if direction == "callers":  # the frame outside (after) a target frame
        hit = frame_target[:-1] & same
        neighbour, segment = gs.key[1:][hit], gs.key_segment[1:][hit]
    else:
        hit = frame_target[1:] & same
        neighbour, segment = gs.key[:-1][hit], gs.key_segment[:-1][hit]
    segment_weight = np.bincount(gs.segment, gs.weight, minlength=gs.num_segments)
    pairs, _ = group_count({"segment": segment, "key": neighbour})
    out, count = group_count({"key": pairs["key"]},
                             segment_weight[pairs["segment"]].astype(np.int64))
    through = np.unique(gs.key_segment[frame_target])
    total = int(segment_weight[through].sum())
    table = _render(profile, gs.keys, out, {"count": count}, total, by)
    return table.sort("count")


def _matching_frames(profile: Profile, funcname: str,
                     filename: str | None) -> npt.NDArray[np.bool_]:
    """Per frame row: whether its function name matches *funcname* (and file *filename*)."""
    texts = profile.strings.texts()
    name_re = re.compile(funcname)
    by_name = np.fromiter((name_re.fullmatch(t) is not None for t in texts), bool, len(texts))
    matched = np.append(by_name, False)[np.minimum(profile.frames.funcname.astype(np.int64),
                                                   len(texts))]
    if filename is not None:
        file_re = re.compile(filename)
        by_file = np.fromiter((file_re.search(t) is not None for t in texts), bool, len(texts))
        matched &= np.append(by_file, False)[np.minimum(
            profile.frames.filename.astype(np.int64), len(texts))]
    return matched


def _render(profile: Profile, keys: FrameKeys, out: dict[str, np.ndarray],
            values: dict[str, np.ndarray], total: int, by: By) -> Table:
    """The result columns: group columns as the user knows them, key fields, values."""
    columns: dict[str, np.ndarray] = {}
    if "thread" in out:
        row = out["thread"].astype(np.int64)
        safe = np.where(row >= 0, row, 0)
        known = (row >= 0) & (row < len(profile.threads))
        columns["interpreter_id"] = np.where(
            known, profile.threads.interpreter_id[safe] if len(profile.threads) else 0, 0)
        columns["thread_id"] = np.where(
            known, profile.threads.thread_id[safe] if len(profile.threads) else 0, 0)
    if "status" in out:
        columns["status"] = out["status"]
    key = out["key"]
    for name, column in keys.columns.items():
        columns[name] = column[key]
    columns.update(values)
    return Table(columns, total, {"by": by})
