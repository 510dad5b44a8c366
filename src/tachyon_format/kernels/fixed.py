"""Fixed-width integers at arbitrary (unaligned) byte offsets of a byte buffer."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def decode_fixed_at(
    buf: npt.NDArray[np.uint8], pos: npt.NDArray[np.integer], dtype: np.dtype
) -> npt.NDArray:
    """Vectorised: the integers of *dtype* (with its byte order) starting at the byte offsets
    *pos* of *buf*, in native byte order.

    Through an overlapping view of *buf* with a one-byte stride, one entry per byte offset:
    numpy handles the unaligned loads, and no bytes are copied but the ones asked for."""
    dtype = np.dtype(dtype)
    if buf.size < dtype.itemsize:
        return np.zeros(0, dtype.newbyteorder("="))
    at_every_byte = np.ndarray((buf.size - dtype.itemsize + 1,), dtype=dtype, buffer=buf,
                               offset=0, strides=(1,))
    return at_every_byte[pos].astype(dtype.newbyteorder("="))
