"""Vectorised LEB128 and zigzag: the one copy of the varint codecs for whole arrays.

The array tier of the codecs: ``decode_*``/``encode_*`` take and return arrays, with no Python
loop per value. Decoding comes in the two shapes callers have: from each varint's last byte
(its terminator, ``< 0x80``: :func:`decode_uleb128_at`, :func:`decode_uleb128_ending_at`;
runs and streams of varints) or from its first byte (:func:`decode_uleb128_from`; a field
found by position). Encoding: :func:`varint_sizes` and :func:`encode_varints_at` into a
preallocated buffer, :func:`encode_uleb128` over them. The scalar definitions (documented
once) are in :mod:`tachyon_format.schema.leb128` and :mod:`~tachyon_format.schema.primitives`;
the tests hold these kernels to them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import ULEB128_MAX_BYTES


def find_terminators(buf: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.intp], np.ndarray]:
    """Vectorised: positions of the terminator bytes (``< 0x80``) of *buf* and the length of
    the ULEB128 ending at each (distance from the previous terminator, int32).

    A varint is taken to start right after the previous terminator (or at 0), which is exact
    for every varint that follows a byte below 0x80. Lengths above 10 mark malformed varints.
    """
    b = np.asarray(buf, dtype=np.uint8)
    ends = np.nonzero(b < 0x80)[0]
    lengths = np.empty(ends.size, dtype=np.int32)
    if ends.size:
        lengths[0] = ends[0] + 1
        np.subtract(ends[1:], ends[:-1], out=lengths[1:], casting="unsafe")
    return ends, lengths


def decode_uleb128_at(
    buf: npt.NDArray[np.uint8], ends: np.ndarray, lengths: np.ndarray,
    which: np.ndarray | None = None,
) -> npt.NDArray[np.uint64]:
    """Vectorised: values of the varints ending at terminators ``ends[which]`` (every one of
    *ends* if *which* is None), each ``lengths[which]`` bytes long.

    Mod 2**64, as CPython's reader: of a 10th byte only bit 0 counts. Values of varints longer
    than 10 bytes are meaningless (callers reject those by their length).
    """
    pos = ends if which is None else ends[which]
    length = lengths if which is None else lengths[which]
    hi = buf[pos]
    lo = buf[pos - 1] & 0x7F
    lo[length < 2] = 0
    values = (hi.astype(np.uint64) << np.uint64(7)) | lo
    one = np.flatnonzero(length == 1)
    values[one] = hi[one]
    idx = np.flatnonzero(length > 2)
    k = 2
    while idx.size and k < ULEB128_MAX_BYTES:
        values[idx] = (values[idx] << np.uint64(7)) | (buf[pos[idx] - k] & 0x7F)
        k += 1
        idx = idx[length[idx] > k]
    return values


def decode_uleb128_ends(
    buf: npt.NDArray[np.uint8],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.uint64], npt.NDArray[np.int32]]:
    """Vectorised: every terminator of *buf*, the ULEB128 value ending there and its length.

    See :func:`find_terminators` and :func:`decode_uleb128_at`.
    """
    b = np.asarray(buf, dtype=np.uint8)
    ends, lengths = find_terminators(b)
    return ends, decode_uleb128_at(b, ends, lengths), lengths


def decode_uleb128(buf: bytes | memoryview | npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """Vectorised: decode back-to-back ULEB128 values (a packed run), CPython's rules
    (docs/format/primitives.md).

    Raises ``ValueError`` if the run ends inside a varint or a varint is longer than 10 bytes.
    """
    b = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    if b.size and b[-1] >= 0x80:
        raise ValueError("truncated ULEB128 run")
    _, values, lengths = decode_uleb128_ends(b)
    if lengths.size and lengths.max() > ULEB128_MAX_BYTES:
        raise ValueError("ULEB128 value longer than 10 bytes")
    return values


def decode_uleb128_from(
    buf: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], limits: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Vectorised: the ULEB128 starting at each of *starts*, which must end before the
    matching *limits*. Returns ``(values, lengths, ok)``; ``ok`` is false where the varint is
    longer than 10 bytes or reaches its limit (its value and length are then meaningless).
    Values are mod 2**64 (a 10th byte contributes its bit 0), as protobuf decoders read."""
    n = starts.size
    values = np.zeros(n, np.uint64)
    lengths = np.zeros(n, np.int64)
    ok = np.zeros(n, bool)
    active = np.arange(n)
    size = buf.size
    for k in range(ULEB128_MAX_BYTES):
        if not active.size:
            break
        at = starts[active] + k
        inside = at < np.minimum(limits[active], size)
        active, at = active[inside], at[inside]
        byte = buf[at]
        values[active] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        done = byte < 0x80
        finished = active[done]
        lengths[finished] = k + 1
        ok[finished] = True
        active = active[~done]
    return values, lengths, ok


def varint_sizes(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
    """Vectorised: bytes of the canonical ULEB128 of each value (1 to 10); one compare per
    byte that the largest value needs."""
    v = np.asarray(values, np.uint64)
    sizes = np.ones(v.size, np.int64)
    top = int(v.max()) if v.size else 0
    for k in range(1, ULEB128_MAX_BYTES):
        if top < 1 << (7 * k):
            break
        sizes += v >= (np.uint64(1) << np.uint64(7 * k))
    return sizes


def encode_varints_at(out: npt.NDArray[np.uint8], at: npt.NDArray[np.int64],
                      values: npt.NDArray[np.uint64], sizes: npt.NDArray[np.int64]) -> None:
    """Vectorised: write the canonical ULEB128 of ``values[i]`` (``sizes[i]`` bytes, from
    :func:`varint_sizes`) at ``out[at[i]:]``: every first byte in one pass, then only the
    longer values, byte by byte."""
    v = np.asarray(values, np.uint64)
    first = (v & np.uint64(0x7F)).astype(np.uint8)
    first[sizes > 1] |= 0x80
    out[at] = first
    sel = np.flatnonzero(sizes > 1)
    k = 1
    while sel.size:
        more = sizes[sel] > k + 1
        byte = ((v[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte[more] |= 0x80
        out[at[sel] + k] = byte
        sel = sel[more]
        k += 1


def encode_uleb128(values: npt.ArrayLike) -> bytes:
    """Vectorised: the canonical (shortest) ULEB128 encoding of unsigned 64-bit values."""
    v = np.asarray(values, dtype=np.uint64).ravel()
    sizes = varint_sizes(v)
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    encode_varints_at(out, np.cumsum(sizes) - sizes, v, sizes)
    return out.tobytes()


def decode_zigzag(u: npt.ArrayLike) -> npt.NDArray[np.signedinteger]:
    """Vectorised: zigzag to signed, ``0, 1, 2, 3 -> 0, -1, 1, -2``, at the width of *u*
    when it is an unsigned array (uint32 gives int32: Tachyon's svarints), else 64-bit."""
    u = np.asarray(u)
    if u.dtype.kind != "u":
        u = u.astype(np.uint64)
    one = u.dtype.type(1)
    return ((u >> one) ^ -(u & one)).view(u.dtype.str.replace("u", "i"))


def encode_zigzag(v: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Vectorised: signed to zigzag, the inverse of :func:`decode_zigzag`."""
    v = np.asarray(v, dtype=np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def decode_uleb128_ending_at(
    buf: npt.NDArray[np.uint8], pos: npt.NDArray[np.intp], first: np.ndarray | None = None
) -> npt.NDArray[np.uint64]:
    """Vectorised: values of the ULEB128s whose last byte (``< 0x80``) is at *pos*.

    Each varint is taken to start right after the previous byte below 0x80 (or at 0), which
    is exact for every varint that follows a terminator, or at *first* (per varint) where
    given; only the rare multi-byte ones cost more than one gather. Mod 2**64 like CPython's
    reader; callers reject varints longer than 10 bytes beforehand
    (:meth:`TerminatorIndex.long_varint_ends`),
    their values here are meaningless.
    """
    values = np.take(buf, pos).astype(np.uint64)
    before = pos - 1
    # at pos 0 the clipped index reads the terminator itself (< 0x80): one byte
    multi = np.take(buf, before, mode="clip") >= 0x80
    if first is not None:
        multi &= pos > first
    idx = np.flatnonzero(multi)
    del before, multi
    if not idx.size:
        return values
    p = pos[idx] - 1  # the continuation byte before each terminator
    lo = np.zeros(idx.size, np.intp) if first is None else first[idx]
    for _ in range(ULEB128_MAX_BYTES - 1):
        values[idx] = (values[idx] << np.uint64(7)) | (buf[p] & 0x7F)
        more = np.flatnonzero((p > lo) & (np.take(buf, p - 1, mode="clip") >= 0x80))
        if not more.size:
            break
        idx, p, lo = idx[more], p[more] - 1, lo[more]
    return values
