"""The Java variant's symbol section: a function, file and line for each pc, as pprof reads it.

pprof's ``parseJavaLocations`` (``profile/legacy_java_profile.go``) keys functions by name
alone, so every pc whose line names function ``f`` shows the file of the *first* line that
named ``f``; a later line for the same pc replaces an earlier one; a pc no line names stays
unsymbolised. This module repeats that, and writes lines pprof reads back the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tachyon_format.errors import FormatError
from tachyon_format.schema import gperftools as spec

from .maps import go_trim_space, text_lines


@dataclass(frozen=True)
class JavaSymbol:
    """What a symbol line says about one pc: pprof's function name and file, and the line
    number (0 when unknown, as pprof has it)."""

    function: bytes
    file: bytes
    line: int


def parse_symbols(text: bytes, offset: int, addresses: set[int]) -> dict[int, JavaSymbol]:
    """The symbol of each of *addresses* that a line of *text* names (file offset *offset*)."""
    functions: dict[bytes, bytes] = {}  # function name -> the file of its first line
    found: dict[int, JavaSymbol] = {}
    for number, (at, raw) in enumerate(text_lines(text, offset, "java_symbols", None), 1):
        line = go_trim_space(raw)
        match = spec.JAVA_SYMBOL_LINE.match(line) if line else None
        if match is None:
            continue
        address = int(match.group(1), 16)
        if address >> 64:
            raise FormatError(f"pc 0x{match.group(1).decode()} does not fit 64 bits (pprof "
                              "fails on this line)", offset=at,
                              path=f"java_symbols -> line {number} -> pc")
        if address not in addresses:
            continue
        function, file, line_number = _describe(match.group(2))
        file = functions.setdefault(function, file)
        found[address] = JavaSymbol(function, file, line_number)
    return found


def _describe(what: bytes) -> tuple[bytes, bytes, int]:
    # the patterns are anchored at the end (`...)`): checking that end first keeps Python's
    # backtracking linear on a long line with many " (" and no such end (Go's regexp is)
    if not what.endswith(b")"):
        return _stub_or_name(what)
    if re.search(rb":-?[0-9]+\)\Z", what) and (match := spec.JAVA_FILE_LINE.match(what)):
        number = int(match.group(3))
        return match.group(1), match.group(2), number if 0 < number < 1 << 63 else 0
    if match := spec.JAVA_PATH.match(what):
        return match.group(1), go_base(match.group(2)), 0
    return _stub_or_name(what)


def _stub_or_name(what: bytes) -> tuple[bytes, bytes, int]:
    if spec.JAVA_STUB in what:
        return b"STUB", b"", 0
    return what, b"", 0


def go_base(path: bytes) -> bytes:
    """Go's ``filepath.Base`` on a Unix path: the last element, ``.`` for an empty path."""
    if not path:
        return b"."
    path = path.rstrip(b"/")
    if not path:
        return b"/"
    return path.rsplit(b"/", 1)[-1]


def symbol_line(address: int, function: bytes, file: bytes, line: int) -> bytes:
    """One line that pprof reads back as *function*, *file* and *line* (``line <= 0``:
    unknown). Names must not hold a line break (the writer replaces them first); a function
    without a file is written alone, and pprof then gives it no file and no line."""
    head = b"0x%x %s" % (address, function)
    if not file:
        return head + b"\n"
    return head + b" (%s:%d)\n" % (file, max(line, 0))
