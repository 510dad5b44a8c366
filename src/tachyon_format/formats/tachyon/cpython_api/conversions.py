"""How CPython's C code converts the writer's arguments (Argument Clinic, ``PyLong_As*``),
with its exceptions and messages (docs/format/writer.md#argument-conversion), and the frame
keys the writer interns."""

from __future__ import annotations

from typing import Any

from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.leb128 import U64_MAX

from ..encoder import FrameKey

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def index(value: Any) -> int:
    """``__index__`` as C's integer converters call it."""
    if type(value) is int:
        return value
    if isinstance(value, float) or not hasattr(type(value), "__index__"):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    return value.__index__()


def clinic_u64(value: Any) -> int:
    """Argument Clinic's ``unsigned long long`` converter (write_sample's timestamp)."""
    value = index(value)
    if value < 0:
        raise ValueError("Cannot convert negative int")
    if value > U64_MAX:
        raise OverflowError("Python int too large for C unsigned long long")
    return value


def clinic_int(value: Any) -> int:
    """Argument Clinic's ``int`` converter."""
    return signed(value, INT_MIN, INT_MAX, "int")


def as_unsigned_long_long(value: Any) -> int:
    """``PyLong_AsUnsignedLongLong``: ints only (no ``__index__``)."""
    if not isinstance(value, int):
        raise TypeError("an integer is required")
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if value > U64_MAX:
        raise OverflowError("int too big to convert")
    return int(value)


def as_long(value: Any) -> int:
    """``PyLong_AsLong`` (the status)."""
    return signed(value, LONG_MIN, LONG_MAX, "long")


def signed(value: Any, low: int, high: int, c_type: str) -> int:
    """*value* (through ``__index__``) as a signed C integer of range [*low*, *high*], or
    the ``OverflowError`` CPython raises for one out of that range."""
    value = index(value)
    if not low <= value <= high:
        raise OverflowError(f"Python int too large to convert to C {c_type}")
    return value


def frame_key(frame: Any) -> FrameKey:
    """A FrameInfo-like object as the writer's frame key (conversions happen on interning)."""
    location = frame.location
    if location is None:
        return (frame.filename, frame.funcname, None, None, None, None, frame.opcode)
    lineno, end_lineno, column, end_column = location[0], location[1], location[2], location[3]
    return (frame.filename, frame.funcname, lineno, end_lineno, column, end_column, frame.opcode)


class FrameNumbers:
    """Frame-table numbers of FrameInfo objects, remembered per object and per stack.

    A profiler hands the same FrameInfo objects to many samples; converting and hashing
    every field of every frame again costs far more than CPython's C writer spends. Only
    deeply immutable objects are remembered (a tuple of str/int/None, its location a tuple
    of int/None), and each remembered object is kept alive, so its ``id`` cannot be reused:
    the same ids mean the same frame keys and the file is unchanged. Bounded: the memory is
    dropped when it grows past ``limit`` entries.
    """

    def __init__(self, intern, limit: int = 1 << 16) -> None:
        self._intern = intern
        self._frames: dict[int, tuple[Any, int]] = {}
        self._stacks: dict[tuple[int, ...], tuple[list, tuple[int, ...]]] = {}
        self._limit = limit

    def stack(self, frames) -> tuple[int, ...]:
        frames = frames[: spec.MAX_STACK_DEPTH]  # outer frames are never interned
        ids = tuple(map(id, frames))
        hit = self._stacks.get(ids)
        if hit is not None:
            return hit[1]
        known = self._frames
        numbers = []
        all_immutable = True
        for frame in frames:
            remembered = known.get(id(frame))
            if remembered is not None and remembered[0] is frame:
                numbers.append(remembered[1])
                continue
            number = self._intern(frame_key(frame))
            if deeply_immutable(frame):
                self._remember(known, id(frame), (frame, number))
            else:
                all_immutable = False
            numbers.append(number)
        result = tuple(numbers)
        if all_immutable:
            self._remember(self._stacks, ids, (list(frames), result))
        return result

    def _remember(self, memory: dict, key, value) -> None:
        if len(memory) >= self._limit:
            memory.clear()
        memory[key] = value


_ATOMS = (str, int, type(None))


def deeply_immutable(frame: Any) -> bool:
    """A 4-tuple (filename, location, funcname, opcode) of atoms, location a tuple of atoms."""
    if not isinstance(frame, tuple) or len(frame) != 4:
        return False
    filename, location, funcname, opcode = frame
    return (
        type(filename) in _ATOMS
        and type(funcname) in _ATOMS
        and type(opcode) in _ATOMS
        and (location is None
             or (isinstance(location, tuple) and all(type(x) in _ATOMS for x in location)))
    )


