"""Vectorised LEB128 and zigzag: the one copy of the varint codecs for whole arrays.

Tier (c) of STYLE.md 3.5: ``decode_*``/``encode_*`` take and return arrays, with no Python
loop per value. The scalar definitions (documented once) are in
:mod:`tachyon_format.schema.primitives`; the tests hold these kernels to them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.schema.leb128 import ULEB128_MAX_BYTES


def scan_terminators(buf: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.intp], np.ndarray]:
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
    buf: npt.NDArray[np.uint8], ends: np.ndarray, lengths: np.ndarray, which: np.ndarray
) -> npt.NDArray[np.uint64]:
    """Vectorised: values of the varints ending at terminators ``ends[which]``.

    Mod 2**64, as CPython's reader: of a 10th byte only bit 0 counts. Values of varints longer
    than 10 bytes are meaningless (callers reject those by their length).
    """
    pos = ends[which]
    length = lengths[which]
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

    See :func:`scan_terminators` and :func:`decode_uleb128_at`.
    """
    b = np.asarray(buf, dtype=np.uint8)
    ends, lengths = scan_terminators(b)
    return ends, decode_uleb128_at(b, ends, lengths, np.arange(ends.size)), lengths


def decode_uleb128(buf: bytes | memoryview | npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """Vectorised: decode back-to-back ULEB128 values (a packed run), CPython's rules (§0.1).

    Raises ``ValueError`` if the run ends inside a varint or a varint is longer than 10 bytes.
    """
    b = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    if b.size and b[-1] >= 0x80:
        raise ValueError("truncated ULEB128 run")
    _, values, lengths = decode_uleb128_ends(b)
    if lengths.size and lengths.max() > ULEB128_MAX_BYTES:
        raise ValueError("ULEB128 value longer than 10 bytes")
    return values


def encode_uleb128(values: npt.ArrayLike) -> bytes:
    """Vectorised: the canonical (shortest) ULEB128 encoding of unsigned 64-bit values."""
    v = np.asarray(values, dtype=np.uint64).ravel()
    nbytes = np.ones(v.size, dtype=np.intp)
    for k in range(1, ULEB128_MAX_BYTES):
        nbytes += v >= (np.uint64(1) << np.uint64(7 * k))
    out = np.empty(int(nbytes.sum()), dtype=np.uint8)
    starts = np.cumsum(nbytes) - nbytes
    for k in range(ULEB128_MAX_BYTES):
        sel = np.flatnonzero(nbytes > k)
        if not sel.size:
            break
        group = ((v[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        group |= np.where(nbytes[sel] > k + 1, 0x80, 0).astype(np.uint8)
        out[starts[sel] + k] = group
    return out.tobytes()


def decode_zigzag(u: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Vectorised: zigzag to signed, ``0, 1, 2, 3 -> 0, -1, 1, -2`` (64-bit)."""
    u = np.asarray(u, dtype=np.uint64)
    return (u >> np.uint64(1)).astype(np.int64) ^ -(u & np.uint64(1)).astype(np.int64)


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
