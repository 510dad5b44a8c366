"""Tachyon: the binary profile format of CPython 3.15's sampling profiler.

Written by ``python -m profiling.sampling run --binary`` (``_remote_debugging.BinaryWriter``)
and read by ``_remote_debugging.BinaryReader``. This module follows the format exactly as
CPython **3.15.2** writes it (format_version 1, "layout L3"); the older layouts that shipped
under the same version number during the 3.15 pre-releases are declared at the end.

Reference implementation: ``python/cpython`` ``Modules/_remote_debugging/binary_io_writer.c``
and ``binary_io_reader.c`` (3.15.2). The project's verified description is the spec page
``docs/format/`` generated from this module.

Byte order: every fixed-width field is in the **writer's native byte order**; the magic
``0x54414348`` reads ``HCAT`` on disk from a little-endian writer and ``TACH`` from a
big-endian one. Varints and single bytes have no byte order. Each layout is therefore a
factory of the byte order, ``header("<")`` / ``header(">")``, declared once.

File map::

    0                     header, 64 bytes
    64                    sample region: records, raw or one zstd frame
    ofs_string_table      string table (never compressed)
    ofs_frame_table       frame table (never compressed)
    file_size - 32 - S    optional TACHSTAT block, S = 56 (or 32, legacy)
    file_size - 32        footer, 32 bytes
"""

from __future__ import annotations

import functools

import construct as cs
from construct import this

# what the status byte's bits mean belongs to the model (every format with thread states
# shares it); imported here for the spec page of the sample region
from tachyon_format.model.thread_status import ThreadStatus  # noqa: F401

from .primitives import (
    ULEB128,
    ULEB128_U32,
    ByteOrder,
    Ints,
    Sentinel,
    ZigZagLEB128,
    bits_of,
)

# the constants and enumerations (construct-free, for the fast readers): declared there
from .tachyon_values import (  # noqa: F401 (spec.X for every user of the schema)
    FOOTER_SIZE,
    FORMAT_VERSION,
    HEADER_SIZE,
    LEGACY_STATS_SIZE,
    LOCATION_NOT_AVAILABLE,
    MAGIC,
    MAX_REAL_OPCODE,
    MAX_STACK_DEPTH,
    MIN_FRAME_SIZE,
    MIN_LEGACY_FRAME_SIZE,
    MIN_REPEAT_ENTRY_SIZE,
    MIN_STRING_SIZE,
    OPCODE_NONE,
    RECORD_PREFIX_SIZE,
    STATS_MAGIC,
    STATS_SIZE,
    CaptureFeature,
    Compression,
    Encoding,
    ProfilingMode,
    byte_order,
)


@functools.cache
def profiling_config(order: ByteOrder) -> cs.Construct:
    return "profiling_config: how the profile was taken (u32, bit 31 first)" * bits_of(
        order,
        cs.BitStruct(
            "reserved" / cs.BitsInteger(23) * "bits 9..31: written 0, ignored by the reader",
            "capture_features" / cs.BitsInteger(5)
            * "bits 4..8: CaptureFeature mask; meaningful only when features_known",
            "features_known" / cs.Flag * "bit 3: set when capture_features >= 0 was given",
            "mode_plus_one" / cs.BitsInteger(3)
            * "bits 0..2: ProfilingMode + 1, 0 = unknown; the reader rejects 6 and 7",
        ),
    )


@functools.cache
def header(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return "File header: 64 bytes at offset 0 (layout L3, CPython 3.15.2)" * cs.Struct(
        "magic" / cs.Const(MAGIC, i.u32)
        * "0x54414348: b'HCAT' on disk from LE writers, b'TACH' from BE",
        "format_version" / i.u32 * "1; a larger value is refused, quoting the python version",
        "py_major" / cs.Int8ub * "PY_MAJOR_VERSION of the writer (informational)",
        "py_minor" / cs.Int8ub * "PY_MINOR_VERSION of the writer",
        "py_micro" / cs.Int8ub * "PY_MICRO_VERSION of the writer",
        "reserved" / cs.Int8ub * "written 0, ignored",
        "start_time_us" / i.u64 * "every thread's clock starts here (BinaryWriter start_time_us)",
        "sample_interval_us" / i.u64 * "the requested sampling interval",
        "sample_count" / i.u64 * "thread-samples in the file; replay must decode exactly this many",
        "thread_count" / i.u32
        * "distinct (thread_id, interpreter_id) pairs; an upper bound for the reader",
        "string_table_offset" / i.u64
        * "absolute offset of the string table; the sample region ends here",
        "frame_table_offset" / i.u64 * "absolute offset of the frame table",
        "compression" / i.u32 * "1 = zstd sample region; any other value (0 written) = raw",
        "profiling_config" / profiling_config(order),
    )


@functools.cache
def footer(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return "Footer: the last 32 bytes of the file" * cs.Struct(
        "string_count" / i.u32 * "entries in the string table",
        "frame_count" / i.u32 * "entries in the frame table",
        "file_size" / i.u64 * "total file length; written, never checked by the reader",
        "checksum" / cs.Bytes(16) * "always 16 zero bytes; never checked",
    )


@functools.cache
def stats_trailer(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return "TACHSTAT trailer: the last 16 bytes before the footer, when present" * cs.Struct(
        "magic" / cs.Const(STATS_MAGIC) * "ASCII, never byte-swapped",
        "version" / i.u32 * "1; a block of any other version is ignored",
        "size" / i.u32 * "block size including this trailer: 56, or 32 (legacy); 32..file_size-32",
    )


@functools.cache
def stats(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return (
        "TACHSTAT profile statistics: 56 bytes between the frame table and the footer,"
        " written only when set_stats() was called"
    ) * cs.Struct(
        "duration_sec" / i.f64 * "wall time of the run; finite, >= 0",
        "sample_rate" / i.f64 * "samples per second; finite, >= 0",
        "error_rate" / i.f64 * "percent of failed samples; finite, >= 0; 0.0 when absent",
        "missed_samples" / i.f64 * "percent of missed samples, may be negative; 0.0 when absent",
        "present" / cs.FlagsEnum(i.u32, error_rate=1, missed_samples=2)
        * "which optional values are present; other bits ignored",
        "reserved" / i.u32 * "written 0, ignored",
        "trailer" / stats_trailer(order),
    )


@functools.cache
def legacy_stats(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return "TACHSTAT, legacy 32-byte block: no error_rate or missed_samples" * cs.Struct(
        "duration_sec" / i.f64 * "wall time of the run",
        "sample_rate" / i.f64 * "samples per second",
        "trailer" / stats_trailer(order),
    )


STRING = "String table entry: length-prefixed bytes, no terminator" * cs.Struct(
    "text" / cs.Prefixed(ULEB128_U32, cs.GreedyBytes)
    * "UTF-8 as the writer got it (may be invalid: the profiler reads memory that can change);"
    " CPython's reader decodes it with errors='replace'; embedded NUL allowed",
)

FRAME = "Frame table entry: one deduplicated (location, opcode) of one function" * cs.Struct(
    "filename_idx" / ULEB128_U32 * "index into the string table",
    "funcname_idx" / ULEB128_U32 * "index into the string table",
    "lineno" / ZigZagLEB128 * "first line; -1 = no location (synthetic frames)",
    "end_lineno_delta" / ZigZagLEB128
    * "end_lineno - lineno when neither is -1, else 0; end_lineno = -1 if lineno == -1",
    "column" / ZigZagLEB128 * "first column (col_offset); -1 = unavailable",
    "end_column_delta" / ZigZagLEB128
    * "end_column - column when neither is -1, else 0; may be negative",
    "opcode" / Sentinel(cs.Int8ub, OPCODE_NONE) * "0..254; 255 = None (not captured)",
)


@functools.cache
def record_prefix(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return "Record prefix: 13 bytes before every record body" * cs.Struct(
        "thread_id" / i.u64 * "with interpreter_id, keys the per-thread clock and stack",
        "interpreter_id" / i.u32,
        "encoding" / cs.Enum(cs.Int8ub, Encoding) * "record type; values above 3 are an error",
    )


REPEAT_ENTRY = "One sample of a REPEAT record" * cs.Struct(
    "delta_us" / ULEB128 * "timestamp - previous timestamp of this thread, mod 2**64",
    "status" / cs.Int8ub * "ThreadStatus bits (any u8)",
)

REPEAT = "REPEAT body (encoding 0): samples with the thread's previous stack" * cs.Struct(
    "count" / ULEB128_U32 * "number of entries; at most remaining_bytes // 2",
    "samples" / cs.Array(this.count, REPEAT_ENTRY),
)

FULL = "FULL body (encoding 1): the whole stack, innermost frame first" * cs.Struct(
    "delta_us" / ULEB128 * "timestamp - previous timestamp of this thread, mod 2**64",
    "status" / cs.Int8ub * "ThreadStatus bits",
    "depth" / ULEB128_U32 * "frames in the stack; at most 256",
    "frames" / cs.Array(this.depth, ULEB128_U32) * "frame-table indices",
)

SUFFIX = "SUFFIX body (encoding 2): new innermost frames over the shared outer ones" * cs.Struct(
    "delta_us" / ULEB128 * "timestamp - previous timestamp of this thread, mod 2**64",
    "status" / cs.Int8ub * "ThreadStatus bits",
    "shared" / ULEB128_U32 * "outermost frames kept: stack = new + old[len(old) - shared:];"
    " but with no new frames CPython keeps old[:shared] (never written by its writer)",
    "new" / ULEB128_U32 * "frames added on the inner side",
    "frames" / cs.Array(this.new, ULEB128_U32) * "frame-table indices, innermost first",
)

POP_PUSH = "POP_PUSH body (encoding 3): drop innermost frames, then push new ones" * cs.Struct(
    "delta_us" / ULEB128 * "timestamp - previous timestamp of this thread, mod 2**64",
    "status" / cs.Int8ub * "ThreadStatus bits",
    "pop" / ULEB128_U32 * "innermost frames dropped; more than the depth is clamped",
    "push" / ULEB128_U32 * "frames then added: stack = pushed + old[pop:]",
    "frames" / cs.Array(this.push, ULEB128_U32) * "frame-table indices, innermost first",
)

BODIES = {
    Encoding.REPEAT.name: REPEAT,
    Encoding.FULL.name: FULL,
    Encoding.SUFFIX.name: SUFFIX,
    Encoding.POP_PUSH.name: POP_PUSH,
}

# The Switch key is the Enum's name when interpreted, but its raw value when a compiled
# Struct builds (construct's compiled Enum returns the encoded int), so key by both.
_BODY_CASES = {**BODIES, **{Encoding[name].value: body for name, body in BODIES.items()}}


@functools.cache
def record(order: ByteOrder) -> cs.Construct:
    return "Sample-region record: prefix then the body its encoding selects" * cs.Struct(
        "prefix" / record_prefix(order),
        "body" / cs.Switch(this.prefix.encoding, _BODY_CASES, default=cs.Error)
        * "REPEAT, FULL, SUFFIX or POP_PUSH; any other encoding is an error",
    )


# Older layouts, all labelled format_version 1 (docs/format/layout-history.md#layouts). CPython
# 3.15.2 rejects them; this library's reader tells them apart by their offsets (``open_file``
# in ``tachyon_format.formats.tachyon.file``).


@functools.cache
def legacy_header(order: ByteOrder) -> cs.Construct:
    i = Ints.of(order)
    return (
        "File header of layouts L1/L2 (3.15 pre-releases, before PR #153425): u32 sample"
        " count, fields from offset 32 on moved 4 bytes earlier, no profiling_config"
    ) * cs.Struct(
        "magic" / cs.Const(MAGIC, i.u32) * "as in L3",
        "format_version" / i.u32 * "1, as in L3",
        "py_major" / cs.Int8ub,
        "py_minor" / cs.Int8ub,
        "py_micro" / cs.Int8ub,
        "reserved" / cs.Int8ub,
        "start_time_us" / i.u64,
        "sample_interval_us" / i.u64,
        "sample_count" / i.u32 * "u32 here, u64 in L3",
        "thread_count" / i.u32,
        "string_table_offset" / i.u64,
        "frame_table_offset" / i.u64,
        "compression" / i.u32,
        "reserved_tail" / cs.Bytes(8) * "bytes 56..63, zero",
    )


LEGACY_FRAME = "Frame table entry of layout L1 (PR #142730): lines only, no opcode" * cs.Struct(
    "filename_idx" / ULEB128_U32 * "index into the string table",
    "funcname_idx" / ULEB128_U32 * "index into the string table",
    "lineno" / ZigZagLEB128 * "a missing location was written as 0",
)

FRAME_COMPILED = FRAME.compile()
LEGACY_FRAME_COMPILED = LEGACY_FRAME.compile()
STRING_COMPILED = STRING.compile()
