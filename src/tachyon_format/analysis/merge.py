"""Several profiles as one: e.g. the per-process files ``<base>_<pid>.bin`` that
``python -m profiling.sampling run --subprocesses`` writes.

Strings are re-interned by their bytes, frames re-numbered (identical frame rows become
one), stacks rebuilt in one prefix tree, thread rows and mappings appended. Each input's
threads stay distinct rows; which input (and process id) a thread row came from is kept in
``extras["merge"]`` (:class:`MergeFacts`: ``thread_source``, ``thread_pid()``), so that a
thread of the merged profile can be traced back to its process.

As pprof's ``Merge``, profiles of different sample types, periods or sampling modes
(``meta.period_type``: wall, cpu, gil, ...) are refused (:class:`MergeError`) unless told
how: ``sample_type=`` counts every input by that one sample type; ``force=True`` merges
different periods or modes, keeping the first input's. Per-format extras (a Tachyon record
table, pprof comments) describe one input and are not carried over.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from tachyon_format.model import (
    Frames,
    Mappings,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
)

EXTRAS_KEY = "merge"
_PID_NAME = re.compile(r"_(\d+)(?:\.[^.]*)*$")


class MergeError(ValueError):
    """The profiles do not measure the same thing (and nothing said how to merge them)."""


@dataclass(frozen=True)
class MergeFacts:
    """``sources``: a name per input profile; ``pids``: its process id (None if unknown);
    ``thread_source``: per thread row of the merged profile, the input it came from."""

    sources: tuple[str, ...]
    pids: tuple[int | None, ...]
    thread_source: npt.NDArray[np.int32]

    def thread_pid(self) -> npt.NDArray[np.int64]:
        """Per thread row: the process id of its input (-1 if unknown)."""
        pids = np.array([-1 if p is None else p for p in self.pids], np.int64)
        return pids[self.thread_source] if pids.size else np.zeros(0, np.int64)


def pid_of(path: str | os.PathLike) -> int | None:
    """The process id in a file name ``<base>_<pid>.<ext>`` (``--subprocesses``' naming)."""
    found = _PID_NAME.search(Path(path).name)
    return int(found.group(1)) if found else None


def merge_files(profiles: Mapping[str | os.PathLike, Profile], **options) -> Profile:
    """The profiles read from the files named by the keys, merged, each input's pid taken
    from its file name (``{path: tachyon_format.read(path) for path in paths}``; this layer
    reads no files itself). *options* go to :func:`merge`."""
    return merge(list(profiles.values()), names=[os.fspath(p) for p in profiles],
                 pids=[pid_of(p) for p in profiles], **options)


REMEDIES = {"sample_type": "pass sample_type= to merge by one of them",
            "force": "force=True merges anyway"}
"""What to do about each kind of problem, in the API's words (the command line has its own)."""


def check_compatible(profiles: Sequence[Profile], *, sample_type: str | None = None,
                     force: bool = False, names: Sequence[str] | None = None,
                     remedies: dict[str, str] = REMEDIES) -> list[str]:
    """Why *profiles* may not be merged as asked ([] if they may): each problem names the
    profiles by *names* (else ``profile N``) and says what to do in *remedies*' words."""
    problems = []
    first = profiles[0].meta
    name = (lambda i: names[i]) if names is not None else (lambda i: f"profile {i}")
    for index, profile in enumerate(profiles[1:], 1):
        meta = profile.meta
        if sample_type is None and meta.sample_types != first.sample_types:
            problems.append(f"{name(index)} has sample types {_types(meta)}, {name(0)} "
                            f"{_types(first)} ({remedies['sample_type']})")
        if not force and meta.period_type != first.period_type:
            problems.append(f"{name(index)} was sampled as {_period(meta)}, {name(0)} as "
                            f"{_period(first)} ({remedies['force']})")
        if not force and meta.period != first.period:
            problems.append(f"{name(index)} has a sampling period of {_period_text(meta)}, "
                            f"{name(0)} {_period_text(first)} ({remedies['force']})")
    return problems


def _period_text(meta) -> str:
    """The sampling period with its unit (nanoseconds as µs or ms where whole)."""
    unit = meta.period_type.unit if meta.period_type is not None else ""
    if unit == "nanoseconds" and meta.period:
        for scale, name in ((1_000_000, "ms"), (1_000, "µs")):
            if meta.period % scale == 0:
                return f"{meta.period // scale} {name}"
    return f"{meta.period} {unit}".strip()


def merge(profiles: Sequence[Profile], *, names: Sequence[str] | None = None,
          pids: Sequence[int | None] | None = None, sample_type: str | None = None,
          force: bool = False) -> Profile:
    """One profile holding every sample of *profiles* (see the module docstring)."""
    profiles = list(profiles)
    if not profiles:
        raise ValueError("nothing to merge")
    problems = check_compatible(profiles, sample_type=sample_type, force=force)
    if problems:
        raise MergeError("; ".join(problems))
    # 1. Strings by their bytes; each input's string rows mapped to the joint table.
    joint: dict[bytes, int] = {}
    string_maps = [np.fromiter((joint.setdefault(raw, len(joint)) for raw in p.strings.raws()),
                               np.int64, len(p.strings)) for p in profiles]
    strings = Strings.from_raw(joint)
    # 2. Mappings and frames appended with their strings (and mappings) remapped.
    mappings, mapping_maps = _mappings(profiles, string_maps)
    frames, frame_maps = _frames(profiles, string_maps, mapping_maps)
    # 3. Every node of every tree as a list of joint frame rows; one tree for all.
    csr = [p.stacks.to_csr() for p in profiles]
    offsets = [np.zeros(1, np.int64)]
    flat, end = [], 0
    for (node_offsets, frame_rows), frame_map in zip(csr, frame_maps, strict=True):
        offsets.append(node_offsets[1:] + end)
        flat.append(frame_map[frame_rows])
        end += int(node_offsets[-1])
    stacks, node_ids = Stacks.from_csr(np.concatenate(offsets), np.concatenate(flat))
    # 4. Samples, with stack and thread rows moved to the joint tables.
    samples = _samples(profiles, node_ids, sample_type)
    threads = Threads(
        np.concatenate([p.threads.interpreter_id for p in profiles]).astype(np.uint32),
        np.concatenate([p.threads.thread_id for p in profiles]).astype(np.uint64))
    thread_source = np.repeat(np.arange(len(profiles), dtype=np.int32),
                              [len(p.threads) for p in profiles])
    facts = MergeFacts(
        tuple(names) if names is not None else tuple(f"profile {i}" for i in
                                                     range(len(profiles))),
        tuple(pids) if pids is not None else (None,) * len(profiles), thread_source)
    return Profile(strings, frames, stacks, threads, samples, _meta(profiles, sample_type),
                   mappings, {EXTRAS_KEY: facts})


def _types(meta: Meta) -> str:
    return ", ".join(f"{v.type}/{v.unit}" for v in meta.sample_types)


def _period(meta: Meta) -> str:
    kind = meta.period_type.type if meta.period_type is not None else "unknown"
    return f"{kind!r} every {_period_text(meta)}"


def _mappings(profiles: list[Profile], string_maps: list[np.ndarray]):
    """The mapping tables appended (strings remapped), identical rows merged; per input the
    joint row of each of its mappings."""
    parts = [p.mappings for p in profiles]
    sizes = [len(m.start) for m in parts]
    if not sum(sizes):
        return Mappings.empty(), [np.zeros(0, np.int64) for _ in parts]
    table = np.stack([
        *(np.concatenate([m.columns()[name] for m in parts]).astype(np.uint64)
          for name in ("start", "limit", "offset")),
        *(np.concatenate([s[m.columns()[name].astype(np.int64)] for m, s in
                          zip(parts, string_maps, strict=True)]).astype(np.uint64)
          for name in ("filename", "build_id"))], axis=1)
    distinct, inverse = np.unique(table, axis=0, return_inverse=True)
    joined = Mappings(distinct[:, 0], distinct[:, 1], distinct[:, 2],
                      distinct[:, 3].astype(np.uint32), distinct[:, 4].astype(np.uint32))
    return joined, np.split(inverse.reshape(-1).astype(np.int64), np.cumsum(sizes)[:-1])


def _frames(profiles: list[Profile], string_maps: list[np.ndarray],
            mapping_maps: list[np.ndarray]) -> tuple[Frames, list[np.ndarray]]:
    """The frame tables appended (strings remapped), identical rows merged; per input the
    joint row of each of its frame rows."""
    native = any(p.frames.address is not None for p in profiles)
    columns: dict[str, list[np.ndarray]] = {}
    for profile, string_map, mapping_map in zip(profiles, string_maps, mapping_maps,
                                                strict=True):
        frames = profile.frames
        n = len(frames.lineno)
        strings_end = string_map.size
        for name in ("filename", "funcname"):
            raw = frames.columns()[name].astype(np.int64)
            inside = raw < strings_end  # (an index past the table stays past the new one)
            columns.setdefault(name, []).append(
                np.where(inside, string_map[np.minimum(raw, max(strings_end - 1, 0))]
                         if strings_end else 0, 2**31 - 1))
        for name in ("lineno", "end_lineno", "column", "end_column", "opcode"):
            columns.setdefault(name, []).append(frames.columns()[name].astype(np.int64))
        if native:
            address = frames.address if frames.address is not None else np.zeros(n, np.uint64)
            mapping = (frames.mapping.astype(np.int64) if frames.mapping is not None
                       else np.full(n, -1, np.int64))
            columns.setdefault("address", []).append(address.astype(np.uint64).view(np.int64))
            inside = (mapping >= 0) & (mapping < mapping_map.size)
            columns.setdefault("mapping", []).append(np.where(
                inside, np.append(mapping_map, -1)[np.where(inside, mapping, -1)], -1))
    names = list(columns)
    table = np.stack([np.concatenate(columns[n]) for n in names], axis=1)
    sizes = [len(p.frames.lineno) for p in profiles]
    if table.shape[0]:
        distinct, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
    else:
        distinct, inverse = table, np.zeros(0, np.int64)
    dtypes = {"filename": np.uint32, "funcname": np.uint32, "lineno": np.int32,
              "end_lineno": np.int32, "column": np.int32, "end_column": np.int32,
              "opcode": np.int16, "mapping": np.int32}
    values = {}
    for i, name in enumerate(names):
        column = distinct[:, i]
        values[name] = column.view(np.uint64) if name == "address" else column.astype(
            dtypes[name])
    maps = np.split(inverse.astype(np.int64), np.cumsum(sizes)[:-1])
    return Frames(**values), maps


def _samples(profiles: list[Profile], node_ids: np.ndarray,
             sample_type: str | None) -> Samples:
    node_bases = np.cumsum([0, *(len(p.stacks) for p in profiles)])
    thread_bases = np.cumsum([0, *(len(p.threads) for p in profiles)])
    stack, thread = [], []
    lookup = np.append(node_ids.astype(np.int64), -1)  # (the last: the empty stack)
    for profile, node_base, thread_base in zip(profiles, node_bases, thread_bases,
                                               strict=False):
        old = profile.samples.stack.astype(np.int64)
        stack.append(lookup[np.where(old >= 0, old + node_base, node_ids.size)])
        row = profile.samples.thread.astype(np.int64)
        thread.append(np.where(row >= 0, row + thread_base, -1))
    every = [p.samples for p in profiles]
    stamps = (np.concatenate([s.timestamp_us for s in every]).astype(np.uint64)
              if all(s.timestamp_us is not None for s in every) else None)
    status = (np.concatenate([s.status for s in every]).astype(np.uint8)
              if all(s.status is not None for s in every) else None)
    if sample_type is not None:
        values = np.concatenate([np.asarray(p.weights(sample_type), np.int64)
                                 for p in profiles])[:, None]
    elif all(s.values is None for s in every):
        values = None
    else:
        values = np.concatenate([
            s.values if s.values is not None else np.ones((len(s), 1), np.int64)
            for s in every]).astype(np.int64)
    return Samples(np.concatenate(stack).astype(np.int32),
                   np.concatenate(thread).astype(np.int32), stamps, status, values)


def _meta(profiles: list[Profile], sample_type: str | None) -> Meta:
    first = profiles[0].meta
    types = first.sample_types
    if sample_type is not None:
        types = (first.sample_types[first.sample_type_index(sample_type)],)
    starts = [p.meta.time_ns for p in profiles if p.meta.time_ns is not None]
    durations = [p.meta.duration_ns for p in profiles if p.meta.duration_ns is not None]
    return Meta(sample_types=types,
                default_sample_type=None if sample_type is not None else
                first.default_sample_type,
                period_type=first.period_type, period=first.period,
                time_ns=min(starts) if starts else None,
                duration_ns=max(durations) if durations else None)
