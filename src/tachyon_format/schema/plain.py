"""Fixed layouts read with the standard library's ``struct``, for the readers that must start
fast (``tachyon-format info``, reading a file's header before its sample region): no
construct is loaded.

A :class:`Layout` is the twin of a construct declaration: its fields, their ``struct`` codes
and, for a word of bit fields or flags, where each sits. The layouts themselves are not
written here by hand: ``specdoc.plain`` derives them from the declarations of
:mod:`.tachyon` into the generated module :mod:`.tachyon_plain` (``tools/specgen.py`` writes
it; the test of the generated pages checks that it is current), so that each layout is
declared once.
"""

from __future__ import annotations

import struct
from collections import namedtuple
from typing import Any, Literal, NamedTuple

ByteOrder = Literal["<", ">"]


class Bits(NamedTuple):
    """A field inside a word: its *shift* from the word's bit 0 and its *width*; a *flag* of
    one bit reads as a bool."""

    name: str
    shift: int
    width: int
    flag: bool = False


class Field(NamedTuple):
    """One field: its ``struct`` code(s), and what is inside it (bit fields of a word, or the
    fields of a nested layout), if anything."""

    name: str
    code: str
    bits: tuple[Bits, ...] = ()
    nested: Layout | None = None


class Layout:
    """A fixed layout: :meth:`parse` gives its fields by name (nested ones as their own
    records), :meth:`offset` where a field lies (for error messages that name the field's
    place in the file)."""

    def __init__(self, name: str, fields: tuple[Field, ...]) -> None:
        self.name = name
        self.fields = fields
        self.format = "".join(f.code if f.nested is None else f.nested.format for f in fields)
        self.size = struct.calcsize("<" + self.format)
        self._offsets: dict[str, int] = {}
        at = 0
        for f in fields:
            self._offsets[f.name] = at
            at += struct.calcsize("<" + (f.code if f.nested is None else f.nested.format))
        self._structs = {order: struct.Struct(order + self.format) for order in "<>"}
        self._record = namedtuple(name, [f.name for f in fields])
        self._words = {f.name: namedtuple(f.name, [b.name for b in f.bits])
                       for f in fields if f.bits}

    def parse(self, data, order: ByteOrder, offset: int = 0):
        """The fields at ``data[offset:]`` in byte order *order*."""
        return self.unpacked(iter(self._structs[order].unpack_from(data, offset)))

    def offset(self, name: str) -> int:
        """The byte offset of field *name* in the layout."""
        return self._offsets[name]

    def unpacked(self, values) -> Any:
        """The record of this layout from an iterator over its unpacked ``struct`` values
        (a nested layout takes its own from the same iterator)."""
        out = []
        for f in self.fields:
            if f.nested is not None:
                out.append(f.nested.unpacked(values))
                continue
            value = next(values)
            if f.bits:
                value = self._words[f.name](*(
                    bool(value >> b.shift & 1) if b.flag else value >> b.shift & (1 << b.width) - 1
                    for b in f.bits))
            out.append(value)
        return self._record(*out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and other.fields == self.fields

    def __hash__(self) -> int:
        return hash(self.fields)

    def __repr__(self) -> str:
        return f"Layout({self.name!r}, {self.format!r})"
