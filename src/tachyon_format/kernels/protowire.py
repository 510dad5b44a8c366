"""Protocol-buffer wire format for whole arrays of messages: no Python step per message.

A protobuf message is a sequence of fields ``key value``; ``key = number << 3 | wire_type``
and a LEN value is a byte count then the bytes. Reading one message is sequential (each
field's length says where the next begins), so these kernels work on *many messages at
once*: :func:`decode_fields` walks field 1 of every message, then field 2 of every message
that has one, ... (one vectorised round per field position); :func:`find_len_run` finds a
long run of equal-keyed LEN fields (a message's ``repeated`` submessages) by following the
lengths from many candidate starts at once. Generic: nothing here knows a schema.

Errors are :class:`WireError` with the byte offset, for the caller to name the field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import (
    I32,
    I64,
    LEN,
    ULEB128_MAX_BYTES,
    VARINT,
    LEB128Error,
    scan_uleb128,
)

from .segments import decode_ragged_ranges
from .varint import decode_uleb128_at, decode_uleb128_from, encode_varints_at, varint_sizes

PEEL_ROUNDS = 8
FEW_MESSAGES = 32
"""Below this many messages with fields left, :func:`decode_fields` reads the rest of them in
plain Python (:func:`_scan_few`): a vectorised round costs tens of microseconds whatever
its width, and one message of millions of fields (a location with millions of lines, a
sample with millions of labels) would pay that per field."""


class WireError(ValueError):
    """Input that breaks the protobuf wire format; ``offset`` is the byte where it shows,
    ``message`` the index of the message (of those decoded) it is in."""

    def __init__(self, text: str, offset: int, message: int | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.offset = offset
        self.message = message


class TooManyFields(WireError):
    """More fields than the caller allows: in all messages (``message`` None) or in message
    ``message`` alone; raised before they are all held."""


@dataclass(frozen=True)
class FieldTable:
    """The fields of many messages, grouped by message and in stored order within one:
    field ``i`` belongs to message ``message[i]``, has ``number`` and ``wire_type``; a VARINT
    field's value is ``value`` (I64/I32: the little-endian bits); every field's value bytes
    are ``start:end`` (for LEN: the payload, without its length)."""

    message: npt.NDArray[np.int64]
    number: npt.NDArray[np.int64]
    wire_type: npt.NDArray[np.uint8]
    value: npt.NDArray[np.uint64]
    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.message.size)

    def select(self, mask: npt.NDArray[np.bool_]) -> FieldTable:
        return FieldTable(self.message[mask], self.number[mask], self.wire_type[mask],
                          self.value[mask], self.start[mask], self.end[mask])


def decode_fields(
    buf: npt.NDArray[np.uint8], starts: npt.ArrayLike, ends: npt.ArrayLike, *,
    max_fields: int | None = None, max_per_message: int | None = None
) -> FieldTable:
    """Vectorised: every field of the messages ``buf[starts[i]:ends[i]]``.

    One round per field position (round k reads the k-th field of each message that has
    one), so the cost is the number of fields plus one round per field of the longest
    message. Raises :class:`WireError` on a bad key, wire type, varint or length, and
    :class:`TooManyFields` once it has seen more than *max_fields* fields in all, or more
    than *max_per_message* in one message (None: no limit), before holding them all."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    limits = _Limits(max_fields, max_per_message)
    parts: list[tuple[np.ndarray, ...]] = []
    active = np.flatnonzero(ends > starts)
    pos = starts[active]
    rounds = np.zeros(starts.size, np.int64)
    while active.size:
        if active.size < FEW_MESSAGES:
            parts.append(_scan_few(buf, active, pos, ends, rounds, limits))
            break
        limit = ends[active]
        key, klen, ok = decode_uleb128_from(buf, pos, limit)
        _check(ok, pos, active, "truncated or overlong field key")
        number = (key >> np.uint64(3)).astype(np.int64)
        wire = (key & np.uint64(7)).astype(np.uint8)
        bad = (number == 0) | (key >> np.uint64(32) != 0) | ~np.isin(wire, (VARINT, I64, LEN,
                                                                             I32))
        _check(~bad, pos, active, "invalid field key (number 0, too large, or a group or "
                                  "unknown wire type)")
        start = pos + klen
        end = start.copy()
        value = np.zeros(active.size, np.uint64)
        for wt, width in ((I64, 8), (I32, 4)):
            sel = np.flatnonzero(wire == wt)
            end[sel] = start[sel] + width
        sel = np.flatnonzero((wire == VARINT) | (wire == LEN))
        if sel.size:
            v, vlen, vok = decode_uleb128_from(buf, start[sel], limit[sel])
            _check(vok, start[sel], active[sel], "truncated or overlong varint")
            value[sel] = v
            end[sel] = start[sel] + vlen
            is_len = wire[sel] == LEN
            lens = sel[is_len]
            too_long = v[is_len] > np.uint64(1 << 62)
            start[lens] = end[lens]
            end[lens] = start[lens] + np.where(too_long, 1 << 62, v[is_len]).astype(np.int64)
        _check(end <= limit, start, active, "field runs past the end of its message")
        fixed = np.flatnonzero((wire == I64) | (wire == I32))
        if fixed.size:
            value[fixed] = _little_endian(buf, start[fixed], wire[fixed] == I64)
        parts.append((active, number, wire, value, start, end, rounds[active]))
        rounds[active] += 1
        limits.count(active.size, rounds[active[0]], int(active[0]), int(start[0]))
        more = end < limit
        active, pos = active[more], end[more]
    if not parts:
        z = np.zeros(0, np.int64)
        return FieldTable(z, z, np.zeros(0, np.uint8), np.zeros(0, np.uint64), z, z)
    # field k of message m goes to offset[m] + k: grouped by message without a sort
    offset = np.zeros(starts.size + 1, np.int64)
    np.cumsum(rounds, out=offset[1:])
    total = int(offset[-1])
    columns = [np.empty(total, dtype) for dtype in (np.int64, np.int64, np.uint8, np.uint64,
                                                    np.int64, np.int64)]
    for *values, k in parts:
        at = offset[values[0]] + k
        for column, value in zip(columns, values, strict=True):
            column[at] = value
    return FieldTable(*columns)


@dataclass
class _Limits:
    """The fields :func:`decode_fields` may find, in all and per message (None: any)."""

    total: int | None
    per_message: int | None
    seen: int = 0

    def count(self, new: int, rounds: int, message: int, offset: int) -> None:
        """*new* more fields found; *rounds*, the fields so far of the messages still being
        read (all have as many; *message* is one of them, at *offset*)."""
        self.seen += new
        if self.total is not None and self.seen > self.total:
            raise TooManyFields(f"more than {self.total} fields", offset)
        if self.per_message is not None and rounds > self.per_message:
            raise TooManyFields(f"more than {self.per_message} fields in one message", offset,
                                message)


def _scan_few(buf: npt.NDArray[np.uint8], active: npt.NDArray[np.int64],
              pos: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
              rounds: npt.NDArray[np.int64], limits: _Limits) -> tuple[np.ndarray, ...]:
    """The remaining fields of the few messages *active* (next field at *pos*), round by
    round as the vectorised loop reads them, so that the error raised is the same one (in a
    round: keys, key checks, varints, ends; the first message failing). Adds to *rounds*;
    returns one part for :func:`decode_fields` to place."""
    view = memoryview(buf)
    out: list[tuple[int, ...]] = []
    todo = [(m, p, int(ends[m]), int(rounds[m])) for m, p in zip(active.tolist(),
                                                                    pos.tolist(), strict=True)]
    while todo:
        errors: list[tuple[int, int, int, str]] = []  # (check, order, offset, text)
        fields = []
        for order, (m, p, limit, k) in enumerate(todo):
            key, q = _varint(view, p, limit)
            wire = -1 if key is None else key & 7
            if key is None or key >> 3 == 0 or key >> 32 or wire not in (VARINT, I64, LEN, I32):
                errors.append((0, order, p, "truncated or overlong field key") if key is None
                              else (1, order, p, "invalid field key (number 0, too large, or "
                                                 "a group or unknown wire type)"))
                continue
            start, value = q, 0
            if wire in (VARINT, LEN):
                value, end = _varint(view, start, limit)
                if value is None:
                    errors.append((2, order, start, "truncated or overlong varint"))
                    continue
                if wire == LEN:
                    start, end = end, end + min(value, 1 << 62)
            else:
                end = start + (8 if wire == I64 else 4)
            if end > limit:
                errors.append((3, order, start, "field runs past the end of its message"))
                continue
            if wire in (I64, I32):
                value = int.from_bytes(view[start:end], "little")
            fields.append((m, key >> 3, wire, value, start, end, k, limit))
        if errors:
            _, order, offset, text = min(errors)
            raise WireError(text, offset, todo[order][0])
        out += [f[:7] for f in fields]
        if fields:
            limits.count(len(fields), fields[0][6] + 1, fields[0][0], fields[0][4])
        todo = [(f[0], f[5], f[7], f[6] + 1) for f in fields if f[5] < f[7]]
    for f in out:
        rounds[f[0]] = f[6] + 1  # (in order: the last field of a message counts last)
    columns = list(zip(*out, strict=True)) if out else [()] * 7
    return tuple(np.array(c, t) for c, t in zip(columns, (np.int64, np.int64, np.uint8,
                                                         np.uint64, np.int64, np.int64,
                                                         np.int64), strict=True))


def _varint(view: memoryview, at: int, limit: int) -> tuple[int | None, int]:
    """The ULEB128 at *at* and the offset after it; ``(None, at)`` if it reaches *limit* or
    runs past 10 bytes (as :func:`decode_uleb128_from`: the value mod 2**64)."""
    try:
        return scan_uleb128(view, at, min(limit, len(view)))
    except LEB128Error:
        return None, at


def _little_endian(buf, starts, is64) -> npt.NDArray[np.uint64]:
    out = np.zeros(starts.size, np.uint64)
    for k in range(8):
        sel = np.flatnonzero(is64 | (k < 4))
        out[sel] |= buf[starts[sel] + k].astype(np.uint64) << np.uint64(8 * k)
    return out


def _check(ok, offsets, messages, text: str) -> None:
    if not ok.all():
        first = int(np.flatnonzero(~ok)[0])
        raise WireError(text, int(offsets[first]), int(messages[first]))


def decode_packed_ranges(
    buf: npt.NDArray[np.uint8], starts: npt.ArrayLike, ends: npt.ArrayLike
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Vectorised: the ULEB128s packed in each range ``buf[starts[i]:ends[i]]``, in CSR form
    ``(offsets, values)`` (range ``i`` holds ``values[offsets[i]:offsets[i + 1]]``).
    Raises :class:`WireError` if a range ends inside a varint or one is too long."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    lengths = ends - starts
    index = decode_ragged_ranges(starts, lengths)
    data = buf[index]
    is_end = data < 0x80
    last = np.cumsum(lengths) - 1
    nonempty = np.flatnonzero(lengths > 0)
    bad = ~is_end[last[nonempty]]
    if bad.any():
        i = int(nonempty[np.flatnonzero(bad)[0]])
        raise WireError("packed run ends inside a varint", int(ends[i] - 1), i)
    ends_at = np.flatnonzero(is_end)
    lens = np.diff(ends_at, prepend=-1)
    # a varint never spans two ranges: every range ends on a terminator
    if lens.size and lens.max() > ULEB128_MAX_BYTES:
        i = int(np.flatnonzero(lens > ULEB128_MAX_BYTES)[0])
        raise WireError("varint longer than 10 bytes in a packed run", int(index[ends_at[i]]))
    values = decode_uleb128_at(data, ends_at, lens)
    counts = np.zeros(lengths.size + 1, np.int64)
    if data.size:
        ends_per = np.cumsum(is_end)
        counts[1:] = np.where(lengths > 0, ends_per[np.maximum(last, 0)], 0)
    # ranges are consecutive in `data`, so the running count at each range's end is its offset
    offsets = np.maximum.accumulate(counts)
    return offsets, values


def find_len_run(
    buf: npt.NDArray[np.uint8], start: int, keys: tuple[int, ...], window: int = 1 << 23
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    """Vectorised: the run of LEN fields with one-byte keys among *keys* from *start*.

    Returns ``(keys, payload_starts, payload_ends, next)``: the fields found and the offset
    after the last (where a field with another key, or the end, follows). Looks at most
    *window* bytes; the caller calls again from ``next`` if the run goes on. (Writers may
    interleave repeated fields: Go's runtime emits each new Location between the samples.)

    Every byte in *keys* is a candidate start; each candidate's length gives its
    successor. The run is the chain of successors from *start*. Candidates inside a field's
    payload are never on it, and most are pointed to by no other candidate: a few rounds of
    dropping candidates that nothing alive points to leave (nearly) the chain. That guess is
    then checked link by link and repaired by following the successor pointers where a
    stray candidate broke it, so the result is exactly the sequential walk's."""
    stop = min(buf.size, start + window)
    empty = (np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64), start)
    is_key = np.zeros(256, bool)
    is_key[list(keys)] = True
    cand = np.flatnonzero(is_key[buf[start:stop]]).astype(np.int64) + start
    if not cand.size or cand[0] != start:
        return empty
    lengths, llen, ok = decode_uleb128_from(buf, cand + 1, np.full(cand.size, buf.size))
    ok &= lengths <= np.uint64(buf.size)
    nxt_pos = cand + 1 + llen + np.where(ok, lengths, 0).astype(np.int64)
    ok &= nxt_pos <= buf.size
    nxt_pos[~ok] = -1
    # index of the successor among the candidates, -1 if it is none of them
    at = np.searchsorted(cand, nxt_pos)
    at_c = np.minimum(at, cand.size - 1)
    nxt = np.where((nxt_pos >= 0) & (cand[at_c] == nxt_pos), at_c, -1)
    # first guess: the candidates reachable from the start. Stray candidates (inside some
    # field's payload) mostly have no predecessor; peel those off, a few rounds
    alive = ok.copy()
    for _ in range(PEEL_ROUNDS):
        pointed = np.zeros(cand.size, bool)
        src = np.flatnonzero(alive & (nxt >= 0))
        pointed[nxt[src]] = True
        pointed[0] = True
        peeled = alive & pointed
        if np.array_equal(peeled, alive):
            break
        alive = peeled
    guess = np.flatnonzero(alive)
    in_guess = np.full(cand.size, -1, np.int64)
    in_guess[guess] = np.arange(guess.size)
    linked = nxt[guess[:-1]] == guess[1:]
    bad = np.flatnonzero(~linked)  # positions in `guess` whose link breaks
    pieces: list[np.ndarray] = []
    i = 0
    if not ok[0]:
        return empty
    while i >= 0:
        g = in_guess[i]
        if g >= 0:  # follow the checked stretch of the guess up to its next break
            b = np.searchsorted(bad, g)
            last = int(bad[b]) if b < bad.size else guess.size - 1
            pieces.append(guess[g:last + 1])
            i = int(guess[last])
        else:
            pieces.append(np.array([i]))
        j = int(nxt[i])
        if j < 0 or not ok[j]:
            break
        i = j
    run = np.concatenate(pieces)
    payload_ends = nxt_pos[run]
    payload_starts = cand[run] + 1 + llen[run]
    return buf[cand[run]], payload_starts, payload_ends, int(payload_ends[-1])


# --- encoding -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One field of many messages to encode: a VARINT field (``values``; left out where 0
    unless ``keep_zero``), or a LEN field whose payload for message ``i`` is
    ``payload[starts[i]:starts[i] + lengths[i]]`` (left out where empty unless
    ``keep_zero``), or with ``raw`` those bytes as they are (fields encoded already, e.g. the
    occurrences of a repeated field). A message holds at most one occurrence of a part.

    A LEN part may give ``fill`` instead of ``payload`` and ``starts``: ``fill(out, at,
    here)`` writes the payloads of the messages ``here`` (indices) at ``out[at[k]:]``
    itself, saving a copy. It may write up to ``spill`` bytes past a payload's end: a later
    part of the same message must always be present, with that many bytes at least, to
    overwrite them."""

    key: int
    values: npt.NDArray[np.uint64] | None = None
    payload: npt.NDArray[np.uint8] | None = None
    starts: npt.NDArray[np.int64] | None = None
    lengths: npt.NDArray[np.int64] | None = None
    keep_zero: bool = False
    raw: bool = False
    fill: Callable[[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.intp]],
                   None] | None = None
    spill: int = 0

    @classmethod
    def of(cls, key: int, payload: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64],
           **options) -> Part:
        """A LEN (or raw) part from consecutive payloads (CSR *offsets*)."""
        offsets = np.asarray(offsets, np.int64)
        return cls(key, payload=payload, starts=offsets[:-1], lengths=np.diff(offsets),
                   **options)


def encode_messages(n: int, parts: list[Part], field_key: int | None = None
                    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Vectorised: *n* messages made of *parts* (fields in the order given), back to back;
    returns ``(bytes, offsets)`` with message ``i`` at ``offsets[i]:offsets[i + 1]``. With
    *field_key*, each message is written as a LEN field of that one-byte key (the key and
    the length come first), as a repeated submessage field of the enclosing message."""
    sizes = []
    for part in parts:
        if part.values is not None:
            v = np.asarray(part.values, np.uint64)
            size = 1 + varint_sizes(v)
            present = np.ones(n, bool) if part.keep_zero else v != 0
        elif part.raw:
            size = np.asarray(part.lengths, np.int64)
            present = size > 0
        else:
            length = np.asarray(part.lengths, np.int64)
            size = 1 + varint_sizes(length.astype(np.uint64)) + length
            present = np.ones(n, bool) if part.keep_zero else length > 0
        sizes.append(np.where(present, size, 0))
    per_message = np.sum(sizes, axis=0, dtype=np.int64) if sizes else np.zeros(n, np.int64)
    head = 0
    if field_key is not None:
        body = per_message
        head = 1 + varint_sizes(body.astype(np.uint64))
        per_message = body + head
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(per_message, out=offsets[1:])
    spill = max((part.spill for part in parts), default=0)
    out = np.empty(int(offsets[-1]) + spill, np.uint8)
    at = offsets[:-1].copy()
    if field_key is not None:
        out[at] = field_key
        encode_varints_at(out, at + 1, body.astype(np.uint64), head - 1)
        at += head
    for part, size in zip(parts, sizes, strict=True):
        here = np.flatnonzero(size)
        pos = at[here]
        if part.values is not None:
            out[pos] = part.key
            v = np.asarray(part.values, np.uint64)[here]
            encode_varints_at(out, pos + 1, v, size[here] - 1)
        else:
            length = np.asarray(part.lengths, np.int64)[here]
            if not part.raw:
                out[pos] = part.key
                lsize = varint_sizes(length.astype(np.uint64))
                encode_varints_at(out, pos + 1, length.astype(np.uint64), lsize)
                pos = pos + 1 + lsize
            if part.fill is not None:
                part.fill(out, pos, here)
            else:
                src = decode_ragged_ranges(np.asarray(part.starts, np.int64)[here], length)
                out[decode_ragged_ranges(pos, length)] = part.payload[src]
        at += size
    return out[:out.size - spill] if spill else out, offsets


def encode_packed(values: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]
                  ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Vectorised: packed runs of ULEB128s, run ``i`` of ``values[offsets[i]:offsets[i+1]]``;
    returns ``(bytes, byte_offsets)``."""
    v = np.asarray(values, np.uint64)
    sizes = varint_sizes(v)
    at = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    encode_varints_at(out, at, v, sizes)
    ends = np.concatenate([[0], np.cumsum(sizes)])
    return out, ends[np.asarray(offsets, np.int64)]


def encode_len_fields(key: int, payload: npt.NDArray[np.uint8],
                      offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """Vectorised: the LEN fields ``key, len(p), p`` of the payloads ``payload[offsets[i]:
    offsets[i + 1]]``, back to back (a repeated submessage or string field)."""
    out, _ = encode_messages(offsets.size - 1, [Part.of(0, payload, offsets, raw=True)],
                             field_key=key)
    return out
