"""The record layout every decoder of the sample region uses, derived once from the
declarations in :mod:`tachyon_format.schema.tachyon` (docs/format/sample-region.md).

The decoders (:mod:`.walk`, :mod:`.scan`, :mod:`.discover`, the validation walk) read records
where these constants say the fields lie, so that a change of layout is one edit of the
declaration: the checks below refuse, at import, a declaration the decoders cannot read
(a new field type, a body that is not ``delta_us, status, counts..., frames``).

* the prefix: where ``thread_id``, ``interpreter_id`` and ``encoding`` lie, and its size;
* the encodings (record types);
* the bodies: a REPEAT is ``count`` then ``count`` entries of ``(delta_us, status)``; every
  other body is ``delta_us, status``, then its counts (:data:`COUNTS`: FULL ``depth``; SUFFIX
  ``shared, new``; POP_PUSH ``pop, push``), then as many frame indices as its last count.
"""

from __future__ import annotations

import construct as cs

from tachyon_format.schema import primitives
from tachyon_format.schema import tachyon as spec

__all__ = [
    "COUNTS", "ENCODING_AT", "FULL", "INTERPRETER_ID_AT", "INTERPRETER_ID_SIZE",
    "MAX_ENCODING", "MAX_STACK_DEPTH", "MIN_REPEAT_ENTRY_SIZE", "POP_PUSH", "PREFIX_SIZE",
    "REPEAT", "SUFFIX", "THREAD_ID_AT", "THREAD_ID_SIZE",
]

REPEAT, FULL, SUFFIX, POP_PUSH = (int(e) for e in spec.Encoding)
MAX_ENCODING = max(int(e) for e in spec.Encoding)
MAX_STACK_DEPTH = spec.MAX_STACK_DEPTH


def _field(struct: cs.Construct, name: str) -> cs.Construct:
    """The type of field *name* of a declared struct (its name and doc wrappers peeled)."""
    while not hasattr(struct, "subcons"):
        struct = struct.subcon
    for field in struct.subcons:
        if field.name == name:
            while isinstance(field, cs.Renamed):
                field = field.subcon
            return field
    raise LookupError(name)


def _names(struct: cs.Construct) -> list[str]:
    while not hasattr(struct, "subcons"):
        struct = struct.subcon
    return [field.name for field in struct.subcons]


def _is_uleb128(sc: cs.Construct, max_value: int) -> bool:
    return isinstance(sc, primitives.UnsignedLEB128) and sc.max_value == max_value


def _stack_counts(body: cs.Construct) -> tuple[str, ...]:
    """The counts of a stack-change body, checked to be ``delta_us, status, counts...,
    frames`` with the frames counted by the last count."""
    names = _names(body)
    counts = tuple(names[2:-1])
    frames = _field(body, names[-1])
    ok = (names[:2] == ["delta_us", "status"]
          and _is_uleb128(_field(body, "delta_us"), primitives.U64_MAX)
          and _field(body, "status").sizeof() == 1 and len(counts) in (1, 2)
          and all(_is_uleb128(_field(body, c), primitives.U32_MAX) for c in counts)
          and isinstance(frames, cs.Array) and _is_uleb128(frames.subcon, primitives.U32_MAX)
          and repr(frames.count) == repr(getattr(cs.this, counts[-1])))
    if not ok:
        raise AssertionError(f"the decoders cannot read this record body: {names}")
    return counts


_PREFIX = spec.record_prefix("<")
_AT = primitives.fixed_offsets(_PREFIX)
PREFIX_SIZE = _PREFIX.sizeof()
THREAD_ID_AT, INTERPRETER_ID_AT, ENCODING_AT = (
    _AT["thread_id"], _AT["interpreter_id"], _AT["encoding"])
THREAD_ID_SIZE = _field(_PREFIX, "thread_id").sizeof()
INTERPRETER_ID_SIZE = _field(_PREFIX, "interpreter_id").sizeof()

COUNTS = {int(spec.Encoding[name]): _stack_counts(body)
          for name, body in spec.BODIES.items() if name != spec.Encoding.REPEAT.name}
"""Per stack-change encoding: the names of its counts, in order (the last one counts its
frames)."""

MIN_REPEAT_ENTRY_SIZE = spec.MIN_REPEAT_ENTRY_SIZE
if not (_names(spec.REPEAT) == ["count", "samples"]
        and _is_uleb128(_field(spec.REPEAT, "count"), primitives.U32_MAX)
        and _names(spec.REPEAT_ENTRY) == ["delta_us", "status"]
        and _is_uleb128(_field(spec.REPEAT_ENTRY, "delta_us"), primitives.U64_MAX)
        and _field(spec.REPEAT_ENTRY, "status").sizeof() == 1
        and (THREAD_ID_SIZE, INTERPRETER_ID_SIZE) == (8, 4)
        and ENCODING_AT == PREFIX_SIZE - 1 and MIN_REPEAT_ENTRY_SIZE == 2):
    raise AssertionError("the decoders cannot read this record layout")
