"""Messages made of varints only, decoded as one varint stream (tier c).

Many protobuf messages hold nothing but varints: their keys, VARINT values, the lengths of
LEN fields, and LEN payloads that are packed varints or messages of varints again (pprof's
``Sample`` with its labels). The bytes of such messages, back to back, are one run of
ULEB128s, so one pass over the terminators decodes every varint of every message at once; the
fields are then walked in *varint* positions (a LEN payload's end is found by counting
terminators), one vectorised round per field of the longest message, with no per-byte work
left.

:func:`decode_varint_messages` returns None when the bytes are not of that shape (a fixed-width
field, a payload that ends inside a varint, a bad key...): the caller then uses the general
:func:`~tachyon_format.kernels.protowire.decode_fields`, which names the problem.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import LEN, ULEB128_MAX_BYTES, VARINT

from .protowire import FEW_MESSAGES
from .varint import decode_uleb128_at

LONG_TAIL = 4096
"""Varints left in fewer than ``FEW_MESSAGES`` messages above which this gives up (None):
a round here costs tens of microseconds whatever its width, so a sample with millions of
labels would take minutes; :func:`~.protowire.decode_fields` reads such a tail in Python."""


@dataclass(frozen=True)
class VarintFields:
    """Fields of the messages, grouped by message, in stored order: ``message``, ``number``,
    ``wire_type`` (0 or 2); a VARINT's value is ``values[first]``; a LEN payload is the
    varints ``values[first:stop]``."""

    values: npt.NDArray[np.uint64]
    message: npt.NDArray[np.int64]
    number: npt.NDArray[np.int64]
    wire_type: npt.NDArray[np.uint8]
    first: npt.NDArray[np.int64]
    stop: npt.NDArray[np.int64]

    def where(self, number: int, wire_type: int) -> npt.NDArray[np.intp]:
        return np.flatnonzero((self.number == number) & (self.wire_type == wire_type))


def decode_varint_stream(data: npt.NDArray[np.uint8]):
    """Every ULEB128 of *data* (which must end on a varint's last byte): values, the byte
    position of each one's last byte, and per byte the number of varints ended before it.
    None if a varint is longer than 10 bytes."""
    is_end = data < 0x80
    ends = np.flatnonzero(is_end)
    lengths = np.diff(ends, prepend=-1)
    if lengths.size and lengths.max() > ULEB128_MAX_BYTES:
        return None
    values = decode_uleb128_at(data, ends, lengths)
    ended_before = np.zeros(data.size + 1, np.int32 if data.size < 2**31 else np.int64)
    np.cumsum(is_end, out=ended_before[1:])
    return values, ends, ended_before


def decode_varint_messages(data: npt.NDArray[np.uint8],
                           offsets: npt.NDArray[np.int64]) -> VarintFields | None:
    """The fields of the messages ``data[offsets[i]:offsets[i + 1]]`` (see the module doc),
    or None if they are not made of varints only."""
    offsets = np.asarray(offsets, np.int64)
    n = offsets.size - 1
    if data.size and data[-1] >= 0x80:
        return None
    nonempty = np.flatnonzero(np.diff(offsets) > 0)
    if nonempty.size and (data[offsets[nonempty + 1] - 1] >= 0x80).any():
        return None
    decoded = decode_varint_stream(data)
    if decoded is None:
        return None
    values, ends, ended_before = decoded
    q = ended_before[offsets[:-1]]  # varint index of each message's first key
    stop = ended_before[offsets[1:]]
    active = np.flatnonzero(q < stop)
    q = q[active]
    parts = []
    rounds = np.zeros(n, np.int64)
    while active.size:
        last = stop[active]
        if active.size < FEW_MESSAGES and int((last - q).sum()) > LONG_TAIL:
            return None  # a few long messages: decode_fields' plain-Python tail is faster
        if (q + 1 >= last).any():  # a key without its value
            return None
        key = values[q]
        wire = (key & np.uint64(7)).astype(np.uint8)
        number = (key >> np.uint64(3)).astype(np.int64)
        if ((wire != VARINT) & (wire != LEN)).any() or (number == 0).any() or (
                key >> np.uint64(32)).any():
            return None
        first = q + 1
        after = q + 2
        is_len = np.flatnonzero(wire == LEN)
        if is_len.size:
            length = values[q[is_len] + 1]
            start = ends[q[is_len] + 1] + 1
            if (length > np.uint64(data.size)).any():
                return None
            end = start + length.astype(np.int64)
            if (end > offsets[active[is_len] + 1]).any():
                return None
            boundary = ended_before[end]
            # the payload must end exactly where a varint ends
            inside = end > start
            if (ends[boundary[inside] - 1] != end[inside] - 1).any():
                return None
            first[is_len] = q[is_len] + 2
            after[is_len] = boundary
        parts.append((active, number, wire, first, after, rounds[active]))
        rounds[active] += 1
        more = after < last
        active, q = active[more], after[more]
    if not parts:
        z = np.zeros(0, np.int64)
        return VarintFields(values, z, z, np.zeros(0, np.uint8), z, z)
    # the k-th field of message m goes to position start[m] + k: no sort needed
    start = np.zeros(n + 1, np.int64)
    np.cumsum(rounds, out=start[1:])
    total = int(start[-1])
    message = np.empty(total, np.int64)
    number = np.empty(total, np.int64)
    wire = np.empty(total, np.uint8)
    first = np.empty(total, np.int64)
    after = np.empty(total, np.int64)
    for msg, num, wt, fst, aft, k in parts:
        at = start[msg] + k
        message[at], number[at], wire[at], first[at], after[at] = msg, num, wt, fst, aft
    stop_of = np.where(wire == VARINT, first + 1, after)
    return VarintFields(values, message, number, wire, first, stop_of)
