"""pprof -> :class:`~tachyon_format.Profile`.

1. Unwrap (gzip, zstd or raw; capped), then decode the message's tables
   (:mod:`.wire`) and check them (:mod:`.validation`): :func:`load_tables`.
2. Frames: location ``i`` with ``k`` lines becomes ``k`` frames (innermost line first, as
   pprof lists them; one frame without a function if it has no line).
3. Samples chunk by chunk: equal location-id lists are grouped (:func:`unique_rows`), so
   each distinct stack is resolved once; labels that are model columns are collected
   (:mod:`.labels`), the others kept.
4. The distinct stacks go into the prefix tree (:meth:`Stacks.from_csr`); what only pprof
   has goes to ``extras["pprof"]`` (:class:`.facts.PprofFacts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tachyon_format.errors import FormatError
from tachyon_format.kernels.ragged import unique_rows
from tachyon_format.kernels.segments import decode_ragged_ranges, unique_inverse
from tachyon_format.model import (
    Frames,
    Mappings,
    Meta,
    Profile,
    Samples,
    Stacks,
    Threads,
    ValueType,
)
from tachyon_format.problems import Problem

from ..sources import Source, check_stack_depths, problems_reading
from ..sources import load as load_source
from .compression import DEFAULT_MAX_SIZE, decompress
from .facts import EXTRAS_KEY, INTERPRETER_ID, THREAD_ID, THREAD_STATUS, TIMESTAMP, PprofFacts
from .labels import LabelColumns
from .samples import iter_sample_chunks
from .validation import check_strings, check_tables, resolve
from .wire import (
    MAX_FUNCTIONS,
    MAX_LINES,
    MAX_LOCATIONS,
    MAX_MAPPINGS,
    MAX_SAMPLES,
    MAX_STRINGS,
    Tables,
    decode_tables,
    fail,
    scan_profile,
)

INT32 = np.iinfo(np.int32)


def load(source: Source, max_size: int = DEFAULT_MAX_SIZE) -> tuple[np.ndarray, str]:
    """The serialized message of *source* (path, bytes or binary file) as a uint8 array."""
    data = load_source(source).data
    if len(data) == 0:
        raise fail("empty input (pprof: 'empty input file')", "Profile", 0)
    message, kind = decompress(data, max_size)
    return np.frombuffer(message, np.uint8), kind


def load_tables(source: Source, *, max_size: int = DEFAULT_MAX_SIZE,
                max_samples: int = MAX_SAMPLES, max_strings: int = MAX_STRINGS,
                max_mappings: int = MAX_MAPPINGS, max_locations: int = MAX_LOCATIONS,
                max_functions: int = MAX_FUNCTIONS,
                max_lines: int = MAX_LINES) -> tuple[np.ndarray, str, Tables]:
    """Step 1: the message of *source*, its compression, and its tables, checked; the limits
    of :func:`read`."""
    buf, kind = load(source, max_size)
    if buf.size == 0:
        raise fail("empty message (pprof: 'empty input file')", "Profile", 0)
    top = scan_profile(buf, max_samples=max_samples, max_strings=max_strings,
                       max_mappings=max_mappings, max_locations=max_locations,
                       max_functions=max_functions)
    tables = decode_tables(buf, top, max_lines=max_lines)
    check_tables(tables)
    return buf, kind, tables


def read(source: Source, *, samples_per_chunk: int = 1 << 16, **limits: int) -> Profile:
    """The profile in *source*. Limits (docs/format/limits.md), the keywords of
    :func:`load_tables`: ``max_size``, the decompressed size in bytes; ``max_samples``,
    ``max_strings``, ``max_mappings``, ``max_locations``, ``max_functions``, entries of the
    message, and ``max_lines``, the lines of all locations (a
    :class:`~tachyon_format.errors.LimitError` names the one exceeded)."""
    buf, kind, tables = load_tables(source, **limits)
    frames, location_first, location_frames, frame_cols = _frames(tables)
    num_types = len(tables.head.sample_type)
    starts, ends = tables.sample_ranges
    n = starts.size
    if n and not num_types:
        raise fail("samples without sample types (pprof: 'missing sample type information')",
                   "Profile -> sample_type")
    values = np.zeros((n, num_types), np.int64)
    labels = LabelColumns(tables.strings, n)
    stack_of_sample = np.full(n, -1, np.int64)
    num_known = 0
    stack_rows: list[tuple[np.ndarray, np.ndarray]] = []  # (lengths, location rows) per chunk
    num_strings = len(tables.strings)
    for chunk in iter_sample_chunks(buf, starts, ends, samples_per_chunk, num_types=num_types):
        counts = np.diff(chunk.value_offsets)
        bad = np.flatnonzero(counts != num_types)
        if bad.size:
            i = int(bad[0])
            raise fail(f"{int(counts[i])} values for {num_types} sample types (pprof: "
                       "'mismatch: sample has N values vs. M types')",
                       f"Profile -> sample -> {chunk.first + i} -> value")
        values[chunk.first:chunk.first + len(chunk)] = chunk.values.reshape(-1, num_types)
        for name in ("key", "str", "num_unit"):
            check_strings(chunk.labels[name], num_strings,
                          f"Profile -> sample -> label {{}} (of chunk {chunk.first}) -> {name}")
        labels.add(chunk.first, chunk.label_sample, chunk.labels)
        # each chunk's distinct stacks, resolved to location rows; across chunks below
        first, inverse = unique_rows(chunk.loc_offsets, chunk.loc_ids)
        offsets, loc_ids = chunk.loc_offsets, chunk.loc_ids
        check_stack_depths(offsets, lambda i, at=chunk.first:
                           f"Profile -> sample -> {at + i} -> location_id")
        lengths = offsets[first + 1] - offsets[first]
        run = loc_ids[decode_ragged_ranges(offsets[first], lengths)]
        try:
            located = resolve(run, tables.locations["id"], "{}", zero_is_none=False)
        except FormatError as exc:  # name the sample and the place in its list
            at = int(exc.path)
            ends_at = np.cumsum(lengths)
            i = int(np.searchsorted(ends_at, at, side="right"))
            raise fail(exc.message.removeprefix("pprof: "),
                       f"Profile -> sample -> {chunk.first + int(first[i])} -> location_id"
                       f" -> {at - int(ends_at[i] - lengths[i])}") from None
        stack_of_sample[chunk.first:chunk.first + len(chunk)] = inverse + num_known
        num_known += first.size
        stack_rows.append((lengths, located))
    del buf
    stacks, stack_ids = _stacks(stack_rows, location_first, location_frames)
    columns, other = labels.finish()
    samples, threads, mapped = _samples(stack_ids[stack_of_sample] if n else
                                        np.zeros(0, np.int32), values, columns)
    facts = _facts(tables, kind, frame_cols, other, mapped)
    meta = _meta(tables)
    facts.info = info_of(tables, meta, n)
    m = tables.mappings
    return Profile(
        strings=tables.strings, frames=frames, stacks=stacks, threads=threads,
        samples=samples, meta=meta,
        mappings=Mappings(m["memory_start"], m["memory_limit"], m["file_offset"],
                          m["filename"].astype(np.uint32), m["build_id"].astype(np.uint32)),
        extras={EXTRAS_KEY: facts})


def _frames(tables: Tables):
    """Step 2: one frame per (location, line)."""
    loc, lines, fn = tables.locations, tables.lines, tables.functions
    num_lines = np.diff(lines["offsets"])
    per_location = np.maximum(num_lines, 1)
    first = np.zeros(per_location.size + 1, np.int64)
    np.cumsum(per_location, out=first[1:])
    total = int(first[-1])
    location_of_frame = np.repeat(np.arange(per_location.size), per_location)
    # frame -> line row (-1 for the frame of a location without lines)
    line_row = np.full(total, -1, np.int64)
    has = num_lines > 0
    line_row[decode_ragged_ranges(first[:-1][has], num_lines[has])] = np.arange(
        int(num_lines.sum()))
    with_line = line_row >= 0
    function_id = np.zeros(total, np.uint64)
    function_id[with_line] = lines["function_id"][line_row[with_line]]
    function_row = resolve(function_id, fn["id"], "Profile -> location -> line {} -> "
                           "function_id", zero_is_none=True)
    raw_line = np.zeros(total, np.int64)
    raw_column = np.zeros(total, np.int64)
    raw_line[with_line] = lines["line"][line_row[with_line]]
    raw_column[with_line] = lines["column"][line_row[with_line]]
    has_fn = function_row >= 0
    safe = np.where(has_fn, function_row, 0)
    name = np.where(has_fn, fn["name"][safe] if fn["id"].size else 0, 0).astype(np.uint32)
    filename = np.where(has_fn, fn["filename"][safe] if fn["id"].size else 0, 0).astype(
        np.uint32)
    mapping_row = resolve(loc["mapping_id"], tables.mappings["id"], "Profile -> location -> {} "
                          "-> mapping_id", zero_is_none=True, missing_is_none=True)
    lineno = np.where(raw_line == 0, -1, np.clip(raw_line, INT32.min, INT32.max))
    column = np.where(raw_column > 0, np.clip(raw_column - 1, -1, INT32.max), -1)
    minus = np.full(total, -1, np.int32)
    frames = Frames(
        filename=filename, funcname=name, lineno=lineno.astype(np.int32), end_lineno=minus,
        column=column.astype(np.int32), end_column=minus.copy(),
        opcode=np.full(total, -1, np.int16),
        address=loc["address"][location_of_frame],
        mapping=mapping_row[location_of_frame].astype(np.int32),
    )
    cols = {"frame_function": function_row, "frame_line": raw_line, "frame_column": raw_column,
            "location_first_frame": first[:-1], "location_num_lines": num_lines}
    return frames, first[:-1], per_location, cols


def _stacks(stack_rows, location_first, location_frames):
    """Step 4: each distinct list of locations as frames, innermost first, in the tree."""
    if not stack_rows:
        return Stacks.empty(), np.zeros(0, np.int32)
    lengths = np.concatenate([lengths for lengths, _ in stack_rows])
    rows = np.concatenate([rows for _, rows in stack_rows])
    # (a stack seen in several chunks is listed once per chunk; the tree merges them)
    frames_each = location_frames[rows]
    frame_ids = decode_ragged_ranges(location_first[rows], frames_each).astype(np.int32)
    per_stack = np.bincount(np.repeat(np.arange(lengths.size), lengths), weights=frames_each,
                            minlength=lengths.size).astype(np.int64)
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(per_stack, out=offsets[1:])
    check_stack_depths(offsets, lambda i: "Profile -> sample -> location_id (its lines)")
    return Stacks.from_csr(offsets, frame_ids, innermost_first=True)


def _samples(stack: np.ndarray, values: np.ndarray, columns: dict[str, np.ndarray]):
    n = stack.size
    mapped = {}
    if THREAD_ID in columns:
        tid = columns[THREAD_ID]
        iid = columns.get(INTERPRETER_ID, np.zeros(n, np.uint32))
        mapped["thread_id"] = THREAD_ID
        if INTERPRETER_ID in columns:
            mapped["interpreter_id"] = INTERPRETER_ID
        _, _, tid_code = unique_inverse(tid)
        _, _, iid_code = unique_inverse(iid)
        _, first, inverse = unique_inverse(iid_code.astype(np.int64) * n + tid_code)
        order = np.argsort(first, kind="stable")
        rank = np.empty(order.size, np.int64)
        rank[order] = np.arange(order.size)
        threads = Threads(iid[first[order]].astype(np.uint32), tid[first[order]])
        thread = rank[inverse.ravel()].astype(np.int32)
    else:
        threads, thread = Threads.empty(), np.full(n, -1, np.int32)
    timestamp = columns.get(TIMESTAMP)
    status = columns.get(THREAD_STATUS)
    if timestamp is not None:
        mapped["timestamp"] = TIMESTAMP
    if status is not None:
        mapped["status"] = THREAD_STATUS
    samples = Samples(stack=stack.astype(np.int32), thread=thread, timestamp_us=timestamp,
                      status=status, values=values)
    return samples, threads, mapped


def _meta(tables: Tables) -> Meta:
    head, texts = tables.head, tables.strings
    sample_types = tuple(ValueType(texts[st.type], texts[st.unit]) for st in head.sample_type)
    period_type = None
    if head.period_type is not None:
        period_type = ValueType(texts[head.period_type.type], texts[head.period_type.unit])
    return Meta(
        sample_types=sample_types,
        default_sample_type=texts[head.default_sample_type] if head.default_sample_type
        else None,
        period_type=period_type, period=int(head.period),
        time_ns=int(head.time_nanos) or None, duration_ns=int(head.duration_nanos) or None)


def _facts(tables: Tables, kind: str, frame_cols, other, mapped) -> PprofFacts:
    head, m, loc, fn = tables.head, tables.mappings, tables.locations, tables.functions
    columns = {
        "mapping_id": m["id"], **{f: m[f] for f in (
            "has_functions", "has_filenames", "has_line_numbers", "has_inline_frames")},
        "location_id": loc["id"], "location_is_folded": loc["is_folded"], **frame_cols,
        "function_id": fn["id"], "function_name": fn["name"],
        "function_system_name": fn["system_name"], "function_filename": fn["filename"],
        "function_start_line": fn["start_line"],
        **{f"label_{name}": other[name] for name in ("sample", "key", "str", "num",
                                                     "num_unit")},
    }
    strings_of = {
        "sample_type": np.asarray([(st.type, st.unit) for st in head.sample_type],
                                  np.int64).reshape(-1, 2),
        "period_type": (head.period_type.type, head.period_type.unit)
        if head.period_type is not None else None,
        **{name: int(getattr(head, name)) for name in (
            "default_sample_type", "drop_frames", "keep_frames", "doc_url")},
        "comment": np.asarray(head.comment, np.int64),
    }
    return PprofFacts(info={}, compression=kind, strings_of=strings_of, columns=columns,
                      mapped_labels=mapped)


def info_of(tables: Tables, meta: Meta, num_samples: int) -> dict[str, Any]:
    """Header-level facts of a pprof file (what :func:`tachyon_format.info` returns)."""
    texts = tables.strings
    head = tables.head
    return {
        "sample_types": [f"{v.type}/{v.unit}" for v in meta.sample_types],
        "default_sample_type": meta.default_sample_type,
        "period_type": None if meta.period_type is None else
        f"{meta.period_type.type}/{meta.period_type.unit}",
        "period": meta.period,
        "time_nanos": int(head.time_nanos),
        "duration_nanos": int(head.duration_nanos),
        "num_samples": num_samples,
        "num_locations": int(tables.locations["id"].size),
        "num_functions": int(tables.functions["id"].size),
        "num_mappings": int(tables.mappings["id"].size),
        "num_strings": len(texts),
        "comments": [texts[i] for i in head.comment],
        "doc_url": texts[head.doc_url] if head.doc_url else None,
        "drop_frames": texts[head.drop_frames] if head.drop_frames else None,
        "keep_frames": texts[head.keep_frames] if head.keep_frames else None,
    }


def info(source: Source, **limits: int) -> dict[str, Any]:
    """Header-level facts: the tables and counts, without decoding a sample (the limits of
    :func:`read`)."""
    _, kind, tables = load_tables(source, **limits)
    facts = info_of(tables, _meta(tables), int(tables.sample_ranges[0].size))
    facts["compression"] = kind
    return facts


def validate(source: Source, **options: Any) -> list[Problem]:
    """Every problem found reading *source* (the first that stops the reader: pprof's
    ``CheckValid`` and the decoder's checks, see ``validation.py``); never raises on
    malformed input, nor on a path that cannot be read."""
    return problems_reading(read, source, **options)
