"""The struct sequences of ``_remote_debugging``: ``FrameInfo``, ``LocationInfo``,
``ThreadInfo`` and ``InterpreterInfo``, with CPython's field names, order and repr."""

from __future__ import annotations

import operator
from typing import ClassVar


class StructSequence(tuple):
    """A tuple with named fields, built like a C struct sequence: ``Cls((a, b, ...))``."""

    _fields: ClassVar[tuple[str, ...]] = ()
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int] = 0

    def __new__(cls, sequence=(), dict=None):  # noqa: A002 - CPython's parameter name
        values = tuple(sequence)
        if len(values) != len(cls._fields):
            raise TypeError(
                f"_remote_debugging.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(values)}-sequence given)"
            )
        return super().__new__(cls, values)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.n_fields = cls.n_sequence_fields = len(cls._fields)
        cls.__match_args__ = cls._fields
        for index, name in enumerate(cls._fields):
            setattr(cls, name, property(operator.itemgetter(index)))

    def __repr__(self) -> str:
        pairs = zip(self._fields, self, strict=True)
        fields = ", ".join(f"{name}={value!r}" for name, value in pairs)
        return f"_remote_debugging.{type(self).__name__}({fields})"

    def __reduce__(self):
        return (type(self), (tuple(self),))

    def _replace(self, **changes):
        return type(self)(tuple(changes.pop(name, value) for name, value in
                                zip(self._fields, self, strict=True)))


class LocationInfo(StructSequence):
    """Source location information: (lineno, end_lineno, col_offset, end_col_offset)"""

    _fields = ("lineno", "end_lineno", "col_offset", "end_col_offset")


class FrameInfo(StructSequence):
    """Information about a frame"""

    _fields = ("filename", "location", "funcname", "opcode")


class ThreadInfo(StructSequence):
    """Information about a thread"""

    _fields = ("thread_id", "status", "frame_info")


class InterpreterInfo(StructSequence):
    """Information about an interpreter"""

    _fields = ("interpreter_id", "threads")


