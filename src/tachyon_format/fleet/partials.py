"""Per-file partial results, small enough to send between machines and add up in any order.

A :class:`StackCounts` is what a fleet-wide merge adds up: per distinct (stack, thread,
status) how many samples, keyed by the global stack id (:mod:`.ids`), with the dictionary
entries those stacks need (stack nodes, frames, strings). Two of them combine by
concatenating and grouping by id (:meth:`StackCounts.combine`: associative and commutative,
so a tree reduction may pair them any way); :meth:`StackCounts.to_profile` turns the result
into an ordinary :class:`~tachyon_format.Profile`, which every writer writes and every
analysis reads.

A :class:`FunctionCounts` is what a fleet-wide top adds up: the ``self`` and ``cumulative``
weights per function (or line, ...) of :func:`tachyon_format.analysis.function_table`, and
the total; both are sums over samples, so the fleet's table is the sum of the files'.

Sizes grow with the distinct stacks (or functions), never with the samples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.analysis import Table, function_table
from tachyon_format.analysis.keys import By, fields_of
from tachyon_format.errors import FormatError
from tachyon_format.kernels.paths import mark_paths
from tachyon_format.model import (
    SAMPLES_COUNT,
    Frames,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
)
from tachyon_format.model.aggregate import group_count

from .ids import (
    FRAME_FIELDS,
    ROOT,
    check_unique,
    frame_ids,
    stack_ids,
    string_id,
    string_ids,
)

COUNT_KEYS = ("stack_id", "interpreter_id", "thread_id", "status")
"""What a counted row is keyed by; ``interpreter_id`` and ``status`` are -1 when unknown,
``thread_id`` 0 then."""
FRAME_COLUMNS = ("filename_id", "funcname_id", *FRAME_FIELDS, "address")


@dataclass(frozen=True)
class StackCounts:
    """``counts``: columns :data:`COUNT_KEYS` + ``count`` (int64; ``thread_id`` uint64);
    ``nodes``: ``stack_id``, ``parent_id`` (:data:`~.ids.ROOT` for none), ``frame_id``,
    ``depth``; ``frames``: ``frame_id`` + :data:`FRAME_COLUMNS`; ``strings``: ``string_id``
    and the bytes in ``raws``."""

    counts: dict[str, np.ndarray]
    nodes: dict[str, np.ndarray]
    frames: dict[str, np.ndarray]
    string_id: npt.NDArray[np.int64]
    raws: tuple[bytes, ...]

    @property
    def num_samples(self) -> int:
        return int(self.counts["count"].sum())

    @classmethod
    def of_profile(cls, profile: Profile) -> StackCounts:
        """The counts of *profile* (every sample counts :meth:`Profile.sample_counts`), with
        the dictionary entries of the stacks it uses."""
        samples = profile.samples
        weight = np.asarray(profile.sample_counts(), np.int64)
        keep = (samples.stack >= 0) & (weight != 0)
        thread = samples.thread.astype(np.int64)[keep]
        known = (thread >= 0) & (thread < len(profile.threads))
        safe = np.where(known, thread, 0)
        has_threads = len(profile.threads) > 0
        interpreter = (np.where(known, profile.threads.interpreter_id[safe].astype(np.int64), -1)
                       if has_threads else np.full(thread.size, -1, np.int64))
        thread_id = (np.where(known, profile.threads.thread_id[safe], 0).astype(np.uint64)
                     if has_threads else np.zeros(thread.size, np.uint64))
        status = (samples.status[keep].astype(np.int16) if samples.status is not None
                  else np.full(thread.size, -1, np.int16))
        raws = profile.strings.raws()
        sid = string_ids(raws)
        fid = frame_ids(profile, sid)
        nid = stack_ids(profile.stacks, fid)
        grouped, count = group_count({"stack": samples.stack[keep].astype(np.int64),
                                      "interpreter_id": interpreter, "thread_id": thread_id,
                                      "status": status}, weight[keep])
        used = _used_nodes(profile.stacks, np.unique(grouped["stack"]))
        counts = {"stack_id": nid[grouped.pop("stack")], **grouped, "count": count}
        frame_rows = np.unique(profile.stacks.frame[used].astype(np.int64))
        nodes = _nodes(profile.stacks, used, nid, fid)
        frames = _frames(profile, frame_rows, sid, fid)
        string_rows = np.unique(np.concatenate([
            np.minimum(profile.frames.columns()[name][frame_rows].astype(np.int64), len(raws))
            for name in ("filename", "funcname")]))
        string_rows = string_rows[string_rows < len(raws)]
        part = cls(counts, nodes, frames, sid[string_rows],
                   tuple(raws[i] for i in string_rows.tolist()))
        return cls.combine([part])  # (checks for collisions, sorts by id)

    @classmethod
    def combine(cls, parts: Iterable[StackCounts]) -> StackCounts:
        """The sum of *parts*: counts added per key, dictionaries united by id (raises
        :class:`~.ids.IdCollision` if one id stands for two different entries)."""
        parts = list(parts)
        if not parts:
            return cls.empty()
        counts = {k: np.concatenate([p.counts[k] for p in parts]) for k in (*COUNT_KEYS,
                                                                             "count")}
        weight = counts.pop("count")
        grouped, count = group_count(counts, weight)
        nodes = _distinct({k: np.concatenate([p.nodes[k] for p in parts])
                           for k in parts[0].nodes}, "stack_id", "stacks")
        frames = _distinct({k: np.concatenate([p.frames[k] for p in parts])
                            for k in parts[0].frames}, "frame_id", "frames")
        ids = np.concatenate([p.string_id for p in parts])
        raws = np.array([raw for p in parts for raw in p.raws], dtype=object)
        check_unique(ids, raws, "strings")
        distinct, first = np.unique(ids, return_index=True)
        return cls({**grouped, "count": count}, nodes, frames, distinct,
                   tuple(raws[first].tolist()))

    @classmethod
    def empty(cls) -> StackCounts:
        i64 = np.zeros(0, np.int64)
        counts = {"stack_id": i64, "interpreter_id": i64, "thread_id": np.zeros(0, np.uint64),
                  "status": np.zeros(0, np.int16), "count": i64}
        nodes = {k: i64 for k in ("stack_id", "parent_id", "frame_id", "depth")}
        frames = {k: i64 for k in ("frame_id", *FRAME_COLUMNS)}
        return cls(counts, nodes, frames, i64, ())

    def to_profile(self) -> Profile:
        """An ordinary profile: one sample row per counted (stack, thread, status), its
        count in ``values`` (sample type ``samples``/``count``); threads are the distinct
        (interpreter, thread) pairs (a thread id seen in two processes is one row); a row
        without a status gets status 0 unless no row has one (then there is no status)."""
        strings = Strings.from_raw(self.raws)
        string_row = _rows_of(self.string_id)
        frames = self.frames
        native = bool((frames["address"] != 0).any())
        frame_table = Frames(
            filename=string_row(frames["filename_id"]).astype(np.uint32),
            funcname=string_row(frames["funcname_id"]).astype(np.uint32),
            lineno=frames["lineno"].astype(np.int32), end_lineno=frames["end_lineno"].astype(
                np.int32), column=frames["column"].astype(np.int32),
            end_column=frames["end_column"].astype(np.int32),
            opcode=frames["opcode"].astype(np.int16),
            address=frames["address"].view(np.uint64) if native else None,
            mapping=np.full(frames["address"].size, -1, np.int32) if native else None)
        order = np.argsort(self.nodes["depth"], kind="stable")  # parents first
        node_id = self.nodes["stack_id"][order]
        node_row = _rows_of(node_id)
        parent_id = self.nodes["parent_id"][order]
        has_parent = parent_id != ROOT
        parent = np.full(parent_id.size, -1, np.int64)
        parent[has_parent] = node_row(parent_id[has_parent])
        stacks = Stacks(
            frame=_rows_of(frames["frame_id"])(self.nodes["frame_id"][order]).astype(np.int32),
            parent=parent.astype(np.int32))
        counts = self.counts
        pairs, thread = np.unique(np.column_stack([counts["interpreter_id"],
                                                   counts["thread_id"].view(np.int64)]),
                                  axis=0, return_inverse=True)
        threads = Threads(pairs[:, 0].astype(np.uint32), pairs[:, 1].view(np.uint64).copy())
        known_thread = counts["interpreter_id"] >= 0
        status = counts["status"]
        samples = Samples(
            stack=node_row(counts["stack_id"]).astype(np.int32),
            thread=np.where(known_thread, thread.reshape(-1), -1).astype(np.int32),
            status=None if (status < 0).all() and status.size else
            np.maximum(status, 0).astype(np.uint8),
            values=counts["count"].astype(np.int64)[:, None])
        if not known_thread.all():  # keep only the thread rows that some sample uses
            used = np.unique(samples.thread[samples.thread >= 0])
            renumber = np.full(len(threads), -1, np.int64)
            renumber[used] = np.arange(used.size)
            threads = Threads(threads.interpreter_id[used], threads.thread_id[used])
            samples = Samples(stack=samples.stack, thread=np.where(
                samples.thread >= 0, renumber[np.maximum(samples.thread, 0)], -1).astype(
                np.int32), status=samples.status, values=samples.values)
        return Profile(strings, frame_table, stacks, threads, samples,
                       Meta(sample_types=(SAMPLES_COUNT,)))


def _used_nodes(stacks: Stacks, leaves: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The nodes of the stacks *leaves* and of all their ancestors."""
    return np.flatnonzero(mark_paths(stacks.parent, leaves))


def _nodes(stacks: Stacks, used, nid, fid) -> dict[str, np.ndarray]:
    parent = stacks.parent.astype(np.int64)[used]
    return {"stack_id": nid[used],
            "parent_id": np.where(parent >= 0, nid[np.maximum(parent, 0)], ROOT),
            "frame_id": fid[stacks.frame.astype(np.int64)[used]],
            "depth": stacks.depth()[used].astype(np.int64)}


def _frames(profile: Profile, rows, sid, fid) -> dict[str, np.ndarray]:
    frames = profile.frames
    past = np.append(sid, string_id(b""))
    out = {"frame_id": fid[rows]}
    for name in ("filename", "funcname"):
        out[f"{name}_id"] = past[np.minimum(getattr(frames, name)[rows].astype(np.int64),
                                            sid.size)]
    for name in FRAME_FIELDS:
        out[name] = getattr(frames, name)[rows].astype(np.int64)
    out["address"] = (frames.address[rows].view(np.int64) if frames.address is not None
                      else np.zeros(rows.size, np.int64))
    return out


def _distinct(table: dict[str, np.ndarray], key: str, what: str) -> dict[str, np.ndarray]:
    """*table*'s rows, one per *key* (sorted), after checking that equal keys mean equal
    rows."""
    ids = table[key]
    rest = np.column_stack([v for k, v in table.items() if k != key]) if ids.size else None
    if rest is not None:
        check_unique(ids, rest, what)
    _, first = np.unique(ids, return_index=True)
    return {k: v[first] for k, v in table.items()}


def _rows_of(sorted_ids: npt.NDArray[np.int64]):
    """A lookup: ids to their rows in the table keyed by *sorted_ids* (FormatError if one is
    missing: a dictionary entry a count needs was not written, or was lost)."""
    order = np.argsort(sorted_ids, kind="stable")
    keys = sorted_ids[order]

    def rows(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        ids = np.asarray(ids, np.int64)
        at = np.searchsorted(keys, ids)
        at_safe = np.minimum(at, max(keys.size - 1, 0))
        if ids.size and (keys.size == 0 or (keys[at_safe] != ids).any()):
            raise FormatError("a stack, frame or string id has no dictionary entry",
                              path="stacks")
        return order[at_safe]

    return rows


@dataclass(frozen=True)
class FunctionCounts:
    """Per key of ``by`` (``keys``: tuples of the key fields), its ``self`` and
    ``cumulative`` weights; ``total`` the weight of every counted sample."""

    by: By
    weights: dict[tuple, tuple[int, int]]
    total: int

    @classmethod
    def of_profile(cls, profile: Profile, by: By = "function", **options) -> FunctionCounts:
        """The function table of *profile* (:func:`~tachyon_format.analysis.function_table`,
        *options* passed on) as counts by key."""
        table = function_table(profile, by, **options)
        fields = fields_of(by)
        keys = zip(*(table[f].tolist() for f in fields), strict=True)
        weights = {key: (own, cum) for key, own, cum in zip(
            keys, table["self"].tolist(), table["cumulative"].tolist(), strict=True)}
        return cls(by, weights, table.total)

    @classmethod
    def combine(cls, parts: Sequence[FunctionCounts]) -> FunctionCounts:
        """The sum of *parts* (all of the same ``by``)."""
        parts = list(parts)
        if not parts:
            raise ValueError("nothing to combine")
        out: dict[tuple, tuple[int, int]] = {}
        for part in parts:
            for key, (own, cum) in part.weights.items():
                was = out.get(key, (0, 0))
                out[key] = (was[0] + own, was[1] + cum)
        return cls(parts[0].by, out, sum(p.total for p in parts))

    def table(self) -> Table:
        """As :func:`~tachyon_format.analysis.function_table` returns it: sorted by ``self``,
        then ``cumulative`` (ties by key, so that the order does not depend on how the parts
        were combined)."""
        fields = fields_of(self.by)
        keys = sorted(self.weights)
        columns: dict[str, np.ndarray] = {}
        for i, name in enumerate(fields):
            text = name in ("filename", "funcname")
            columns[name] = np.array([k[i] for k in keys], dtype=object if text else np.int64)
        columns["self"] = np.array([self.weights[k][0] for k in keys], np.int64)
        columns["cumulative"] = np.array([self.weights[k][1] for k in keys], np.int64)
        return Table(columns, self.total, {"by": self.by}).sort(("self", "cumulative"))
