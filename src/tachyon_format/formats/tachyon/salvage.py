"""``read(source, strict=False)``: what can be recovered from a broken Tachyon file, and a list
of what was lost (docs/validation.md#salvage).

A file that reads normally is returned as ``read`` returns it. Otherwise the parts are taken
one by one, each as far as it goes:

* the header: as written, or, for the all-zero placeholder that CPython's writer puts first and
  only overwrites in ``finalize()`` (a profiler killed before it finished), none: the byte
  order is the one under which the records decode further, threads are not limited, the
  clocks start at 0 (so timestamps count from the profiler's start), and the region is the
  rest of the file, zstd if it starts with zstd's magic;
* the sample region: every whole record up to the first that is cut short or broken (a zstd
  region as far as it decompresses), decoded by the usual decoder with no limit on threads or
  frame indices;
* the string and frame tables: the entries that parse (:mod:`.tables`), their counts
  from the footer when its file size is right, else as many as fit before the next part;
  frames the samples use but the table lacks are named ``<frame N>`` in ``<unknown>``;
* a damaged statistics block is left out.

The limits of strict reading hold here too, checked before the memory is taken
(docs/format/limits.md): a zstd region that decompresses to more than *max_region_size*
bytes is refused with strict reading's :class:`FormatError`, and more than *max_samples*
sample rows (or record rows) with its :class:`~tachyon_format.errors.LimitError`. A limit is
the reader's, not damage in the file: nothing is salvaged past it, the error says which
keyword raises it.

The problems (:class:`~tachyon_format.Problem`) go to ``profile.extras["salvage"]``: the first
one is why a strict read fails, the rest say what was lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from tachyon_format.errors import FormatError, LimitError
from tachyon_format.model import Frames, Profile, Samples, Stacks, Strings, Threads
from tachyon_format.problems import Problem
from tachyon_format.schema import tachyon_values as spec
from tachyon_format.schema.leb128 import U32_MAX

from ..sources import Source, read_bytes
from . import zstd
from .checks import header_field
from .facts import EXTRAS_KEY, Records, TachyonFacts
from .file import KILLED, walk
from .reader import MAX_SAMPLES, meta_of
from .reader import read as strict_read
from .region.columns import GrowingColumns
from .region.counting import SampleCounts
from .region.decoder import SampleDecoder
from .settings import MAX_DECOMPRESSED_SIZE
from .stats import KEYS as STATS_KEYS
from .tables import read_frames_until_problem, read_strings_until_problem

SALVAGE_KEY = "salvage"
"""``profile.extras[SALVAGE_KEY]``: the list of problems, ``[]`` for a file read whole."""
UNKNOWN_FILE = "<unknown>"
OVER_CAP = "Decompressed data exceeds maximum size"
"""CPython's message (and strict reading's) for a zstd region beyond the size cap."""
MAGIC = header_field("magic")
SAMPLE_COUNT = header_field("sample_count")


def read(source: Source, *, aggregate: bool = False, threads: bool | None = None,
         chunk_size: int = 8 << 20, progress=None, max_samples: int = MAX_SAMPLES,
         max_region_size: int = MAX_DECOMPRESSED_SIZE) -> Profile:
    """Everything readable in *source*, with ``extras["salvage"]`` listing what was lost
    (``[]`` when the file reads whole). Raises :class:`FormatError` only when nothing at all
    can be recovered (not a Tachyon file, too short for a header), or at a limit of strict
    reading (*max_samples*, *max_region_size*: see the module docs)."""
    data = read_bytes(source)
    limits = Limits(max_samples, max_region_size)
    try:
        profile = strict_read(data, aggregate=aggregate, threads=threads, chunk_size=chunk_size,
                              progress=progress, max_samples=max_samples,
                              max_region_size=max_region_size)
    except LimitError:
        raise
    except FormatError as exc:
        if exc.message == OVER_CAP:
            raise
        first = Problem.from_error(exc)
        if data[:spec.HEADER_SIZE] == bytes(spec.HEADER_SIZE):
            offset, path = MAGIC
            first = Problem("unreadable", f"{exc.message}: {KILLED}", offset=offset,
                            field=path)
    else:
        profile.extras[SALVAGE_KEY] = []
        return profile
    recovered = recover(data, aggregate=aggregate, threads=threads, limits=limits)
    if recovered is None:
        raise FormatError(f"nothing can be recovered: {first.message}", offset=first.offset,
                          path=first.field, record=first.record, region=first.region,
                          region_start=first.region_start, compressed=first.compressed)
    recovered.problems.insert(0, first)
    return recovered.profile()


def killed_summary(data) -> list[Problem]:
    """For ``validate`` of a file with the placeholder header: what salvage recovers (nothing
    said when a limit stops it)."""
    try:
        recovered = recover(bytes(data), aggregate=True, threads=False, limits=Limits())
    except FormatError:
        return []
    if recovered is None:
        return []
    threads = len(recovered.decoder.threads[0])
    return [Problem("note", f"read(..., strict=False) recovers {recovered.samples} samples of "
                    f"{threads} thread{'' if threads == 1 else 's'} from "
                    f"{len(recovered.records.offset)} whole records (frame ids only: the "
                    "names were never written)")]


class Limits(NamedTuple):
    """Strict reading's limits, that salvage applies as well."""

    max_samples: int = MAX_SAMPLES
    max_region_size: int = MAX_DECOMPRESSED_SIZE

    def rows_error(self, what: str) -> LimitError:
        return LimitError(
            f"The region holds more than {self.max_samples} {what}, more than read() takes at"
            f" once: pass a larger max_samples (now {self.max_samples}) to salvage them all",
            limit="max_samples", value=self.max_samples, region=True)


@dataclass
class Recovered:
    """What :func:`recover` decoded, and what was lost."""

    decoder: SampleDecoder
    samples_columns: dict[str, np.ndarray]
    records: Records
    strings: Strings
    frames: Frames
    info: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)

    @property
    def samples(self) -> int:
        columns = self.samples_columns
        return int(columns["values"].sum()) if "values" in columns else len(columns["stack"])

    def profile(self) -> Profile:
        strings, frames, stack_frame = _named_frames(self.strings, self.frames,
                                                     self.decoder.stack_frame, self.problems)
        interpreter_id, thread_id = self.decoder.threads
        self.info["sample_count"] = self.samples
        self.info["thread_count"] = len(thread_id)
        return Profile(
            strings=strings, frames=frames,
            stacks=Stacks(frame=stack_frame, parent=self.decoder.stack_parent),
            threads=Threads(interpreter_id=interpreter_id, thread_id=thread_id),
            samples=Samples(**self.samples_columns), meta=meta_of(self.info),
            extras={EXTRAS_KEY: TachyonFacts(info=self.info, records=self.records),
                    SALVAGE_KEY: self.problems})


def recover(data: bytes, *, aggregate: bool, threads: bool | None,
            limits: Limits) -> Recovered | None:
    """The readable parts of the file *data*; None when it is no Tachyon file at all.
    Raises strict reading's errors at *limits*."""
    plan = walk(data, "salvage")
    size = len(data)
    problems: list[Problem] = []
    if plan.killed:
        best = None
        for order in ("<", ">"):  # the writer's byte order was never written: try both
            got = _decode(data, spec.HEADER_SIZE, size, order=order, start_time_us=0,
                          compressed=data[64:68] == zstd.ZSTD_MAGIC, cut=True,
                          aggregate=aggregate, threads=threads, limits=limits)
            if best is None or got[0].total_samples > best[0].total_samples:
                best = got
        assert best is not None
        decoder, samples, records, lost = best
        problems += lost
        problems.append(Problem("note", "names are missing: the string and frame tables were "
                                "never written, so frames carry only their ids (shown as "
                                f"'<frame N>' in '{UNKNOWN_FILE}')"))
        problems.append(Problem("note", "timestamps count from the start of profiling: the "
                                "header's start time and sampling interval were never written"))
        info = dict.fromkeys(("version", "python_version", "start_time_us", "string_count",
                              "frame_count", "compression_type", *STATS_KEYS, "mode",
                              "capture_features"))
        info["sample_interval_us"] = 0
        return Recovered(decoder, samples, records, Strings.from_raw([]), _no_frames(), info,
                         problems)
    header, footer = plan.header, plan.footer
    if header is None or footer is None or plan.legacy:
        return None
    strings_at, frames_at = header.string_table_offset, header.frame_table_offset
    region_end = strings_at if spec.HEADER_SIZE <= strings_at <= size else size
    cut = strings_at > size
    if cut:
        problems.append(Problem("note", "the file ends inside the sample region: the string "
                                "and frame tables, statistics and footer are lost",
                                offset=size, expected=f"{header.frame_table_offset} bytes or "
                                "more", found=f"{size}"))
    decoder, samples, records, lost = _decode(
        data, spec.HEADER_SIZE, region_end, order=plan.order,
        start_time_us=header.start_time_us, compressed=plan.compressed, cut=cut,
        aggregate=aggregate, threads=threads, limits=limits)
    problems += lost
    strings, frames = Strings.from_raw([]), _no_frames()
    if not cut and region_end <= frames_at:
        footer_ok = footer.file_size == size
        if not footer_ok:
            problems.append(Problem("note", "the footer is damaged or missing (its file size is "
                                    "wrong): the tables are read as far as their entries parse",
                                    offset=size - spec.FOOTER_SIZE, field="footer"))
        strings, scanned = read_strings_until_problem(
            data, region_end, footer.string_count if footer_ok else U32_MAX,
            end=min(frames_at, size))
        tables = [scanned]
        if frames_at <= size:
            frames, frames_scanned = read_frames_until_problem(
                data, frames_at, footer.frame_count if footer_ok else U32_MAX)
            tables.append(frames_scanned)
        for table in tables:
            if table.problem is not None:
                problems.append(Problem("note", f"entries from here on are lost: "
                                        f"{table.problem.message}", offset=table.problem.offset,
                                        field=table.problem.field))
    if plan.stats is None and _has_stats_block(data):
        problems.append(Problem("note", "the statistics block is damaged and was left out "
                                "(duration, sample rate, error rate and missed samples unknown)",
                                field="stats"))
    info = {
        "version": header.format_version,
        "python_version": (header.py_major, header.py_minor, header.py_micro),
        "start_time_us": header.start_time_us,
        "sample_interval_us": header.sample_interval_us,
        "string_count": len(strings), "frame_count": len(frames),
        "compression_type": header.compression - (1 << 32) if header.compression >= 1 << 31
        else header.compression,
        **(plan.stats.info() if plan.stats else dict.fromkeys(STATS_KEYS)),
        "mode": None if not 1 <= header.profiling_config.mode_plus_one <= 5
        else header.profiling_config.mode_plus_one - 1,
        "capture_features": header.profiling_config.capture_features
        if header.profiling_config.features_known else None,
    }
    recovered = Recovered(decoder, samples, records, strings, frames, info, problems)
    if not cut and not lost and recovered.samples != header.sample_count:
        problems.append(Problem("note", "the header's sample count differs from the samples "
                                "the records hold (all of them recovered)",
                                offset=SAMPLE_COUNT[0], field=SAMPLE_COUNT[1],
                                expected=str(header.sample_count), found=str(recovered.samples)))
    return recovered


def _decode(data: bytes, start: int, end: int, *, order: Literal["<", ">"], start_time_us: int,
            compressed: bool, cut: bool, aggregate: bool, threads: bool | None,
            limits: Limits):
    """Decode the region ``data[start:end]``: every whole record up to the first problem.
    Returns the decoder, the sample and record columns, and the problems that lost data.

    The region's size, when it is whole, goes to the decoder as in strict reading, so that
    a REPEAT counting more entries than the region holds is refused at once (a cut region's
    last REPEAT keeps the entries there are)."""
    raw = memoryview(data)[start:end]
    region_size = None if cut else raw.nbytes
    if compressed:
        region_size = _decompressed_size(raw, start, limits.max_region_size)
    decoder = SampleDecoder(order=order, start_time_us=start_time_us, thread_count=U32_MAX,
                            frame_count=U32_MAX + 1, threads=threads, region_size=region_size)
    rows = {"limit": limits.max_samples}
    samples = SampleCounts() if aggregate else GrowingColumns.samples(
        1 << 16, **rows, on_limit=lambda: limits.rows_error("samples"))
    records = GrowingColumns.records(**rows, on_limit=lambda: limits.rows_error("records"))
    lost: list[Problem] = []
    fed = 0
    chunks = (zstd.iter_decompress(raw, file_offset=start, limit=limits.max_region_size)
              if compressed else iter([raw]))
    try:
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except FormatError as exc:
                lost.append(Problem("note", f"the zstd data ends or breaks here ({exc.message}):"
                                    f" {fed} bytes of the sample region decompressed, the rest"
                                    " is lost", offset=exc.offset, field=exc.path))
                cut = True
                break
            decoder.decode_into(chunk, final=False, samples=samples, records=records)
            fed += len(chunk)
        decoder.decode_into(b"", final=True, samples=samples, records=records)
    except LimitError:
        raise
    except FormatError as exc:
        at = exc.offset if exc.offset is not None else fed
        what = "a record cut short" if cut else f"a broken record ({exc.message})"
        if records.size and int(records.view("offset")[-1]) == at:
            # a REPEAT longer than a chunk, committed as its entries came: those are kept
            loss = "the entries before the problem are kept, the rest of the record is lost"
        else:
            loss = f"the {fed - at} bytes from there on are lost"
        lost.append(Problem("note", f"the sample region holds {what}: {loss}", offset=at,
                            record=exc.record, region=True, region_start=start,
                            compressed=compressed))
    return decoder, samples.finish(), Records(**records.finish()), lost


def _decompressed_size(raw: memoryview, start: int, limit: int) -> int | None:
    """The size of the zstd region *raw* (at file offset *start*), None when it breaks
    before its end; strict reading's error when it exceeds *limit*, found by decompressing
    it once without keeping it, before anything is decoded."""
    try:
        return zstd.decompressed_size(raw, limit=limit, file_offset=start)[0]
    except FormatError as exc:
        if exc.message == OVER_CAP:
            raise
        return None


def _has_stats_block(data: bytes) -> bool:
    at = len(data) - spec.FOOTER_SIZE - 16
    return at >= 0 and data[at:at + 8] == spec.STATS_MAGIC


def _no_frames() -> Frames:
    empty = np.zeros(0, np.int32)
    return Frames(np.zeros(0, np.uint32), np.zeros(0, np.uint32), empty, empty, empty, empty,
                  np.zeros(0, np.int16))


def _named_frames(strings: Strings, frames: Frames, stack_frame: np.ndarray,
                  problems: list[Problem]) -> tuple[Strings, Frames, np.ndarray]:
    """The tables with a placeholder for every frame the stacks use but the frame table
    lacks, and for every string a frame names but the string table lacks; the stacks'
    frame ids renumbered to match."""
    known = len(frames)
    missing = np.unique(stack_frame[stack_frame >= known]).astype(np.int64)
    texts = strings.raws()
    names_missing = 0
    filename = frames.filename.astype(np.int64)
    funcname = frames.funcname.astype(np.int64)
    for column in (filename, funcname):
        absent = column >= len(texts)
        if absent.any():
            names_missing += int(absent.sum())
            column[absent] = len(texts)
            texts.append(b"<string missing>")
    unknown = len(texts)
    texts.append(UNKNOWN_FILE.encode())
    texts.extend(f"<frame {frame}>".encode() for frame in missing)
    if missing.size and known:
        problems.append(Problem("note", f"{missing.size} frames the samples use are not in the "
                                "frame table: named '<frame N>' by their ids"))
    if names_missing:
        problems.append(Problem("note", f"{names_missing} frame names are not in the string "
                                "table: shown as '<string missing>'"))
    n = missing.size
    fill = np.full(n, -1, np.int32)
    out = Frames(
        np.concatenate([filename, np.full(n, unknown)]).astype(np.uint32),
        np.concatenate([funcname, unknown + 1 + np.arange(n)]).astype(np.uint32),
        np.concatenate([frames.lineno, fill]), np.concatenate([frames.end_lineno, fill]),
        np.concatenate([frames.column, fill]), np.concatenate([frames.end_column, fill]),
        np.concatenate([frames.opcode, fill.astype(np.int16)]))
    ids = stack_frame.astype(np.int64)
    renumbered = np.where(ids < known, ids, known + np.searchsorted(missing, ids))
    return Strings.from_raw(texts), out, renumbered.astype(np.int32)
