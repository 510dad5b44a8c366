"""The protobuf wire format of pprof files, one field as construct declares it: the pprof
reference page shows it, and the tests decode with it as the scalar oracle of the vectorised
decoder (``kernels.protowire``). Kept apart from :mod:`.pprof` (whose messages are plain data)
so that reading and writing pprof loads no construct.
"""

from __future__ import annotations

import construct as cs
from construct import this

from .leb128 import I32, I64, LEN, VARINT
from .primitives import ULEB128

FIELD = "One protobuf field: a key (field_number << 3 | wire_type), then its value" * cs.Struct(
    "key" / ULEB128 * "field_number << 3 | wire_type",
    "number" / cs.Computed(this.key >> 3) * "Field number (1 and above)",
    "wire_type" / cs.Computed(this.key & 7) * "How the value is stored",
    "value" / cs.Switch(this.wire_type, {
        VARINT: ULEB128,
        I64: cs.Bytes(8),
        LEN: cs.Prefixed(ULEB128, cs.GreedyBytes),
        I32: cs.Bytes(4),
    }, default=cs.Error) * "VARINT (0): a ULEB128; I64 (1): 8 bytes; LEN (2): a ULEB128 byte "
                           "count and the bytes (message, string or packed run); I32 (5): 4 "
                           "bytes; groups (3, 4) are not used by profile.proto",
)
MESSAGE = "A message: fields back to back, in any order, until its end" * cs.GreedyRange(FIELD)
