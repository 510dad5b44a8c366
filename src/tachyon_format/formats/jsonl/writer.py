"""Write a :class:`~tachyon_format.model.Profile` as CPython 3.15's JSONL export: the bytes
``python -m profiling.sampling replay --jsonl`` writes for the same samples (its
``JsonlCollector``), given the same ``run_id``.

1. The samples as CPython's collector sees them (:func:`~tachyon_format.model.internal.
   visible_stacks`), grouped by stack with one sort: the work after it is per distinct stack.
2. Distinct stacks in order of first appearance (CPython assigns ids as samples arrive), as
   CSR lists of frame rows, innermost first.
3. Frame rows mapped to JSONL frames (file, function, line, end line, column, end column;
   the opcode is not part of the key), numbered by first appearance in those lists; strings
   interned function first, then file, per new frame, as CPython does.
4. ``self`` per frame: the weight of the stacks it ends; ``cumulative``: of the stacks it is
   in, each (stack, frame) pair counted once.

A profile read from a JSONL file (flat: one single-frame stack per frame that has ``self``
samples, the ``cumulative`` counts in ``extras["jsonl"]``) is written back as it was read.
Aggregated profiles (rows that stand for several samples) give the same counts; the ids then
follow the order of the rows, not of time.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import numpy.typing as npt

from tachyon_format.model import Profile
from tachyon_format.model.aggregate import group_count
from tachyon_format.model.internal import visible_stacks

from ..sources import whole_file_writer
from .facts import EXTRAS_KEY, SCHEMA_VERSION, JsonlFacts

CHUNK_SIZE = 256
"""Entries per ``string_table``/``frame_table``/``agg`` record (CPython's ``_CHUNK_SIZE``)."""
MODE_NAMES = {0: "wall", 1: "cpu", 2: "gil", 3: "all", 4: "exception"}
"""CPython's ``PROFILING_MODE_NAMES`` (another number is written as its decimal text)."""
_UNSET: Any = object()


def dumps(profile: Profile, *, run_id: str | None = None, sample_interval_usec: int | None = None,
          mode: int | str | None = _UNSET) -> bytes:
    """The JSONL file's bytes.

    *run_id*: the hex id tagging every record (default: the one the profile was read with,
    else a new ``uuid4().hex``, as CPython makes one per run). *sample_interval_usec*
    (default: the profile's sampling interval) and *mode* (a profiling mode number or name;
    default: the profile's, omitted when unknown) go to the ``meta`` record."""
    facts = profile.extras.get(EXTRAS_KEY)
    facts = facts if isinstance(facts, JsonlFacts) else None
    if run_id is None:
        run_id = facts.run_id if facts is not None else uuid.uuid4().hex
    meta: dict[str, Any] = {"type": "meta", "v": SCHEMA_VERSION, "run_id": run_id,
                            "sample_interval_usec": _interval_of(profile, facts)
                            if sample_interval_usec is None else sample_interval_usec}
    mode = _mode_of(profile, facts) if mode is _UNSET else mode
    if mode is not None:
        meta["mode"] = MODE_NAMES.get(mode, str(mode)) if isinstance(mode, int) else mode

    flat = _flat_counts(profile, facts)
    order, self_counts, cumulative = flat if flat is not None else _stack_counts(profile)
    string_ids: dict[str, int] = {}
    frames = _frame_records(profile, order, string_ids)
    strings = [{"str_id": i, "value": text} for text, i in string_ids.items()]
    total = int(self_counts.sum())
    entries = [{"frame_id": i, "self": s, "cumulative": c} for i, (s, c) in enumerate(
        zip(self_counts.tolist(), cumulative.tolist(), strict=True))]

    lines = [_dump(meta)]
    base = {"v": SCHEMA_VERSION, "run_id": run_id}
    for kind, key, items, extra in (("string_table", "strings", strings, {}),
                                    ("frame_table", "frames", frames, {}),
                                    ("agg", "entries", entries,
                                     {"kind": "frame", "scope": "final",
                                      "samples_total": total})):
        head = {"type": kind, **base, **extra}
        lines += [_dump({**head, key: items[i:i + CHUNK_SIZE]})
                  for i in range(0, len(items), CHUNK_SIZE)]
    lines.append(_dump({"type": "end", **base, "samples_total": total}))
    return "".join(lines).encode("utf-8")


def _dump(record: dict) -> str:
    return json.dumps(record, separators=(",", ":")) + "\n"


def _stack_counts(profile: Profile) -> tuple[npt.NDArray[np.int64], np.ndarray, np.ndarray]:
    """Steps 1-4: the JSONL frames as frame rows (one representative each, in id order),
    and their ``self`` and ``cumulative`` counts."""
    stacks, stack_ids = visible_stacks(profile)
    weights = np.asarray(profile.sample_counts(), dtype=np.int64)
    counted = np.flatnonzero((stack_ids >= 0) & (weights > 0))
    if counted.size == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    keys, totals = group_count({"stack": stack_ids[counted]}, weights[counted])
    _, first_row = np.unique(stack_ids[counted], return_index=True)  # same sorted keys
    by_time = np.argsort(first_row, kind="stable")
    distinct, totals = keys["stack"][by_time], totals[by_time]
    offsets, rows = stacks.to_csr(distinct)

    used, first_use = np.unique(rows, return_index=True)
    key_ids: dict[tuple, int] = {}
    representative: list[int] = []
    jsonl_of_row = np.zeros(int(used.max()) + 1, np.int64)
    for row in used[np.argsort(first_use, kind="stable")].tolist():
        key = _frame_key(profile, row)
        found = key_ids.get(key)
        if found is None:
            found = key_ids[key] = len(representative)
            representative.append(row)
        jsonl_of_row[row] = found
    ids = jsonl_of_row[rows]
    n = len(representative)

    self_counts = np.zeros(n, np.int64)
    np.add.at(self_counts, ids[offsets[:-1]], totals)
    owner = np.repeat(np.arange(distinct.size, dtype=np.int64), np.diff(offsets))
    pairs = np.unique(owner * n + ids)  # each frame once per stack (recursion)
    cumulative = np.zeros(n, np.int64)
    np.add.at(cumulative, pairs % n, totals[pairs // n])
    return np.asarray(representative, np.int64), self_counts, cumulative


def _flat_counts(profile: Profile, facts: JsonlFacts | None):
    """For a profile as read from a JSONL file: every frame row in order, ``self`` from the
    samples, ``cumulative`` from the facts; None for any other profile."""
    n = len(profile.frames)
    if facts is None or facts.cumulative.size != n:
        return None
    stack = profile.samples.stack
    if (stack < 0).any() or (stack.size and (profile.stacks.parent[stack] != -1).any()):
        return None
    self_counts = np.zeros(n, np.int64)
    np.add.at(self_counts, profile.stacks.frame[stack],
              np.asarray(profile.sample_counts(), np.int64))
    return np.arange(n, dtype=np.int64), self_counts, facts.cumulative.astype(np.int64)


def _frame_key(profile: Profile, row: int) -> tuple:
    """CPython's frame key: file and function texts and the location as exported."""
    f, strings = profile.frames, profile.strings
    return (strings[int(f.filename[row])], strings[int(f.funcname[row])],
            *_location(profile, row).items())


def _location(profile: Profile, row: int) -> dict[str, int]:
    """``line`` (0 for a frame without location), then ``end_line`` if > 0, ``col`` and
    ``end_col`` if >= 0 (CPython's ``_location_to_export_fields``)."""
    f = profile.frames
    line = int(f.lineno[row])
    if line == -1:  # no location: CPython's DEFAULT_LOCATION (0, 0, -1, -1)
        return {"line": 0}
    fields = {"line": line}
    end_line, col, end_col = int(f.end_lineno[row]), int(f.column[row]), int(f.end_column[row])
    if end_line > 0:
        fields["end_line"] = end_line
    if col >= 0:
        fields["col"] = col
    if end_col >= 0:
        fields["end_col"] = end_col
    return fields


def _frame_records(profile: Profile, rows: npt.NDArray[np.int64],
                   string_ids: dict[str, int]) -> list[dict]:
    strings, f = profile.strings, profile.frames
    out = []
    for frame_id, row in enumerate(rows.tolist()):
        func = string_ids.setdefault(strings[int(f.funcname[row])], len(string_ids))
        path = string_ids.setdefault(strings[int(f.filename[row])], len(string_ids))
        out.append({"frame_id": frame_id, "path_str_id": path, "func_str_id": func,
                    **_location(profile, row)})
    return out


def _interval_of(profile: Profile, facts: JsonlFacts | None) -> int:
    if facts is not None and "sample_interval_usec" in facts.meta:
        return facts.meta["sample_interval_usec"]
    info = _tachyon_info(profile)
    if info is not None:
        return info["sample_interval_us"]
    return profile.meta.period // 1000


def _mode_of(profile: Profile, facts: JsonlFacts | None) -> int | str | None:
    if facts is not None:
        return facts.meta.get("mode")
    info = _tachyon_info(profile)
    return None if info is None else info.get("mode")


def _tachyon_info(profile: Profile) -> dict | None:
    tachyon = profile.extras.get("tachyon")
    return getattr(tachyon, "info", None)


write = whole_file_writer(dumps)
