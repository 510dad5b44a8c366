"""Load a pstats file safely: its marshal bytes scanned first, then ``marshal.loads``, then
the dict's shape checked (what ``pstats.Stats`` needs of it).

``marshal`` allocates a tuple, list or dict of the length the data declares before it reads
the items, so a few corrupt bytes could ask for gigabytes. :func:`scan_marshal` (tier d, one
sequential pass) walks the encoding first: every declared length must fit in the bytes left
(each item takes at least one), only the types a stats dict can hold are allowed (no code
objects), and nesting is bounded. Errors are :class:`~tachyon_format.errors.FormatError`
with the byte offset, or with the entry's key for a well-encoded but misshapen dict.
"""

from __future__ import annotations

import marshal
from typing import Any

from tachyon_format.errors import FormatError

from ..sources import Source
from ..sources import read_bytes as load_bytes

SAMPLED_MARKER = ("__sampled__",)
MAX_DEPTH = 16
FLAG_REF = 0x80
_FIXED = {ord("N"): 0, ord("F"): 0, ord("T"): 0, ord("i"): 4, ord("g"): 8}
_SIZED4 = {ord(c) for c in "stuaA"}  # bytes/str with a 4-byte length
_SIZED1 = {ord(c) for c in "zZf"}  # short ASCII, float as text: 1-byte length
_CONTAINERS4 = {ord("("), ord("[")}
_DICT, _SMALL_TUPLE, _LONG, _NULL = ord("{"), ord(")"), ord("l"), ord("0")
_REF = ord("r")  # a back-reference: the index of an earlier object flagged FLAG_REF
_UNREFERENCED = {ord("N"), ord("F"), ord("T"), _NULL, _REF}
"""Codes marshal never enters in its reference table, flag or not (singletons, references)."""
_UNTIL_NULL = -1



def _length(data: bytes, pos: int, size: int, field: str) -> int:
    if pos + size > len(data):
        raise FormatError(f"marshal data truncated in the length of a {field}", offset=pos,
                          path=field)
    return int.from_bytes(data[pos:pos + size], "little", signed=size == 4)


def scan_marshal(data: bytes) -> None:
    """Check that *data* is one marshal'd object of the types a stats dict holds, every
    declared length fitting the data and every back-reference naming an object already
    complete; raise :class:`FormatError` at the first problem."""
    pos = 0
    # per open container: [items left (_UNTIL_NULL for a dict), its reference slot or -1]
    remaining = [[1, -1]]
    # marshal's reference table: one slot per object flagged FLAG_REF, in the order marshal
    # fills it (a container's slot is taken before its items are read); True once complete
    complete: list[bool] = []
    while remaining:
        if remaining[-1][0] == 0:
            _, slot = remaining.pop()
            if slot >= 0:
                complete[slot] = True
            continue
        if pos >= len(data):
            raise FormatError("marshal data truncated", offset=pos, path="object")
        code, flagged = data[pos] & ~FLAG_REF, data[pos] & FLAG_REF
        if remaining[-1][0] == _UNTIL_NULL:
            if code == _NULL:
                _, slot = remaining.pop()
                if slot >= 0:
                    complete[slot] = True
                pos += 1
                continue
            remaining.append([2, -1])  # a key, then its value
            if len(remaining) > MAX_DEPTH:
                raise FormatError("marshal data nested too deeply", offset=pos, path="object")
            continue
        remaining[-1][0] -= 1
        start, pos = pos, pos + 1
        slot = -1
        if flagged and code not in _UNREFERENCED:
            slot = len(complete)
            complete.append(code not in _CONTAINERS4 and code not in (_SMALL_TUPLE, _DICT))
        if code == _REF:
            index = _length(data, pos, 4, "reference")
            # marshal hands out the object itself: one still being built (a tuple holding
            # itself) is half-initialised, and hashing or printing it crashes the process
            if not 0 <= index < len(complete) or not complete[index]:
                raise FormatError(f"back-reference {index} to an object that is not complete "
                                  f"({len(complete)} so far)", offset=start, path="reference")
            pos += 4
        elif code in _FIXED:
            pos += _FIXED[code]
        elif code in _SIZED4:
            pos += 4 + _checked(_length(data, pos, 4, "string"), data, pos + 4, start)
        elif code in _SIZED1:
            pos += 1 + _checked(_length(data, pos, 1, "string"), data, pos + 1, start)
        elif code == _LONG:
            digits = abs(_length(data, pos, 4, "long"))
            pos += 4 + 2 * _checked(digits, data, pos + 4, start, width=2)
        elif code in _CONTAINERS4 or code == _SMALL_TUPLE:
            size = 1 if code == _SMALL_TUPLE else 4
            count = _length(data, pos, size, "tuple")
            pos += size
            remaining.append([_checked(count, data, pos, start), slot])
        elif code == _DICT:
            remaining.append([_UNTIL_NULL, slot])
        else:
            raise FormatError(f"marshal type {chr(code)!r} (0x{data[start]:02x}) cannot be in "
                              "a stats dict", offset=start, path="object")
        if pos > len(data):
            raise FormatError("marshal data truncated", offset=start, path="object")
        if len(remaining) > MAX_DEPTH:
            raise FormatError("marshal data nested too deeply", offset=start, path="object")
    if pos != len(data):
        raise FormatError(f"{len(data) - pos} bytes after the marshal'd dict", offset=pos,
                          path="object")


def _checked(count: int, data: bytes, pos: int, start: int, width: int = 1) -> int:
    if count < 0 or count * width > len(data) - pos:
        raise FormatError(f"declared length {count} does not fit in the {len(data) - pos} "
                          "bytes left", offset=start, path="length")
    return count


def load(source: Source) -> dict[Any, Any]:
    """The stats dict of a pstats file, checked (see the module docstring)."""
    data = load_bytes(source)
    if not data:
        raise FormatError("empty file: not a pstats file", offset=0, path="object")
    if data[0] & ~FLAG_REF != _DICT:
        raise FormatError("not a pstats file: a marshal'd dict starts with '{'", offset=0,
                          path="object")
    scan_marshal(data)
    try:
        stats = marshal.loads(data)
    except (ValueError, EOFError, TypeError) as exc:
        raise FormatError(f"bad marshal data: {exc}", offset=0, path="object") from None
    check_stats(stats)
    return stats


def check_stats(stats: Any) -> None:
    """Raise :class:`FormatError` unless *stats* has the shape ``pstats.Stats`` reads."""
    if not isinstance(stats, dict):
        raise FormatError(f"a pstats file holds a dict, not {type(stats).__name__}", path="object")
    for key, value in stats.items():
        if key == SAMPLED_MARKER:
            continue
        where = f"stats[{_shown(key)}]"
        if not _is_function(key):
            raise FormatError("a key is not a function (filename, lineno, funcname)",
                              path=where)
        if not (isinstance(value, tuple) and len(value) == 5):
            raise FormatError("an entry is not (cc, nc, tt, ct, callers)", path=where)
        *numbers, callers = value
        if not all(_is_number(x) for x in numbers):
            raise FormatError("cc, nc, tt, ct are not numbers", path=where)
        if not isinstance(callers, dict):
            raise FormatError("callers is not a dict", path=where)
        for caller, count in callers.items():
            if not _is_function(caller):
                raise FormatError("a caller is not a function", path=f"{where} -> callers")
            if not (_is_number(count) or isinstance(count, tuple) and len(count) == 4
                    and all(_is_number(x) for x in count)):
                raise FormatError("a caller's count is not a number or cProfile's "
                                  "(nc, cc, tt, ct)", path=f"{where} -> callers[{_shown(caller)}]")


def _shown(key: Any) -> str:
    """*key* as the error's field path shows it: ``repr``, except that an integer too long
    to print (Python refuses more than 4300 digits) or a long key is cut short."""
    try:
        text = repr(key)
    except ValueError:
        return "<a key holding an integer too long to print>"
    return text if len(text) <= 200 else text[:200] + "..."


def _is_function(key: Any) -> bool:
    return (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)
            and isinstance(key[1], int) and isinstance(key[2], str))


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float)
