"""The memory map after the trailer, read into mappings exactly as pprof reads it.

pprof (``profile/legacy_profile.go`` and ``profile.go``) does more than parse lines: it
replaces ``$attr`` variables, drops glog prefixes, merges adjacent pieces of one file, moves
what looks like the main binary first, drops a leading ``/anon_hugepage``, rebases a main
binary loaded at 0x400000, and gives every address a mapping (stretching a mapping down by
its offset, or adding one that covers everything). Mapping ids, and so the ``M=`` of every
location, depend on all of it, so this module repeats each step in pprof's order; the text
itself is kept unchanged in ``extras`` by the reader.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.schema import gperftools as spec

U64_MASK = (1 << 64) - 1
_GO_ASCII_SPACE = b"\t\n\v\f\r "


@dataclass
class Mapping:
    """One mapping as pprof holds it while reading (mutable: pprof's heuristics edit it)."""

    start: int
    limit: int
    offset: int
    file: bytes
    build_id: bytes = b""

    def row(self) -> tuple[int, int, int, bytes, bytes]:
        return self.start, self.limit, self.offset, self.file, self.build_id


FAKE_MAPPING = (0, U64_MASK, 0, b"", b"")
"""The mapping pprof adds for addresses no mapping covers (Go's runtime wrote no map)."""


# --- lines --------------------------------------------------------------------------------------


def text_lines(
    text: bytes, offset: int, section: str, max_line: int | None = spec.MAX_TEXT_LINE
) -> list[tuple[int, bytes]]:
    """``(file offset, line)`` of each line as Go's ``bufio.Scanner`` splits *text* (at
    ``\\n``, one trailing ``\\r`` dropped, no empty last line). A line longer than
    *max_line* bytes makes pprof's scanner fail (the Java symbol section is read without
    that limit), and a NUL byte means the bytes are not text at all (pprof would ignore such
    lines; this reader refuses them)."""
    nul = text.find(b"\0")
    if nul >= 0:
        line = text.count(b"\n", 0, nul) + 1
        raise FormatError(f"the {section} holds a NUL byte: not text (a corrupt or "
                          "concatenated file?)", offset=offset + nul,
                          path=f"{section} -> line {line}")
    out = []
    at = 0
    for number, line in enumerate(text.split(b"\n"), start=1):
        if max_line is not None and len(line) > max_line:
            raise FormatError(f"line of {len(line)} bytes in the {section}: pprof reads at "
                              f"most {max_line}", offset=offset + at,
                              path=f"{section} -> line {number}")
        out.append((offset + at, line[:-1] if line.endswith(b"\r") else line))
        at += len(line) + 1
    if not text or text.endswith(b"\n"):
        out.pop()  # the empty piece after the last newline is no line
    return out


def go_trim_space(data: bytes) -> bytes:
    """Go's ``bytes.TrimSpace``: ASCII white space and, where the bytes are UTF-8, Unicode
    spaces (U+0085, U+00A0, U+2000..., U+3000) at both ends."""
    data = data.strip(_GO_ASCII_SPACE)
    if data and (data[0] >= 0x80 or data[-1] >= 0x80):
        data = _trim_unicode_space(data)
    return data


def _trim_unicode_space(data: bytes) -> bytes:
    start, end = 0, len(data)
    while start < end:
        rune, size = _first_rune(data, start, end)
        if rune is None or not _is_go_space(rune):
            break
        start += size
    while end > start:
        rune, size = _last_rune(data, start, end)
        if rune is None or not _is_go_space(rune):
            break
        end -= size
    return data[start:end]


def _is_go_space(rune: str) -> bool:
    return rune in "\t\n\v\f\r \x85\xa0" or (ord(rune) > 0xFF
                                              and unicodedata.category(rune) == "Zs"
                                              ) or rune in "\u2028\u2029"


def _first_rune(data: bytes, start: int, end: int) -> tuple[str | None, int]:
    for size in (1, 2, 3, 4):
        try:
            return data[start : start + size].decode("utf-8"), size
        except UnicodeDecodeError:
            if start + size >= end:
                break
    return None, 1


def _last_rune(data: bytes, start: int, end: int) -> tuple[str | None, int]:
    for size in (1, 2, 3, 4):
        if end - size < start:
            break
        try:
            return data[end - size : end].decode("utf-8"), size
        except UnicodeDecodeError:
            continue
    return None, 1


class _Replacer:
    """Go's ``strings.NewReplacer(old1, new1, ...)``: left to right, no overlaps, and at each
    position the earliest pair given wins (so a variable redefined later keeps its first
    value)."""

    def __init__(self, pairs: list[tuple[bytes, bytes]]) -> None:
        self.pairs = pairs

    def __call__(self, line: bytes) -> bytes:
        if not self.pairs or b"$" not in line:
            return line
        out = bytearray()
        at = 0
        while at < len(line):
            for old, new in self.pairs:
                if line.startswith(old, at):
                    out += new
                    at += len(old)
                    break
            else:
                out.append(line[at])
                at += 1
        return bytes(out)


# --- parsing ------------------------------------------------------------------------------------


def parse_memory_map(lines: list[tuple[int, bytes]]) -> list[Mapping]:
    """pprof's ``parseProcMapsFromScanner``: the executable mappings the lines name, in file
    order; unrecognised lines are skipped, and ``name=value`` lines define ``$name`` for the
    lines after them."""
    mappings = []
    replace = _Replacer([])
    for _, raw in lines:
        line = replace(_remove_log_prefix(raw))
        entry = _mapping_entry(line)
        if entry is None:
            key, sep, value = line.partition(b"=")
            if sep:
                replace = _Replacer([*replace.pairs, (b"$" + go_trim_space(key),
                                                      go_trim_space(value))])
            continue
        if entry is not _SKIP:
            mappings.append(entry)
    return mappings


_SKIP = Mapping(0, 0, 0, b"")
"""A recognised line of a mapping that is not executable."""


def _remove_log_prefix(line: bytes) -> bytes:
    match = spec.LOG_PREFIX.match(line)
    return line[match.end() :] if match else line


def _mapping_entry(line: bytes) -> Mapping | None:
    """pprof's ``parseMappingEntry``: a mapping, ``_SKIP`` for a non-executable one, None for
    a line it does not recognise (also when a number does not fit 64 bits)."""
    match = spec.PROC_MAPS_LINE.match(line)
    if match:
        start, limit, perm, offset, file = (g or b"" for g in match.groups())
        build_id = b""
    else:
        match = spec.BRIEF_MAPS_LINE.match(line)
        if not match:
            return None
        start, limit, perm, file, offset, build_id = (g or b"" for g in match.groups())
    if perm and b"x" not in perm:
        return _SKIP
    numbers = [int(start, 16), int(limit, 16), int(offset, 16) if offset else 0]
    if max(numbers) > U64_MASK:
        return None
    return Mapping(*numbers, file=file, build_id=build_id)


# --- pprof's heuristics -------------------------------------------------------------------------


def massage_mappings(mappings: list[Mapping]) -> list[Mapping]:
    """pprof's ``massageMappings``: merge adjacent pieces of one mapping, then move the first
    mapping that looks like the main binary (a file, not a ``.so``, not ``[vdso]``-like) to
    the front."""
    if len(mappings) > 1:
        merged = [mappings[0]]
        for m in mappings[1:]:
            last = merged[-1]
            if _adjacent(last, m):
                last.limit = m.limit
                if m.file:
                    last.file = m.file
                if m.build_id:
                    last.build_id = m.build_id
                continue
            merged.append(m)
        mappings = merged
    for i, m in enumerate(mappings):
        file = go_trim_space(m.file.replace(b"(deleted)", b""))
        if not file or spec.LIBRARY_NAME.search(file) or file.startswith(b"["):
            continue
        mappings[0], mappings[i] = mappings[i], mappings[0]
        break
    return mappings


def _adjacent(m1: Mapping, m2: Mapping) -> bool:
    if m1.file and m2.file and m1.file != m2.file:
        return False
    if m1.build_id and m2.build_id and m1.build_id != m2.build_id:
        return False
    if m1.limit != m2.start:
        return False
    return not (m1.offset and m2.offset
                and (m1.offset + (m1.limit - m1.start)) & U64_MASK != m2.offset)


def assign_mappings(
    mappings: list[Mapping], addresses: npt.NDArray[np.uint64]
) -> tuple[list[Mapping], npt.NDArray[np.int32]]:
    """pprof's ``remapMappingIDs``: the final mappings, and the row of each address's
    mapping (-1 for address 0, which gets none). Addresses are taken in order, because
    the fallbacks change the mappings that later addresses see."""
    if mappings and mappings[0].file.startswith(b"/anon_hugepage") and len(mappings) > 1 \
            and mappings[0].limit == mappings[1].start:
        mappings = mappings[1:]
    if mappings and (mappings[0].start - mappings[0].offset) & U64_MASK == \
            spec.MAIN_BINARY_START:
        mappings[0].start, mappings[0].offset = spec.MAIN_BINARY_START, 0
    rows = np.full(addresses.size, -1, np.int32)
    todo = np.flatnonzero(addresses != 0)
    fake: list[int] = []
    while todo.size:
        first = _first_containing(mappings, addresses[todo])
        missing = np.flatnonzero(first < 0)
        if not missing.size:
            rows[todo] = first
            break
        k = int(missing[0])
        rows[todo[:k]] = first[:k]
        rows[todo[k]] = _fallback(mappings, int(addresses[todo[k]]), fake)
        todo = todo[k + 1 :]
    return mappings, rows


def _fallback(mappings: list[Mapping], address: int, fake: list[int]) -> int:
    """No mapping holds *address*: stretch one down by its offset ("legacy handlers failing
    to encode the first part of mappings split into adjacent ranges"), or use the catch-all
    mapping, added once (its limit excludes 2**64 - 1, which only this step then takes)."""
    for j, m in enumerate(mappings):
        if m.offset and (m.start - m.offset) & U64_MASK <= address < m.start:
            m.start = (m.start - m.offset) & U64_MASK
            m.offset = 0
            return j
    if not fake:
        mappings.append(Mapping(*FAKE_MAPPING))
        fake.append(len(mappings) - 1)
    return fake[0]


_CHUNK = 1 << 16


def _first_containing(mappings: list[Mapping], addresses: npt.NDArray[np.uint64]) -> np.ndarray:
    """Vectorised: per address, the first mapping (in list order) with ``start <= a <
    limit``, -1 if none."""
    out = np.full(addresses.size, -1, np.int64)
    if not mappings:
        return out
    starts = np.array([m.start for m in mappings], np.uint64)
    limits = np.array([m.limit for m in mappings], np.uint64)
    for lo in range(0, addresses.size, _CHUNK):
        a = addresses[lo : lo + _CHUNK, None]
        inside = (starts <= a) & (a < limits)
        out[lo : lo + _CHUNK] = np.where(inside.any(axis=1), inside.argmax(axis=1), -1)
    return out
