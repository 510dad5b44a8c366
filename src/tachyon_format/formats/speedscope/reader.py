"""Read a speedscope JSON file into a :class:`~tachyon_format.model.Profile`.

Pipeline:

1. the JSON parsed and the document checked (``file.document``): ``$schema``, the shared
   frames (one model frame row per shared frame, in order), the list of profiles;
2. per speedscope profile, one thread row (``Thread N`` / ``Thread N (interpreter I)``, the
   names this package writes, give back their ids; other names number the threads 0, 1, ...):
   a ``sampled`` profile's stacks as CSR (``file.ragged_indices``) with its weights; an
   ``evented`` profile's open/close events replayed (``events.scan_events``) into intervals
   whose stacks are nodes of one tree shared by the evented profiles, one sample per interval
   with its length as the weight;
3. every stack into one prefix tree (the sampled ones by ``Stacks.from_csr``, the evented
   tree grafted on: ``events.graft``), weights into ``values`` with one
   column per kind of unit (see :func:`_value_columns`), timestamps when every profile is
   evented in a unit of time.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt

from tachyon_format.model import (
    NS_PER_UNIT,
    SAMPLES_COUNT,
    Frames,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
    ValueType,
)
from tachyon_format.problems import Problem

from ..sources import Source, check_stack_depths, problems_reading, read_bytes
from . import file as ff
from .events import Intervals, graft, scan_events
from .facts import EXTRAS_KEY, ProfileFacts, SpeedscopeFacts

THREAD_NAME = re.compile(r"Thread (\d+)(?: \(interpreter (\d+)\))?")
"""A profile name as the writer makes it: the thread id, and the interpreter when not 0."""
VALUE_TYPE_OF_UNIT = {"none": SAMPLES_COUNT, "bytes": ValueType("space", "bytes")}
"""The model's sample type for a speedscope unit that is not a time (times: ``time``)."""


def read(source: Source) -> Profile:
    """The profile in *source* (a path, bytes or a binary file object). Raises
    :class:`~tachyon_format.FormatError` for malformed input."""
    return parse(read_bytes(source))


def validate(source: Source) -> list[Problem]:
    """Problems that stop :func:`read`, ``[]`` if there are none; never raises on bad
    input."""
    return problems_reading(read, source)


def info(source: Source) -> dict:
    """The file's name, exporter and its profiles (name, type, unit, value range)."""
    return read(source).extras[EXTRAS_KEY].info


def parse(data: bytes) -> Profile:
    """:func:`read` for the file's bytes."""
    doc, shared, entries = ff.document(ff.parse_json(data))
    # per profile: its stacks, listed (CSR offsets and frames, root first) when sampled, or
    # (None, first and end interval) of the events' tree when evented
    pieces: list[tuple[Any, Any]] = []
    intervals = Intervals()  # of all evented profiles
    weights: list[np.ndarray] = []
    starts: list[np.ndarray | None] = []
    facts: list[ProfileFacts] = []
    for k, entry in enumerate(entries):
        where = f"profiles[{k}]"
        if not isinstance(entry, dict):
            raise ff.fail(where, "a profile is an object")
        kind = ff.field(entry, "type", where, str)
        unit = ff.field(entry, "unit", where, str)
        if unit not in ff.UNITS:
            raise ff.fail(f"{where}.unit", f"not one of {', '.join(ff.UNITS)}: {unit!r}")
        name = entry.get("name", "")
        if not isinstance(name, str):
            raise ff.fail(f"{where}.name", "not a string")
        start = ff.field(entry, "startValue", where, (int, float))
        end = ff.field(entry, "endValue", where, (int, float))
        if kind == "sampled":
            offsets, frames = ff.ragged_indices(entry.get("samples"), f"{where}.samples",
                                                len(shared))
            w = ff.numbers(entry.get("weights"), f"{where}.weights")
            if w.size != offsets.size - 1:
                raise ff.fail(f"{where}.weights", f"{w.size} weights for "
                              f"{offsets.size - 1} samples")
            pieces.append((offsets, frames))
            starts.append(None)
        elif kind == "evented":
            first = len(intervals)
            scan_events(entry.get("events"), f"{where}.events", len(shared), intervals)
            pieces.append((None, (first, len(intervals))))
            at = np.array(intervals.start[first:])
            w = np.array(intervals.end[first:]) - at if at.size else np.zeros(0, np.int64)
            starts.append(at if at.size else np.zeros(0, np.int64))
        else:
            raise ff.fail(f"{where}.type", f"not 'sampled' or 'evented': {kind!r}")
        weights.append(w)
        facts.append(ProfileFacts(name, kind, unit, start, end, k))
    return _profile(doc, shared, _stacks(pieces, intervals), weights, starts, facts)


def _stacks(pieces: list[tuple[Any, Any]], intervals: Intervals
            ) -> tuple[Stacks, list[npt.NDArray[np.int32]]]:
    """One tree for the stacks of all the profiles, and each profile's stack ids: the
    sampled profiles' listed stacks built into a tree, the evented profiles' tree grafted
    onto it (never listed: a listing grows with the square of the depth)."""
    listed = [p for p in pieces if p[0] is not None]
    lengths = [offsets.size - 1 for offsets, _ in listed]
    offsets = np.zeros(sum(lengths) + 1, np.int64)
    np.cumsum(np.concatenate([np.diff(p[0]) for p in listed] or [np.zeros(0, np.int64)]),
              out=offsets[1:])
    flat = np.concatenate([p[1] for p in listed] or [np.zeros(0, np.int64)])
    check_stack_depths(offsets, lambda i: f"profiles -> samples (stack {i} of the sampled "
                       "profiles)")
    stacks, listed_ids = Stacks.from_csr(offsets, flat, innermost_first=False)
    node_ids = np.zeros(0, np.int64)
    if len(intervals):
        stacks, mapped = graft(stacks, intervals.stacks())
        node_ids = mapped[np.array(intervals.node, np.int64)]
    ids, at = [], 0
    for listing, span in pieces:
        if listing is None:
            ids.append(node_ids[span[0]:span[1]].astype(np.int32))
        else:
            n = listing.size - 1
            ids.append(listed_ids[at:at + n].astype(np.int32))
            at += n
    return stacks, ids


def _profile(doc, shared, tree, weights, starts, facts) -> Profile:
    strings, filename, funcname = _strings(shared)
    frames = Frames(filename=filename, funcname=funcname, lineno=shared.lines,
                    end_lineno=shared.lines.copy(), column=_columns(shared.cols),
                    end_column=_columns(shared.cols), opcode=np.full(len(shared), -1, np.int16))
    stacks, ids = tree
    stack_ids = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    thread = np.repeat(np.arange(len(ids), dtype=np.int32), [i.size for i in ids])
    sample_types, values = _value_columns(facts, weights)
    samples = Samples(stack=stack_ids, thread=thread, values=values,
                      timestamp_us=_timestamps(facts, starts))
    meta = Meta(sample_types=sample_types)
    extras = {EXTRAS_KEY: SpeedscopeFacts(doc.get("name"), doc.get("exporter"),
                                          doc.get("activeProfileIndex"), tuple(facts))}
    return Profile(strings=strings, frames=frames, stacks=stacks, threads=_threads(facts),
                   samples=samples, meta=meta, extras=extras)


def _strings(shared: ff.SharedFrames):
    rows: dict[str, int] = {"": 0}
    funcname = np.fromiter((rows.setdefault(n, len(rows)) for n in shared.names), np.uint32,
                           len(shared))
    filename = np.fromiter((rows.setdefault(f, len(rows)) for f in shared.files), np.uint32,
                           len(shared))
    # a JSON string may hold a lone surrogate (\ud800): kept as its UTF-8-style bytes, shown
    # replaced, as the model shows any invalid UTF-8
    return Strings.from_raw(t.encode("utf-8", "surrogatepass") for t in rows), filename, \
        funcname


def _columns(cols: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """speedscope's ``col`` counts from 1 (as editors show it), the model's from 0."""
    return np.where(cols > 0, cols - 1, -1).astype(np.int32)


def _threads(facts: list[ProfileFacts]) -> Threads:
    """Thread ids from the names this package writes, else the profiles' positions."""
    matches = [THREAD_NAME.fullmatch(p.name) for p in facts]
    pairs = [(int(m[2] or 0), int(m[1])) if m else None for m in matches]
    if None in pairs or len(set(pairs)) != len(pairs) or \
            any(i >= 2**32 or t >= 2**64 for i, t in pairs):  # type: ignore[misc]
        pairs = [(0, k) for k in range(len(facts))]
    return Threads(np.array([i for i, _ in pairs], np.uint32),
                   np.array([t for _, t in pairs], np.uint64))


def _value_columns(facts: list[ProfileFacts], weights: list[np.ndarray]):
    """One ``values`` column per kind of unit, in order of first appearance: ``none`` as
    ``samples/count``, ``bytes`` as ``space/bytes``, every unit of time as one ``time``
    column (in the file's unit when all the profiles in time share it and their weights are
    whole numbers, else in nanoseconds, rounded). Rows of a profile in another unit hold 0
    there. Fractional weights in ``none`` or ``bytes`` have no whole-number form and are
    refused (:class:`FormatError`), never rounded."""
    timed = {p.unit for p in facts if p.unit in NS_PER_UNIT}
    whole = all(w.dtype.kind == "i" or bool(np.all(np.mod(w, 1) == 0))
                for p, w in zip(facts, weights, strict=True) if p.unit in timed)
    time_unit = next(iter(timed)) if len(timed) == 1 and whole else "nanoseconds"
    types: list[ValueType] = []
    columns: list[int] = []
    for p in facts:
        kind = ValueType("time", time_unit) if p.unit in timed else VALUE_TYPE_OF_UNIT[p.unit]
        if kind not in types:
            types.append(kind)
        columns.append(types.index(kind))
    values = np.zeros((sum(w.size for w in weights), len(types) or 1), np.int64)
    row = 0
    for p, w, column in zip(facts, weights, columns, strict=True):
        where = f"profiles[{p.thread}].{'weights' if p.type == 'sampled' else 'events'}"
        if p.unit in timed:
            w = w * (NS_PER_UNIT[p.unit] / NS_PER_UNIT[time_unit]) \
                if p.unit != time_unit else w
        if w.dtype.kind == "f":
            if not np.all(np.mod(w, 1) == 0) and p.unit not in timed:
                raise ff.fail(where, f"fractional weights in unit {p.unit!r} (the model's "
                              "values are whole numbers)")
            w = np.rint(w)
            if w.size and np.abs(w).max() >= 2.0**63:
                raise ff.fail(where, "a weight does not fit 64 bits")
        values[row:row + w.size, column] = w.astype(np.int64)
        row += w.size
    return tuple(types) or (SAMPLES_COUNT,), values


def _timestamps(facts: list[ProfileFacts], starts: list[np.ndarray | None]):
    """Microseconds of each interval's start, when every profile is evented in a unit of
    time and no time is negative; else None."""
    if not facts or any(s is None or p.unit not in NS_PER_UNIT
                        for p, s in zip(facts, starts, strict=True)):
        return None
    us = [np.rint(s * (NS_PER_UNIT[p.unit] / 1000)) for p, s in zip(facts, starts,
                                                                       strict=True)]
    joined = np.concatenate(us) if us else np.zeros(0)
    if joined.size and (joined.min() < 0 or joined.max() >= 2.0**64):
        return None
    return joined.astype(np.uint64)
