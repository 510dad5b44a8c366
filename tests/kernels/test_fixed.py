"""decode_fixed_at against struct."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.kernels.fixed import decode_fixed_at


@given(st.binary(max_size=40), st.sampled_from(["<", ">"]), st.sampled_from("BHIQ"),
       st.data())
def test_decode_fixed_at_matches_struct(data, order, code, draw):
    width = struct.calcsize(code)
    buf = np.frombuffer(data, np.uint8)
    pos = draw.draw(st.lists(st.integers(0, max(len(data) - width, 0)), max_size=8))
    if len(data) < width:
        pos = []
    dtype = np.dtype(order + {"B": "u1", "H": "u2", "I": "u4", "Q": "u8"}[code])
    got = decode_fixed_at(buf, np.array(pos, np.intp), dtype)
    assert got.dtype.isnative
    assert got.tolist() == [struct.unpack_from(order + code, data, p)[0] for p in pos]
