"""Write a :class:`~tachyon_format.model.Profile` as a gperftools CPU profile.

Two variants, chosen per profile (``variant="auto"``):

* **C++** (libprofiler's own), for profiles whose frames have addresses: one record per
  sample row (or per distinct stack, see ``aggregate``), pcs leaf first with every return
  address raised by 1 again (the inverse of pprof's -1), the period, the trailer, and the
  memory map as /proc/self/maps lines (the file's own text, unchanged, when the profile's
  mappings are still the ones it gave).
* **Java** (the variant pprof reads with names), for profiles without addresses, such as
  Python profiles: frame row ``i`` gets the synthetic pc ``i + 1`` (a profile read from a
  Java-variant file keeps its own), and the text after the trailer names it
  ``0x<pc> function (file:line)``, so pprof shows functions, files and lines.

Why these choices keep pprof's reading equal to the profile (return addresses, the
signal-frame guard, the map text): docs/formats/gperftools.md.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from tachyon_format.kernels.counted_records import encode_counted_records
from tachyon_format.kernels.segments import decode_ragged_ranges
from tachyon_format.model import NS_PER_UNIT, Profile
from tachyon_format.model.aggregate import group_count
from tachyon_format.schema import gperftools as spec
from tachyon_format.schema.primitives import ByteOrder

from ..sources import whole_file_writer
from .facts import EXTRAS_KEY, GperftoolsFacts
from .java import parse_symbols, symbol_line
from .maps import FAKE_MAPPING
from .stacks import adjust_return_addresses, first_appearance, signal_frame_cuts

VariantName = Literal["auto", "cpp", "java"]
GUARD_PCS = (0x1, 0x2)
"""The two placeholder pcs written right after each leaf when pprof would otherwise cut a
real caller as a "signal frame" (``guard_frames``); pprof then cuts these two instead."""

_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def build(
    profile: Profile,
    *,
    word_size: int | None = None,
    byte_order: ByteOrder | None = None,
    variant: VariantName = "auto",
    period_us: int | None = None,
    aggregate: bool | None = None,
    guard_frames: bool | Literal["auto"] = "auto",
) -> bytes:
    """The file's bytes.

    *word_size* (4 or 8) and *byte_order* (``"<"`` or ``">"``): by default the profile's
    own when it was read from a gperftools file, else 8 and ``"<"`` (x86-64). *variant*:
    ``"cpp"`` needs frame addresses, ``"java"`` writes names instead, ``"auto"`` picks
    ``"cpp"`` when a sampled frame has a non-zero address. *period_us*: by default from
    ``profile.meta`` (period and unit). *aggregate*: one record per distinct stack (in stack id
    order), counts summed, instead of one per sample row; by default only when the rows are single
    samples without values (Tachyon's), as libprofiler's own table aggregates them.
    *guard_frames* (C++ only): ``"auto"`` adds :data:`GUARD_PCS` after every leaf only when
    pprof would otherwise cut a real caller as a signal frame; ``True``/``False``: always,
    never."""
    facts = profile.extras.get(EXTRAS_KEY)
    facts = facts if isinstance(facts, GperftoolsFacts) else None
    word_size = word_size or (facts.layout.word_size if facts else 8)
    byte_order = byte_order or (facts.layout.byte_order if facts else "<")
    spec.word(word_size, byte_order)  # only 4/8 and "<"/">"
    limit = (1 << (8 * word_size)) - 1
    period = _period_us(profile, period_us)
    counts = _counts(profile, period)
    stacks = profile.samples.stack
    if aggregate is None:
        aggregate = profile.samples.values is None
    if aggregate:
        distinct, counts = group_count({"stack": stacks}, counts)
        stacks = distinct["stack"]
    offsets, frames = profile.stacks.to_csr(stacks)
    chosen = _variant(profile, frames, facts) if variant == "auto" else variant
    if chosen == "cpp":
        counts, offsets, pcs = _cpp_records(profile, counts, offsets, frames, guard_frames)
        text, version = _map_text(profile, facts), spec.Variant.CPP
    elif chosen == "java":
        pcs, text = _java_records(profile, frames, facts)
        version = spec.Variant.JAVA
    else:
        raise ValueError(f"variant must be 'auto', 'cpp' or 'java', not {variant!r}")
    for what, values in (("period", [period]), ("count", counts), ("pc", pcs)):
        if len(values) and int(np.max(values)) > limit:
            raise ValueError(f"a {what} does not fit a {word_size}-byte word (write with "
                             "word_size=8)")
    lengths = np.diff(offsets).astype(np.uint64)
    heads = np.stack([counts.astype(np.uint64), lengths], axis=1).reshape(-1, 2)
    dtype = np.dtype(f"{byte_order}u{word_size}")
    body = encode_counted_records(heads, offsets, pcs, dtype)
    header = np.array([0, spec.NUM_HEADER_SLOTS, version, period, 0], dtype)
    return header.tobytes() + body.tobytes() + np.array([0, 1, 0], dtype).tobytes() + text


# --- values -------------------------------------------------------------------------------------


def _period_us(profile: Profile, period_us: int | None) -> int:
    if period_us is not None:
        if int(period_us) <= 0:
            raise ValueError("period_us must be above 0 (pprof rejects a period of 0)")
        return int(period_us)
    meta = profile.meta
    period_ns = meta.period_ns()
    if period_ns is None:
        unit = meta.period_type.unit if meta.period_type is not None else None
        raise ValueError("the profile has no sampling period in a unit of time "
                         f"({meta.period} {unit}); pass period_us=")
    return max(1, round(period_ns / 1000))


def _counts(profile: Profile, period_us: int) -> npt.NDArray[np.int64]:
    """Per sample row, the samples it stands for: its ``count`` value (``samples/count``
    first), else 1 (a profile without values), else a time value divided by the period."""
    values = profile.samples.values
    if values is None:
        return np.ones(len(profile.samples.stack), np.int64)
    types = profile.meta.sample_types
    counted = [i for i, t in enumerate(types) if t.unit == "count"]
    timed = [i for i, t in enumerate(types) if t.unit in NS_PER_UNIT]
    if counted:
        best = next((i for i in counted if types[i].type == "samples"), counted[0])
        counts = values[:, best].astype(np.int64)
    elif timed:
        ns = values[:, timed[0]].astype(np.float64) * NS_PER_UNIT[types[timed[0]].unit]
        counts = np.rint(ns / (period_us * 1000.0)).astype(np.int64)
    else:
        names = ", ".join(f"{t.type}/{t.unit}" for t in types)
        raise ValueError(f"the sample values hold neither a count nor a time ({names})")
    if counts.size and counts.min() < 0:
        raise ValueError("negative sample counts (a difference profile?) cannot be written")
    return counts


def _variant(profile: Profile, frames: np.ndarray, facts: GperftoolsFacts | None) -> str:
    """``cpp`` when a sampled frame has an address; for a profile without samples, the
    variant it was read as (else ``cpp``)."""
    address = profile.frames.address
    if not frames.size:
        return "java" if facts and facts.layout.variant == spec.Variant.JAVA else "cpp"
    return "cpp" if address is not None and address[frames].any() else "java"


# --- the C++ variant ----------------------------------------------------------------------------


def _cpp_records(profile, counts, offsets, frames, guard_frames):
    """Counts, offsets and pcs of the records: return addresses + 1; a sample that would
    read as the trailer (count 0, the one pc 0) is left out, as it counts nothing; the
    guard pcs where needed."""
    address = profile.frames.address
    if address is None:
        raise ValueError("the C++ variant needs frame addresses, and this profile has none "
                         "(variant='java' writes the frames' names)")
    pcs = adjust_return_addresses(offsets, address[frames].astype(np.uint64), +1)
    lengths = np.diff(offsets)
    leaf = np.zeros(lengths.size, np.uint64)
    leaf[lengths > 0] = pcs[offsets[:-1][lengths > 0]]
    keep = ~((counts == 0) & (lengths == 1) & (leaf == 0))
    if not keep.all():
        pcs = pcs[decode_ragged_ranges(offsets[:-1][keep], lengths[keep])]
        counts, lengths = counts[keep], lengths[keep]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if guard_frames == "auto":
        _, located = first_appearance(adjust_return_addresses(offsets, pcs, -1))
        guard_frames = bool(signal_frame_cuts(offsets, located)[0].any())
    if guard_frames:
        offsets, pcs = _with_guards(offsets, pcs)
    return counts, offsets, pcs


def _with_guards(offsets, pcs):
    """Every non-empty record with :data:`GUARD_PCS` right after its leaf."""
    lengths = np.diff(offsets)
    rows = np.flatnonzero(lengths > 0)
    grown = lengths.copy()
    grown[rows] += len(GUARD_PCS)
    new_offsets = np.concatenate([[0], np.cumsum(grown)]).astype(np.int64)
    out = np.empty(int(new_offsets[-1]), np.uint64)
    out[new_offsets[rows]] = pcs[offsets[rows]]
    for k, guard in enumerate(GUARD_PCS):
        out[new_offsets[rows] + 1 + k] = guard
    rest = lengths[rows] - 1
    out[decode_ragged_ranges(new_offsets[rows] + 1 + len(GUARD_PCS), rest)] = \
        pcs[decode_ragged_ranges(offsets[rows] + 1, rest)]
    return new_offsets, out


def _map_text(profile: Profile, facts: GperftoolsFacts | None) -> bytes:
    """The file's own text when the profile's mappings are still the ones it gave, else a
    /proc/self/maps line per mapping (the brief form when it has a hex build id)."""
    m, raw = profile.mappings, profile.strings.raw
    rows = tuple((int(m.start[j]), int(m.limit[j]), int(m.offset[j]), raw(int(m.filename[j])),
                  raw(int(m.build_id[j]))) for j in range(len(m.start)))
    if facts is not None and facts.layout.variant == spec.Variant.CPP and rows == facts.mappings:
        return facts.text
    lines = []
    for start, limit, offset, file, build_id in rows:
        if (start, limit, offset, file, build_id) == FAKE_MAPPING:
            continue  # pprof adds it again for the addresses no mapping holds
        file = _one_line(file)
        if file and build_id and set(build_id) <= _HEX_DIGITS and not file.split()[1:]:
            lines.append(b"%08x-%08x r-xp %s (@%x) %s\n" % (start, limit, file, offset,
                                                          build_id))
        else:
            lines.append(b"%08x-%08x r-xp %08x 00:00 0 %s\n" % (start, limit, offset, file))
    return b"".join(lines)


# --- the Java variant ---------------------------------------------------------------------------


def _java_records(profile: Profile, frames: np.ndarray, facts: GperftoolsFacts | None):
    """The pcs and the symbol lines: frame row ``i`` is pc ``i + 1``, unless the profile was
    read from a Java-variant file and has its frame table still, whose own pcs are kept
    (and its text too, when it still names every frame as the profile does)."""
    own = facts.java_pcs if facts is not None else None
    if own is None or len(own) != len(profile.frames):
        pc_of_row = np.arange(1, len(profile.frames) + 1, dtype=np.uint64)
        return pc_of_row[frames], b"".join(_java_lines(profile, np.unique(frames), pc_of_row))
    pc_of_row = np.array(own, np.uint64)
    lines = list(_java_lines(profile, np.unique(frames), pc_of_row))
    if _names_of(facts.text, own) == _names_of(b"".join(lines), own):
        return pc_of_row[frames], facts.text
    return pc_of_row[frames], b"".join(lines)


def _names_of(text: bytes, pcs) -> dict:
    return {pc: (s.function, s.file, s.line) for pc, s in parse_symbols(text, 0, set(pcs)).items()}


def _java_lines(profile: Profile, rows: np.ndarray, pc_of_row: np.ndarray):
    frames, raw = profile.frames, profile.strings.raw
    for row in rows.tolist():
        function = _one_line(raw(int(frames.funcname[row]))).strip()
        if not function:
            continue  # pprof would take "(file:line)" for the name: leave it unnamed
        file = _one_line(raw(int(frames.filename[row]))).strip()
        yield symbol_line(int(pc_of_row[row]), function, file, int(frames.lineno[row]))


def _one_line(text: bytes) -> bytes:
    return text.replace(b"\r", b" ").replace(b"\n", b" ")


write = whole_file_writer(build)
