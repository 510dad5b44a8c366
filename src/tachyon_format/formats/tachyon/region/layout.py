"""The record layout every decoder of the sample region uses, derived once from the
declarations in :mod:`tachyon_format.schema.tachyon` (docs/format/sample-region.md).

The decoders (:mod:`.walk`, :mod:`.scan`, :mod:`.discover`, the validation walk) read records
where these constants say the fields lie, so that a change of layout is one edit of the
declaration. They come from :mod:`tachyon_format.schema.tachyon_plain`, generated from the
declarations (``tools/specgen.py``), which refuses a declaration the decoders cannot read
(a new field type, a body that is not ``delta_us, status, counts..., frames``); no construct
is loaded to read a file.

* the prefix: where ``thread_id``, ``interpreter_id`` and ``encoding`` lie, and its size;
* the encodings (record types);
* the bodies: a REPEAT is ``count`` then ``count`` entries of ``(delta_us, status)``; every
  other body is ``delta_us, status``, then its counts (:data:`COUNTS`: FULL ``depth``; SUFFIX
  ``shared, new``; POP_PUSH ``pop, push``), then as many frame indices as its last count.
"""

from __future__ import annotations

import struct

from tachyon_format.schema import tachyon_values as values
from tachyon_format.schema.tachyon_plain import RECORD_PREFIX, STACK_COUNTS

__all__ = [
    "COUNTS", "ENCODING_AT", "FULL", "INTERPRETER_ID_AT", "INTERPRETER_ID_SIZE",
    "MAX_ENCODING", "MAX_STACK_DEPTH", "MIN_REPEAT_ENTRY_SIZE", "POP_PUSH", "PREFIX_SIZE",
    "REPEAT", "SUFFIX", "THREAD_ID_AT", "THREAD_ID_SIZE",
]

REPEAT, FULL, SUFFIX, POP_PUSH = (int(e) for e in values.Encoding)
MAX_ENCODING = max(int(e) for e in values.Encoding)
MAX_STACK_DEPTH = values.MAX_STACK_DEPTH

PREFIX_SIZE = RECORD_PREFIX.size
THREAD_ID_AT, INTERPRETER_ID_AT, ENCODING_AT = (
    RECORD_PREFIX.offset(name) for name in ("thread_id", "interpreter_id", "encoding"))
THREAD_ID_SIZE, INTERPRETER_ID_SIZE = (
    struct.calcsize("<" + f.code) for f in RECORD_PREFIX.fields[:2])

COUNTS: dict[int, tuple[str, ...]] = STACK_COUNTS
"""Per stack-change encoding: the names of its counts, in order (the last one counts its
frames)."""

MIN_REPEAT_ENTRY_SIZE = values.MIN_REPEAT_ENTRY_SIZE
# what the decoders take for granted beyond the generated layout (a changed declaration that
# breaks one of these needs the decoders changed too)
if not ([f.name for f in RECORD_PREFIX.fields] == ["thread_id", "interpreter_id", "encoding"]
        and (THREAD_ID_SIZE, INTERPRETER_ID_SIZE) == (8, 4)
        and ENCODING_AT == PREFIX_SIZE - 1 == values.RECORD_PREFIX_SIZE - 1
        and MIN_REPEAT_ENTRY_SIZE == 2
        and set(COUNTS) | {REPEAT} == {int(e) for e in values.Encoding}):
    raise AssertionError("the decoders cannot read this record layout")
