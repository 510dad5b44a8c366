"""Step 3 of reading pprof: the samples, decoded in chunks (:func:`iter_sample_chunks`), so
that what a chunk expands to (every location id of every sample) never exists for the whole
file; a sample too long for one chunk is counted before it is decoded
(:func:`check_sample_counts`). Steps 1 and 2 (the top level, the tables) are :mod:`.wire`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from tachyon_format.kernels.protowire import WireError, decode_fields, find_len_run
from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.kernels.varint_messages import decode_varint_messages
from tachyon_format.schema import pprof_plain as spec
from tachyon_format.schema.leb128 import I32, I64, LEN, VARINT, LEB128Error, scan_uleb128
from tachyon_format.schema.protobuf_plain import key_of

from ..sources import MAX_STACK_DEPTH, too_deep
from .wire import (
    FIRST_WINDOW,
    LABELS,
    LOCATION_IDS,
    MAX_WINDOW,
    VALUES,
    decode_table,
    expect_wire,
    fail,
    gather_ranges,
    repeated_uint64,
)

SAMPLES_PER_CHUNK = 1 << 15
CHUNK_BYTES = 1 << 22
"""Bytes of samples decoded at a time, at most (unless one sample is longer): what a chunk
expands to is a few times this, however deep its stacks."""
LONG_SAMPLE = 1 << 16
"""A sample longer than this (bytes) has its location ids and values counted before it is
decoded (:func:`check_sample_counts`): more than ``MAX_STACK_DEPTH`` ids or more values
than sample types are refused without decoding them."""
COUNT_STEP = 1 << 24
"""Bytes of a packed run whose varints :func:`check_sample_counts` counts at a time."""


@dataclass
class SampleChunk:
    """Samples ``first .. first + n - 1`` as CSR columns: location ids, values, labels."""

    first: int
    loc_offsets: np.ndarray
    loc_ids: np.ndarray  # uint64
    value_offsets: np.ndarray
    values: np.ndarray  # int64
    label_sample: np.ndarray  # sample (within the chunk) of each label
    labels: dict[str, np.ndarray]  # key, str, num, num_unit

    def __len__(self) -> int:
        return self.loc_offsets.size - 1


def iter_sample_chunks(buf, starts, ends, per_chunk: int = SAMPLES_PER_CHUNK,
                       chunk_bytes: int = CHUNK_BYTES, *,
                       num_types: int | None = None) -> Iterator[SampleChunk]:
    """Step 3: the samples in chunks of *per_chunk* samples and *chunk_bytes* bytes at most
    (at least one sample each): as one varint stream when they are made of varints only
    (:func:`decode_varint_messages`, the usual case), else field by field
    (:func:`decode_fields`, which also names any problem). A sample longer than
    :data:`LONG_SAMPLE` bytes is first checked by :func:`check_sample_counts`."""
    total = np.cumsum(ends - starts)
    for i in np.flatnonzero(ends - starts > LONG_SAMPLE).tolist():
        check_sample_counts(buf, int(starts[i]), int(ends[i]), num_types,
                            f"Profile -> sample -> {i}")
    first = 0
    while first < starts.size:
        before = int(total[first - 1]) if first else 0
        stop = int(np.searchsorted(total, before + chunk_bytes, side="right"))
        stop = min(max(stop, first + 1), first + per_chunk)
        s, e = starts[first:stop], ends[first:stop]
        lengths = e - s
        data = np.frombuffer(gather_ranges(buf, s, lengths), np.uint8)
        offsets = np.zeros(s.size + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        chunk = _chunk_from_varints(first, data, offsets)
        yield chunk if chunk is not None else _chunk_from_fields(first, buf, s, e)
        first = stop


def _chunk_from_varints(first: int, data, offsets) -> SampleChunk | None:
    fields = decode_varint_messages(data, offsets)
    if fields is None:
        return None
    n = offsets.size - 1
    v = fields.values
    out = []
    for number in (LOCATION_IDS, VALUES):
        rows = np.flatnonzero(fields.number == number)
        counts = fields.stop[rows] - fields.first[rows]
        csr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(fields.message[rows], weights=counts, minlength=n).astype(
            np.int64), out=csr[1:])
        out += [csr, v[decode_ragged_ranges(fields.first[rows], counts)]]
    labels = np.flatnonzero(fields.number == LABELS)
    if (fields.wire_type[labels] != LEN).any():
        return None
    size = fields.stop[labels] - fields.first[labels]
    if (size % 2).any():
        return None
    at = decode_ragged_ranges(fields.first[labels], size)
    label_of = np.repeat(np.arange(labels.size), size)
    keys, values, owner = v[at[0::2]], v[at[1::2]], label_of[0::2]
    if (keys & np.uint64(7)).any():  # a label field that is not a VARINT
        return None
    number = (keys >> np.uint64(3)).astype(np.int64)
    columns = {}
    for f in spec.LABEL.fields:
        column = np.zeros(labels.size, np.uint64)
        sel = number == f.number
        column[owner[sel]] = values[sel]
        columns[f.name] = column.view(np.int64)
    return SampleChunk(first, out[0], out[1], out[2], out[3].view(np.int64),
                       fields.message[labels], columns)


def _chunk_from_fields(first: int, buf, s, e) -> SampleChunk:
    n = s.size
    path = "Profile -> sample -> {} -> "
    try:
        ft = decode_fields(buf, s, e)
    except WireError as exc:
        raise fail(exc.text, f"Profile -> sample -> {first + (exc.message or 0)}",
                   exc.offset) from None
    loc_offsets, loc_ids = repeated_uint64(
        buf, ft.select(ft.number == LOCATION_IDS), n, path + "location_id", first)
    value_offsets, values = repeated_uint64(
        buf, ft.select(ft.number == VALUES), n, path + "value", first)
    label_rows = ft.select(ft.number == LABELS)
    expect_wire(label_rows, LEN, path + "label", first)
    labels = decode_table(buf, label_rows.start, label_rows.end, spec.LABEL,
                          "Profile -> sample -> label")
    return SampleChunk(first, loc_offsets, loc_ids, value_offsets, values.view(np.int64),
                       label_rows.message, labels)


def check_sample_counts(buf, start: int, end: int, num_types: int | None, path: str) -> None:
    """Raise :class:`FormatError` if the sample ``buf[start:end]`` lists more than
    :data:`MAX_STACK_DEPTH` location ids, or more values than *num_types* (None: no check),
    counting them (a packed run's varints are its bytes below 0x80) before anything of the
    sample is decoded: one sample of 10**7 ids is a 10 MB message whose decoding would take
    half a gigabyte. The sample's fields are walked by runs of LEN fields
    (:func:`find_len_run`); a wire error stops the count, for the decoder to name."""
    limits = {LOCATION_IDS: MAX_STACK_DEPTH, VALUES: num_types}
    counts = dict.fromkeys(limits, 0)

    def add(number: int, count: int) -> None:
        if number in limits:
            counts[number] += count
            if count == 1:  # (fields one at a time, a Python step each: stop at the limit)
                check(more_than=number)

    def check(more_than: int = 0) -> None:
        """The counts so far against the limits, in the wording of the other readers (that
        of field *more_than* only that it is beyond its limit: its count stopped there)."""
        ids, values = counts[LOCATION_IDS], counts[VALUES]
        if ids > MAX_STACK_DEPTH:
            raise fail(too_deep(f"more than {MAX_STACK_DEPTH}" if more_than == LOCATION_IDS
                                else ids), f"{path} -> location_id")
        if num_types is not None and values > num_types:
            values_said = f"more than {num_types}" if more_than == VALUES else values
            raise fail(f"{values_said} values for {num_types} sample types (pprof: 'mismatch: "
                       "sample has N values vs. M types')", f"{path} -> value")

    view = buf[:end]  # (a run search must not look past the sample)
    pos, window = start, FIRST_WINDOW
    keys = tuple(key_of(spec.SAMPLE, f.name) for f in spec.SAMPLE.fields)
    while pos < end:
        found, s, e, nxt = find_len_run(view, pos, keys, window)
        if s.size:
            for key, a, b in zip(found.tolist(), s.tolist(), e.tolist(), strict=True):
                if key >> 3 in limits:
                    add(key >> 3, sum(int(np.count_nonzero(buf[at:min(at + COUNT_STEP, b)]
                                                           < 0x80))
                                      for at in range(a, b, COUNT_STEP)))
            window = min(window * 4, MAX_WINDOW) if nxt >= pos + window // 2 else FIRST_WINDOW
            pos = nxt
            continue
        try:  # one field that is not in a run: an unpacked id or value, or anything else
            key, at = scan_uleb128(view, pos, end)
            wire = key & 7
            if wire == VARINT:
                _, pos = scan_uleb128(view, at, end)
                add(key >> 3, 1)
            elif wire == LEN:
                size, at = scan_uleb128(view, at, end)
                pos = at + size
            elif wire in (I64, I32):
                pos = at + (8 if wire == I64 else 4)
            else:
                return check()
        except LEB128Error:
            return check()
    check()
