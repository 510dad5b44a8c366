"""gperftools CPU profile: the binary "legacy" CPU format that libprofiler writes and pprof reads.

Written by gperftools' ``libprofiler`` (``CPUPROFILE=out.prof ./program``, or
``ProfilerStart``), and by the Java agent pprof also reads (the *Java variant*, header slot 2
= 1). Spec: gperftools ``docs/cpuprofile-fileformat.adoc`` at commit
``023376d651713f0e0a7aac5f8f86b42d0f5ef0de``. Writer: gperftools ``src/profiledata.cc``
(``ProfileData::Start``, ``Stop``, ``Evict``) at ``67c28aa7dc718dc0040351e3d218fa2ce9277d70``.
Reference reader: google/pprof ``profile/legacy_profile.go`` (``parseCPU``, ``cpuProfile``,
``parseCPUSamples``, ``ParseMemoryMap``) and ``profile/legacy_java_profile.go``
(``javaCPUProfile``, ``parseJavaLocations``) at ``b9395ee17fa0d0013c3fd96ac9482318422ac337``.

Words ("slots" in the spec) are as wide as the writer's pointers, 4 or 8 bytes, in the
writer's native byte order; the file states neither. A reader finds both by trying the
header's expected values as 32-bit little-endian, 32-bit big-endian, 64-bit little-endian,
then 64-bit big-endian words (pprof's order; at most one can match). Every binary layout is
therefore one factory of both, ``header(word_size, order)``, declared once; the header's
rule (which values each word may hold) is generated from it into the construct-free
``schema/gperftools_plain.py``, which sniffing and reading test.

File map::

    0                 header, 5 words
    5 words           records: count, num_pcs, then num_pcs program counters
    ...               trailer: the record (0, 1, 0)
    ...               text to the end of the file: the memory map (C++ variant,
                      /proc/self/maps lines) or the symbol lines (Java variant)

The text is described by the regular expressions below, which are pprof's own
(``procMapsRE``, ``briefMapsRE``, ``logInfoRE``, ``javaLocation*Rx``) restated for bytes:
Go's ``\\s`` is ``[\\t\\n\\f\\r ]``, without the vertical tab Python's ``\\s`` has.
"""

from __future__ import annotations

import enum
import functools
import re

import construct as cs
from construct import obj_, this

from .primitives import ByteOrder

WORD_SIZES = (4, 8)
"""Bytes per word: 4 for 32-bit writers, 8 for 64-bit ones."""
HEADER_WORDS = 5
"""The header's length in words."""
NUM_HEADER_SLOTS = 3
"""Header slot 1: header slots after this one. The spec allows >= 3; pprof requires 3."""
TRAILER_WORDS = 3
"""The trailer's length in words: count 0, num_pcs 1, pc 0."""
MAX_STACK_DEPTH = 254
"""libprofiler keeps at most this many pcs per record (``ProfileData::kMaxStackDepth``);
readers accept any depth the file holds."""
DEFAULT_PERIOD_US = 10000
"""libprofiler's period with the default ``CPUPROFILE_FREQUENCY`` of 100 Hz
(``period = 1000000 / frequency``, in whole microseconds)."""
SIGNAL_FRAME_ROUNDS = 2
"""pprof removes up to this many "signal frames": the second pc of nearly every record."""
SIGNAL_FRAME_SLACK = 32
"""A second pc counts as a signal frame when at least ``n - n // 32`` of the ``n`` records
have it (pprof's ``similarSamples``)."""
MAX_TEXT_LINE = 65535
"""pprof reads the memory map with Go's ``bufio.Scanner``, which fails on a longer line."""
MAIN_BINARY_START = 0x400000
"""pprof moves the first mapping's start here (offset 0) when ``start - offset`` is this,
the load address of a non-PIE x86-64 executable."""


class Variant(enum.IntEnum):
    """Header slot 2, "format version": 0 for libprofiler's profiles (the spec requires 0);
    pprof reads 1 as the Java agent's variant, whose text after the trailer names each pc."""

    CPP = 0
    JAVA = 1


class KnownEnum(cs.Validator):
    """An ``Enum`` field that must hold one of its members (``Enum`` alone lets any integer
    through)."""

    def _validate(self, obj, context, path):
        return obj in self.subcon.encmapping or obj in self.subcon.decmapping


class AtLeast(cs.Validator):
    """An integer field that must hold *minimum* or more."""

    def __init__(self, subcon: cs.Construct, minimum: int) -> None:
        super().__init__(subcon)
        self.minimum = minimum

    def _validate(self, obj, context, path):
        return obj >= self.minimum


_WORDS = {(4, "<"): cs.Int32ul, (4, ">"): cs.Int32ub, (8, "<"): cs.Int64ul, (8, ">"): cs.Int64ub}


def word(word_size: int, order: ByteOrder) -> cs.Construct:
    """One unsigned word of *word_size* bytes in byte order *order*."""
    if (word_size, order) not in _WORDS:
        raise ValueError(f"no {word_size!r}-byte words in byte order {order!r}")
    return _WORDS[word_size, order]


@functools.cache
def header(word_size: int, order: ByteOrder) -> cs.Construct:
    w = word(word_size, order)
    return "The first five words: shaped like a record whose pcs are the profile's settings" * (
        cs.Struct(
            "header_count" / cs.Const(0, w) * "spec: 'header count'; 0, the count slot of a "
            "record",
            "num_header_slots" / cs.Const(NUM_HEADER_SLOTS, w) * "spec: 'header slots after "
            "this one'; 3 (the spec allows more, pprof requires 3)",
            "version" / KnownEnum(cs.Enum(w, Variant)) * "spec: 'format version'; 0, or 1 "
            "for the Java variant",
            "period_us" / AtLeast(w, 1) * "spec: 'sampling period, in microseconds'; above 0 "
            "(pprof rejects 0); libprofiler writes 1000000 // CPUPROFILE_FREQUENCY",
            "padding" / cs.Const(0, w) * "0",
        )
    )


@functools.cache
def record(word_size: int, order: ByteOrder) -> cs.Construct:
    w = word(word_size, order)
    return "One call stack and how often it was sampled (tier c: read with numpy)" * cs.Struct(
        "count" / w * "spec: 'sample count'; samples of this stack (libprofiler writes >= 1; "
        "pprof also reads 0)",
        "num_pcs" / w * "spec: 'number of call chain PCs'; libprofiler writes 1 to 254 (the "
        "spec says >= 1; pprof also reads 0)",
        "pcs" / cs.Array(this.num_pcs, w) * "Program counters, the interrupted one first, "
        "then return addresses (each just past its call instruction)",
    )


@functools.cache
def trailer(word_size: int, order: ByteOrder) -> cs.Construct:
    w = word(word_size, order)
    return "The end of the records: a record of count 0 whose one pc is 0" * cs.Struct(
        "count" / cs.Const(0, w) * "0",
        "num_pcs" / cs.Const(1, w) * "1",
        "pc" / cs.Const(0, w) * "0",
    )


@functools.cache
def profile(word_size: int, order: ByteOrder) -> cs.Construct:
    return "A whole file (tier a: a reference for tests and small files)" * cs.Struct(
        "header" / header(word_size, order),
        "records" / cs.RepeatUntil((obj_.count == 0) & (obj_.pcs == [0]),
                                   record(word_size, order))
        * "Records up to and including the trailer (the first record (0, 1, [0]))",
        "text" / cs.GreedyBytes * "C++ variant: the memory map, lines of /proc/self/maps "
        "(PROC_MAPS_LINE or BRIEF_MAPS_LINE; others are ignored). Java variant: symbol lines "
        "(JAVA_SYMBOL_LINE)",
    )


# --- the text after the trailer -----------------------------------------------------------------

_S = rb"[\t\n\f\r ]"
_NOT_S = rb"[^\t\n\f\r ]"
_HEX = rb"(?:0x)?([0-9A-Fa-f]{1,32})"
"""An address of a map line's range. pprof's ``[0-9A-Fa-f]+`` here is unbounded, but Go's
regexp runs in linear time and Python's backtracks: with nothing between the two numbers,
each split of a long run of hex digits would be tried, minutes for one 64 KB line. 32 digits
hold any 64-bit address even zero-padded (a larger one fails the 64-bit check anyway)."""
_RANGE = _S + rb"*" + _HEX + rb"[\t\n\f\r -]?" + _S + rb"*" + _HEX + rb":?"
_PERM = rb"(?:" + _S + rb"+([-rwxp]+))?"
_STRING = rb"(?:" + _S + rb"+(" + _NOT_S + rb"+))?"
_SPACE_HEX = rb"(?:" + _S + rb"+([0-9A-Fa-f]+))?"

PROC_MAPS_LINE = re.compile(
    rb"^" + _RANGE + _PERM + _SPACE_HEX + _S + rb"+[0-9A-Fa-f]+:[0-9A-Fa-f]+" + _S + rb"+[0-9]+"
    + _STRING)
"""A /proc/self/maps line (pprof's ``procMapsRE``): groups start, limit, permissions, offset,
file (up to its first space). libprofiler writes ``%08x-%08x rwxp %08x 00:00 inode file``.
A line whose permissions lack ``x`` is skipped; addresses are hex, at most 64 bits."""
BRIEF_MAPS_LINE = re.compile(
    rb"^" + _RANGE + _PERM + _STRING + rb"(?:" + _S + rb"+\(@([0-9A-Fa-f]+)\))?" + _SPACE_HEX)
"""The brief form, tried when ``PROC_MAPS_LINE`` does not match (pprof's ``briefMapsRE``):
``start-limit [perms] [file] [(@offset)] [build_id]``, the build id in hex."""
LOG_PREFIX = re.compile(rb"^[^\[\]]+:[0-9]+\]" + _S)
"""A glog prefix (``file.cc:123] ``), removed from a map line before it is parsed."""
LIBRARY_NAME = re.compile(rb"(\.so\Z|\.so[._][0-9]+)")
"""A shared library's file name (pprof's ``libRx``): never taken for the main binary, which
pprof moves to the front of the mappings (the first file that is neither this nor ``[...]``)."""
JAVA_SYMBOL_LINE = re.compile(rb"^" + _S + rb"*0x([0-9A-Fa-f]+)" + _S + rb"+(.*)" + _S
                              + rb"*\Z")
"""Java variant: ``0x<pc> <what>``, matched after the line's surrounding white space is
removed; lines that do not match are ignored."""
JAVA_FILE_LINE = re.compile(rb"^(.*)" + _S + rb"+\((.+):(-?[0-9]+)\)\Z")
"""``<what>`` as ``function (file:line)``; a line number of 0 or less means unknown."""
JAVA_PATH = re.compile(rb"^(.*)" + _S + rb"+\((.*)\)\Z")
"""``<what>`` as ``function (path)``, a shared library: its base name is the file."""
JAVA_STUB = b"generated stub/JIT"
"""``<what>`` containing this (and neither form above) is the function ``STUB``."""
