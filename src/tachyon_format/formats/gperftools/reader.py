"""Read a gperftools CPU profile into a :class:`~tachyon_format.model.Profile`, as pprof does.

The result is what google/pprof's ``profile.Parse`` makes of the file, row for row: frames
are pprof's locations in pprof's order (``frames.address``, ``frames.mapping``), mappings
are pprof's mappings in pprof's order, samples are the records in file order (not merged),
each with pprof's values ``samples/count`` and ``cpu/nanoseconds`` (count x period). The
tests hold the result to pprof's own ``Profile.String()`` of the same files.

Pipeline: ``file.read_records`` (header, records, trailer) -> for the C++ variant
``stacks.cpp_samples`` (return addresses - 1, signal frames, duplicates) and
``maps`` (mappings from the text) -> for the Java variant ``java.parse_symbols`` (names from
the text) -> columns.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.model import (
    SAMPLES_COUNT,
    Frames,
    Mappings,
    Meta,
    Profile,
    Samples,
    Stacks,
    Strings,
    Threads,
    ValueType,
)
from tachyon_format.schema.gperftools import Variant

from ..sources import Source, check_stack_depths, read_bytes
from . import maps
from .facts import EXTRAS_KEY, GperftoolsFacts, info_dict
from .file import Records, read_records
from .java import parse_symbols
from .stacks import Located, cpp_samples, first_appearance

CPU_NANOSECONDS = ValueType("cpu", "nanoseconds")
SAMPLE_TYPES = (SAMPLES_COUNT, CPU_NANOSECONDS)
"""pprof's sample types for a CPU profile: the record's count, and count x period."""


def read(source: Source, *, drop_signal_frames: bool = True) -> Profile:
    """The profile in *source* (a path, bytes or a binary file object).

    *drop_signal_frames*: remove the second frame shared by nearly every sample, as pprof
    does (it was the signal handler's, in old libprofilers); ``False`` keeps every recorded
    frame. Raises :class:`~tachyon_format.FormatError` for malformed input."""
    return parse(read_bytes(source), drop_signal_frames=drop_signal_frames)


def parse(data: bytes, *, drop_signal_frames: bool = True) -> Profile:
    """:func:`read` for the file's bytes."""
    records = read_records(data)
    if records.layout.variant == Variant.JAVA:
        return _java_profile(records)
    return _cpp_profile(records, drop_signal_frames)


def info(source: Source) -> dict:
    """The header's facts and the number of records, without building the profile."""
    records = read_records(read_bytes(source))
    return info_dict(records.layout, records.header, len(records), len(records.text))


# --- the two variants -------------------------------------------------------------------------


def _cpp_profile(records: Records, drop_signal_frames: bool) -> Profile:
    located = cpp_samples(records.offsets, records.pcs, drop_signal_frames=drop_signal_frames)
    lines = maps.text_lines(records.text, records.text_offset, "map_text")
    parsed = maps.massage_mappings(maps.parse_memory_map(lines))
    mappings, mapping_rows = maps.assign_mappings(parsed, located.addresses)
    strings = _Interner()
    facts = _facts(records, mappings, located)
    return _profile(records, located, strings, mapping_rows, mappings, facts)


def _java_profile(records: Records) -> Profile:
    """pprof's ``javaCPUProfile``: pcs are not adjusted, no signal frames are removed, the
    text names them; then every address is set to 0 ("for better merge")."""
    addresses, locations = first_appearance(records.pcs)
    symbols = parse_symbols(records.text, records.text_offset, set(addresses.tolist()))
    named = np.array([int(a) in symbols for a in addresses.tolist()], bool)
    mappings, mapping_rows = maps.assign_mappings([], np.where(named, 0, addresses))
    strings = _Interner()
    n = addresses.size
    funcname = np.zeros(n, np.uint32)
    filename = np.zeros(n, np.uint32)
    lineno = np.full(n, -1, np.int32)
    for row, address in enumerate(addresses.tolist()):
        symbol = symbols.get(address)
        if symbol is not None:
            funcname[row] = strings.add(symbol.function)
            filename[row] = strings.add(symbol.file)
            if 0 < symbol.line < 1 << 31:
                lineno[row] = symbol.line
    located = Located(np.zeros(n, np.uint64), records.offsets, locations)
    facts = _facts(records, mappings, located)
    facts.java_pcs = tuple(addresses.tolist())
    return _profile(records, located, strings, mapping_rows, mappings, facts,
                    names=(filename, funcname, lineno))


# --- columns ------------------------------------------------------------------------------------


class _Interner:
    """The string table being built: ``""`` first, then each new byte string once."""

    def __init__(self) -> None:
        self.rows: dict[bytes, int] = {b"": 0}

    def add(self, raw: bytes) -> int:
        return self.rows.setdefault(raw, len(self.rows))

    def strings(self) -> Strings:
        return Strings.from_raw(self.rows)


def _profile(
    records: Records,
    located: Located,
    strings: _Interner,
    mapping_rows: npt.NDArray[np.int32],
    mappings: list[maps.Mapping],
    facts: GperftoolsFacts,
    names: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> Profile:
    n = located.addresses.size
    if names is None:
        names = (np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.full(n, -1, np.int32))
    filename, funcname, lineno = names
    unknown = np.full(n, -1, np.int32)
    frames = Frames(filename=filename, funcname=funcname, lineno=lineno,
                    end_lineno=lineno.copy(),
                    column=unknown, end_column=unknown.copy(), opcode=np.full(n, -1, np.int16),
                    address=located.addresses.astype(np.uint64), mapping=mapping_rows)
    table = Mappings(
        start=np.array([m.start for m in mappings], np.uint64),
        limit=np.array([m.limit for m in mappings], np.uint64),
        offset=np.array([m.offset for m in mappings], np.uint64),
        filename=np.array([strings.add(m.file) for m in mappings], np.uint32),
        build_id=np.array([strings.add(m.build_id) for m in mappings], np.uint32),
    )
    check_stack_depths(located.offsets, lambda i: f"records -> {i} -> pcs")
    stacks, stack_ids = Stacks.from_csr(located.offsets, located.locations)
    period_ns = _go_int64(records.header[3] * 1000)
    _check_counts_fit(records.counts, period_ns)
    counts = records.counts.view(np.int64)
    values = np.stack([counts, counts * np.int64(period_ns)], axis=1) if counts.size \
        else np.zeros((0, 2), np.int64)
    samples = Samples(stack=stack_ids, thread=np.full(stack_ids.size, -1, np.int32),
                      values=values)
    meta = Meta(sample_types=SAMPLE_TYPES, period_type=CPU_NANOSECONDS, period=period_ns)
    return Profile(strings=strings.strings(), frames=frames, stacks=stacks,
                   threads=Threads.empty(), samples=samples, meta=meta, mappings=table,
                   extras={EXTRAS_KEY: facts})


def _facts(records: Records, mappings: list[maps.Mapping], located: Located) -> GperftoolsFacts:
    return GperftoolsFacts(
        layout=records.layout, header=records.header, num_records=len(records),
        text=records.text, mappings=tuple(m.row() for m in mappings),
        dropped_frames=located.dropped, duplicate_frames=located.duplicates)


INT64_MAX = (1 << 63) - 1


def _check_counts_fit(counts: np.ndarray, period_ns: int) -> None:
    """Every count, its time (count x period) and the sum of each must fit an int64 (the
    model's values): a larger one is refused, naming its record, never wrapped to a negative
    number (Go's pprof wraps them)."""
    if not counts.size:
        return
    limit = INT64_MAX // period_ns if period_ns > 0 else INT64_MAX
    over = np.flatnonzero(counts > np.uint64(limit))
    if over.size:
        i = int(over[0])
        raise FormatError(f"record {i} counts {int(counts[i])} samples, more than an int64 "
                          f"holds{' times the period' if limit < INT64_MAX else ''}",
                          path=f"records -> {i} -> count")
    if float(counts.sum(dtype=np.float64)) * max(period_ns, 1) >= 2.0**62:  # (then exactly)
        total = 0
        for i, count in enumerate(counts.tolist()):
            total += count
            if total * max(period_ns, 1) > INT64_MAX:
                raise FormatError(f"the counts add up to more than an int64 holds by record "
                                  f"{i}", path=f"records -> {i} -> count")


def _go_int64(value: int) -> int:
    """*value* as Go's int64 arithmetic leaves it (wrapped to 64 bits, signed)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)
