""":class:`~tachyon_format.Profile` -> pprof.

1. Strings: the profile's table (behind a leading ``""`` if it has none), then the names
   pprof needs (sample types, label keys, ...).
2. Tables (:mod:`.tables`): kept as they were for a profile read from pprof, else one
   Location per frame and one Function per (name, file).
3. Samples: a profile with values (read from pprof, gperftools) keeps its samples one for
   one; one without (Tachyon) gets one pprof sample per (stack, thread, status) with the
   count, and the time (count x period) unless ``time_values=False``; or with
   ``timestamps=True`` one pprof sample per sample with its time as a label. Encoded at the
   wire level in chunks, straight into the compressor.

Options and what is kept or lost: docs/formats/pprof.md.
"""

from __future__ import annotations

import functools
import os
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from tachyon_format.kernels.protowire import Part, encode_messages, encode_packed
from tachyon_format.kernels.segments import unique_inverse
from tachyon_format.model import SAMPLES_COUNT, Profile
from tachyon_format.schema import pprof_plain as spec
from tachyon_format.schema.protobuf_plain import key_of

from ..sources import Destination, output_stream
from .compression import COMPRESSIONS, GZIP_LEVEL, ZSTD_LEVEL, Compression, _zstd
from .facts import (
    EXTRAS_KEY,
    INTERPRETER_ID,
    NANOSECONDS,
    THREAD_ID,
    THREAD_STATUS,
    TIMESTAMP,
    PprofFacts,
)
from .labels import status_name
from .stack_bytes import StackBytes
from .tables import StringTable, encode_head, encode_tables

SAMPLES_PER_CHUNK = 1 << 16
SAMPLE_KEY = key_of(spec.PROFILE, "sample")
LABEL_KEY = key_of(spec.SAMPLE, "label")
LOCATIONS_KEY = key_of(spec.SAMPLE, "location_id")
VALUES_KEY = key_of(spec.SAMPLE, "value")
LABEL_KEYS = {name: key_of(spec.LABEL, name) for name in ("key", "str", "num", "num_unit")}


def write(profile: Profile, destination: Destination, *,
          compression: Compression | None = None, level: int | None = None,
          **options: Any) -> None:
    """Write *profile* as pprof to *destination* (a path or a binary file).

    ``compression``: ``"gzip"`` (what pprof writes), ``"zstd"`` or ``"none"``; by default
    from the path's name (``.zst`` zstd, ``.pb`` none, else gzip). ``level``: the
    compressor's level. Other options: :func:`encode`."""
    if compression is None:
        compression = compression_for(destination)
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)}, "
                         f"not {compression!r}")
    pieces = encode(profile, **options)
    with output_stream(destination) as out:
        _stream(pieces, out, compression, level)


def compression_for(destination) -> Compression:
    """The compression a destination's name asks for: ``.zst`` zstd, ``.pb`` none (a raw
    message), anything else (``.pb.gz``, ``.pprof``, a file object) gzip, as pprof writes."""
    name = os.fspath(destination).lower() if isinstance(destination, str | os.PathLike) else ""
    if name.endswith(".zst"):
        return "zstd"
    if name.endswith(".pb"):
        return "none"
    return "gzip"


def dumps(profile: Profile, *, compression: Compression = "gzip", level: int | None = None,
          **options: Any) -> bytes:
    """The pprof file of *profile* as bytes (see :func:`write`)."""
    import io

    out = io.BytesIO()
    write(profile, out, compression=compression, level=level, **options)
    return out.getvalue()


def _stream(pieces: Iterator[bytes], f: BinaryIO, compression: str, level: int | None):
    if compression == "none":
        for piece in pieces:
            f.write(piece)
        return
    if compression == "gzip":
        z = zlib.compressobj(GZIP_LEVEL if level is None else level, zlib.DEFLATED,
                             16 + zlib.MAX_WBITS)
        for piece in pieces:
            f.write(z.compress(piece))
        f.write(z.flush())
        return
    zstd = _zstd()
    c = zstd.ZstdCompressor(ZSTD_LEVEL if level is None else level)
    for piece in pieces:
        f.write(c.compress(piece))
    f.write(c.flush())


def encode(profile: Profile, *, timestamps: bool = False, time_values: bool = True,
           comments: list[str] | None = None, doc_url: str | None = None,
           drop_frames: str | None = None, keep_frames: str | None = None,
           default_sample_type: str | None = None) -> Iterator[bytes]:
    """The serialized ``Profile`` message of *profile*, piece by piece.

    ``timestamps``: one pprof sample per sample, with its time as the numeric label
    ``end_timestamp_ns`` (for a profile without values; one with values keeps its samples
    and writes the label if it has timestamps). ``time_values``: add the time
    (count x period, in the period's unit) as a second value of aggregated samples.
    ``comments``, ``doc_url``, ``drop_frames``, ``keep_frames``, ``default_sample_type``
    replace what the profile had."""
    facts = profile.extras.get(EXTRAS_KEY)
    facts = facts if isinstance(facts, PprofFacts) else None
    strings = StringTable(profile.strings)
    plan = _plan(profile, facts, strings, timestamps, time_values)
    overrides = {"comments": comments, "doc_url": doc_url, "drop_frames": drop_frames,
                 "keep_frames": keep_frames, "default_sample_type": default_sample_type}
    tables = encode_tables(profile, facts, strings)
    head = encode_head(profile, facts, strings, plan["sample_types"], overrides)
    yield head
    yield from _samples(profile, plan, tables.location_of_frame, tables.is_head)
    yield tables.mappings
    yield tables.locations
    yield tables.functions
    yield strings.encode()


# --- which samples, values and labels -----------------------------------------------------------


def _plan(profile: Profile, facts: PprofFacts | None, strings: StringTable, timestamps: bool,
          time_values: bool) -> dict[str, Any]:
    """What the pprof samples are: rows of the model's samples (``rows``), their values,
    and the labels, as string indices."""
    s, meta = profile.samples, profile.meta
    n = len(s)
    mapped = facts.mapped_labels if facts is not None else None

    def emit(concept: str) -> bool:
        return mapped is None or concept in mapped

    has_threads = len(profile.threads) > 0 and emit("thread_id")
    weights = _sample_counts(profile, facts)
    if s.values is not None and weights is None:
        rows = np.arange(n)
        values = s.values
        counts = None
        sample_types = meta.sample_types
        with_time = s.timestamp_us is not None and (timestamps or emit("timestamp"))
    elif timestamps:
        rows = np.arange(n)
        counts = np.ones(n, np.int64) if weights is None else weights.astype(np.int64)
        with_time = s.timestamp_us is not None
    else:
        rows, group = _first_of_each(s.stack, s.thread, s.status)
        if weights is None:
            counts = np.bincount(group, minlength=rows.size)
        else:
            counts = np.zeros(rows.size, np.int64)
            np.add.at(counts, group, weights)
        with_time = False
    if s.values is None or weights is not None:
        sample_types = meta.sample_types
        columns = [counts]
        if time_values and meta.period > 0 and meta.period_type is not None:
            sample_types = (*sample_types, meta.period_type)
            columns.append(counts * int(meta.period))
        values = np.stack(columns, axis=1)
    else:
        values = values[rows]
    labels: list[tuple[int, np.ndarray | None, np.ndarray | None, int]] = []
    thread = s.thread[rows]
    if has_threads and (thread >= 0).all():
        labels.append(_string_label(strings, THREAD_ID, profile.threads.thread_id, thread))
        if emit("interpreter_id"):
            labels.append(_string_label(strings, INTERPRETER_ID,
                                        profile.threads.interpreter_id, thread))
    if s.status is not None and emit("status"):
        labels.append(_string_label(strings, THREAD_STATUS, np.arange(256), s.status[rows],
                                    status_name))
    if with_time:
        ns = s.timestamp_us[rows].astype(np.int64) * 1000
        labels.append((strings.add(TIMESTAMP), None, ns, strings.add(NANOSECONDS)))
    return {"rows": rows, "values": values, "sample_types": sample_types, "labels": labels,
            "grouped": counts is not None and not timestamps,
            "facts": facts if facts is not None and _labels_fit(facts, n) else None}


def _sample_counts(profile: Profile, facts: PprofFacts | None) -> np.ndarray | None:
    """The number of samples each row stands for, when a profile not read from pprof has
    only a ``samples``/``count`` value (an aggregated one, ``read(..., aggregate=True)``):
    written as the samples it counts. None otherwise (rows counting once, or values of
    their own)."""
    values = profile.samples.values
    if values is None or facts is not None or tuple(profile.meta.sample_types) != (
            SAMPLES_COUNT,):
        return None
    return values[:, 0]


def _first_of_each(stack, thread, status):
    """The first sample of each distinct (stack, thread, status), in order of appearance,
    and each sample's group. One integer key per sample (mixed radix over the statuses and
    threads that occur); a table over the key range when it is small, else a sort."""
    n = stack.size
    status = status if status is not None else np.zeros(n, np.uint8)
    status_code = np.zeros(256, np.int64)
    seen = np.zeros(256, bool)
    seen[status] = True
    status_code[seen] = np.arange(int(seen.sum()))
    num_status = max(int(seen.sum()), 1)
    threads = int(thread.max()) + 2 if n else 1
    span = (int(stack.max()) + 2 if n else 1) * threads * num_status
    key = ((stack.astype(np.int64) + 1) * threads + (thread.astype(np.int64) + 1)) * \
        num_status + status_code[status]
    if span <= 8 * n + 1024:  # a table over the keys: no sort
        present = np.zeros(span, bool)
        present[key] = True
        group = (np.cumsum(present) - 1)[key]
        first = np.empty(int(present.sum()), np.int64)
        first[group[::-1]] = np.arange(n - 1, -1, -1)  # the last write is the first sample
    else:
        _, first, group = unique_inverse(key)
    order = np.argsort(first, kind="stable")  # groups in order of first appearance
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    return first[order], rank[group]


def _labels_fit(facts: PprofFacts, n: int) -> bool:
    """Whether the kept labels (by sample row) still belong to the profile's rows: not once
    the rows changed in number (aggregated, ``read(..., aggregate=True)``, or filtered)."""
    sample = facts.columns.get("label_sample")
    if sample is None or facts.info.get("num_samples", n) != n:
        return False
    return sample.size == 0 or int(sample.max()) < n


def _string_label(strings: StringTable, key: str, table: np.ndarray, rows: np.ndarray,
                  name=str):
    """A string label of every sample: the value of ``table[rows]`` as text, a string index
    each. Vectorised over the small *table* (threads, statuses): the strings of the values
    that occur are added in order of value, each once."""
    present = np.zeros(table.size, bool)
    present[rows] = True
    distinct, where = np.unique(table[present], return_inverse=True)
    index = np.asarray([strings.add(name(int(v))) for v in distinct.tolist()], np.int64)
    of_row = np.zeros(table.size, np.int64)
    of_row[present] = index[where.ravel()]
    return strings.add(key), of_row[rows], None, 0


# --- samples at the wire level ------------------------------------------------------------------


def _samples(profile: Profile, plan: dict[str, Any], location_of_frame: np.ndarray,
             is_head: np.ndarray) -> Iterator[bytes]:
    rows, values = plan["rows"], plan["values"]
    labels = [label for label in plan["labels"] if label[2] is not None]  # per-sample ones
    stack = profile.samples.stack[rows]
    stack_bytes = StackBytes(profile.stacks, location_of_frame, is_head)
    num_types = values.shape[1]
    blocks = _label_blocks(plan)
    other = plan["facts"]
    if other is not None:
        label_bytes, label_starts, label_lengths = encode_kept_labels(
            other, rows.size)
    for first in range(0, rows.size, SAMPLES_PER_CHUNK):
        last = min(first + SAMPLES_PER_CHUNK, rows.size)
        n = last - first
        parts = [_stack_part(stack_bytes, stack[first:last], plan["grouped"])]
        value_bytes, value_offsets = encode_packed(
            values[first:last].reshape(-1).view(np.uint64),
            np.arange(n + 1, dtype=np.int64) * num_types)
        parts.append(Part.of(VALUES_KEY, value_bytes, value_offsets))  # (after the stacks' spill)
        if other is not None:
            parts.append(Part(0, payload=label_bytes, starts=label_starts[first:last],
                              lengths=label_lengths[first:last], raw=True))
        if blocks is not None:
            block = plan["block_of_row"][first:last]
            parts.append(Part(0, payload=blocks[0], starts=blocks[1][block],
                              lengths=blocks[1][block + 1] - blocks[1][block], raw=True))
        for key, string, num, unit in labels:
            z = np.zeros(n, np.uint64)
            message, moffsets = encode_messages(n, [
                Part(LABEL_KEYS["key"], values=np.full(n, key, np.uint64)),
                Part(LABEL_KEYS["str"], values=z if string is None else string[first:last].astype(
                    np.uint64)),
                Part(LABEL_KEYS["num"],
                     values=z if num is None else num[first:last].view(np.uint64)),
                Part(LABEL_KEYS["num_unit"], values=np.full(n, unit, np.uint64)),
            ], field_key=LABEL_KEY)
            parts.append(Part.of(0, message, moffsets, raw=True))
        out, _ = encode_messages(n, parts, field_key=SAMPLE_KEY)
        yield out.tobytes()


def _stack_part(stack_bytes: StackBytes, stack: np.ndarray, grouped: bool) -> Part:
    """The ``location_id`` field of samples with the given stacks: written in place when
    most stacks differ (samples grouped by stack, thread and status); else each distinct
    stack packed once and copied (samples one per tick, mostly on the same few stacks)."""
    # (the values field after it has 3 bytes at least, to take the spill)
    if grouped and stack_bytes.spill <= 3:
        return Part(LOCATIONS_KEY, lengths=stack_bytes.lengths(stack), spill=stack_bytes.spill,
                    fill=functools.partial(_fill_stacks, stack_bytes, stack))
    distinct, u = np.unique(stack, return_inverse=True)
    if 2 * distinct.size > stack.size and stack_bytes.spill <= 3:
        return Part(LOCATIONS_KEY, lengths=stack_bytes.lengths(stack), spill=stack_bytes.spill,
                    fill=functools.partial(_fill_stacks, stack_bytes, stack))
    u = u.ravel()
    payload, starts, lengths = stack_bytes.of(distinct)
    return Part(LOCATIONS_KEY, payload=payload, starts=starts[u], lengths=lengths[u])


def _fill_stacks(stack_bytes: StackBytes, stack: np.ndarray, out: np.ndarray,
                 at: np.ndarray, here: np.ndarray) -> None:
    stack_bytes.write_at(out, at, stack[here])


def _label_blocks(plan: dict[str, Any]):
    """The string labels (thread, interpreter, status: a few distinct values each) of each
    distinct combination, encoded once: ``(bytes, offsets)``, and each sample's combination
    in ``plan["block_of_row"]``."""
    string_labels = [label for label in plan["labels"] if label[2] is None]
    if not string_labels:
        return None
    combos, plan["block_of_row"] = _combinations([label[1] for label in string_labels])
    m = combos.shape[0]
    parts = []
    for j, (key, _, _, _) in enumerate(string_labels):
        message, moffsets = encode_messages(m, [
            Part(LABEL_KEYS["key"], values=np.full(m, key, np.uint64)),
            Part(LABEL_KEYS["str"], values=combos[:, j].astype(np.uint64))], field_key=LABEL_KEY)
        parts.append(Part.of(0, message, moffsets, raw=True))
    return encode_messages(m, parts)


def _combinations(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of small non-negative integer *columns* (shape ``(m, columns)``)
    and the row of each sample among them: one mixed-radix key per sample, grouped with a
    table over the keys when the key range is small (no sort), else by sorting."""
    n = columns[0].size
    radix = [int(c.max()) + 1 if n else 1 for c in columns]
    if float(np.prod(radix, dtype=np.float64)) >= 2.0**62:
        combos, inverse = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
        return combos, inverse.ravel()
    key = np.zeros(n, np.int64)
    for c, r in zip(columns, radix, strict=True):
        key *= r
        key += c
    span = int(np.prod(radix, dtype=np.int64))
    if span <= 4 * n + 1024:
        present = np.zeros(span, bool)
        present[key] = True
        distinct = np.flatnonzero(present)
        code = np.zeros(span, np.int64)
        code[distinct] = np.arange(distinct.size)
        inverse = code[key]
    else:
        distinct, _, inverse = unique_inverse(key)
    combos = np.empty((distinct.size, len(columns)), np.int64)
    rest = distinct.astype(np.int64)
    for j in range(len(columns) - 1, -1, -1):
        rest, combos[:, j] = np.divmod(rest, radix[j])
    return combos, inverse


def encode_kept_labels(facts: PprofFacts, n: int):
    """The kept labels as encoded ``label`` fields, and each sample's byte range of them
    (labels are sorted by sample)."""
    c = facts.columns
    sample = c["label_sample"]
    message, moffsets = encode_messages(sample.size, [
        Part(LABEL_KEYS["key"], values=c["label_key"].view(np.uint64)),
        Part(LABEL_KEYS["str"], values=c["label_str"].view(np.uint64)),
        Part(LABEL_KEYS["num"], values=c["label_num"].view(np.uint64)),
        Part(LABEL_KEYS["num_unit"], values=c["label_num_unit"].view(np.uint64)),
    ])
    fields, field_offsets = encode_messages(sample.size, [Part.of(0, message, moffsets,
                                                                  raw=True)],
                                            field_key=LABEL_KEY)
    per_sample = np.zeros(n + 1, np.int64)
    np.add.at(per_sample, sample + 1, np.diff(field_offsets))
    ends = np.cumsum(per_sample)
    return fields, ends[:-1], np.diff(ends)


