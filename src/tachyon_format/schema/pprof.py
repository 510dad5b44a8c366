"""pprof: Google's ``perftools.profiles.Profile`` protocol buffer (``profile.proto``).

Written by Go's ``runtime/pprof``, read by ``go tool pprof``, Grafana Pyroscope, Parca,
Datadog and Cloud Profiler. Follows ``proto/profile.proto`` of ``google/pprof`` at commit
``b9395ee17fa0d0013c3fd96ac9482318422ac337`` (``UPSTREAM_COMMIT``); the reference
implementation is that repository's Go package ``profile`` (``encode.go``: decoding and the
id/string-table conventions; ``profile.go``: ``CheckValid``).

A file is one serialized ``Profile`` message (proto3: every scalar repeated field is packed),
usually gzip-compressed (``.pb.gz``); some tools write it raw, and zstd is proposed
(golang/go#74022) and shipped by Datadog. Protobuf has no byte order issue: integers are
``ULEB128`` varints (``int64`` fields as the two's complement, ten bytes when negative),
submessages and strings are length-delimited.

The messages below are declared once, in construct, with a doc on every field
(``pprof_wire``: a ``ProtoMessage`` of ``ProtoField`` declarations, each a number, a type and if it
is repeated; ``FIELD`` is one field on the wire); they parse and build a message as
protobuf does, the tests' scalar oracle. Their plain twin ``pprof_plain`` (``Message`` and
``Field`` records, generated from these declarations) is what the reader and the writer
(``formats/pprof/``) follow, field numbers and wire types included, with the wire kernels
and without loading construct or a protobuf runtime; ``protobuf_plain.message_classes()``
turns it into protobuf message classes (no ``protoc``, no generated ``_pb2`` module) for
other tools and for the tests, which hold the decoder to protobuf's own parse.

Conventions (``encode.go``): ``string_table[0]`` is ``""``; every other string field is an
index into the table; ``id`` fields of mappings, locations and functions are nonzero and
unique, and 0 in a reference means "none".
"""

from __future__ import annotations

from .pprof_wire import ProtoField, ProtoMessage, ProtoScalar

UPSTREAM_COMMIT = "b9395ee17fa0d0013c3fd96ac9482318422ac337"
"""The google/pprof commit whose ``proto/profile.proto`` these declarations follow."""
PACKAGE = "perftools.profiles"
"""The protobuf package of the messages (full names ``perftools.profiles.Profile``, ...)."""
PROTO_FILE = "profile.proto"
"""File name of the runtime descriptor (the upstream file's name)."""

GZIP_MAGIC = b"\x1f\x8b"
"""First bytes of gzip data (RFC 1952): how pprof's own reader tells a compressed file."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""First bytes of a zstd frame (RFC 8878)."""

INT64 = ProtoScalar("int64")
"""A VARINT read as a two's complement int64 (ten bytes when negative)."""
UINT64 = ProtoScalar("uint64")
"""A VARINT read as a uint64."""
BOOL = ProtoScalar("bool")
"""A VARINT, true when nonzero."""
STRING = ProtoScalar("string")
"""A LEN field: UTF-8 bytes (pprof's decoder keeps invalid UTF-8 as it is)."""

# Declared callees first, so that a field names its message's declaration; MESSAGES lists
# them in the upstream file's order.

VALUE_TYPE = "The kind and unit of a measured value" * ProtoMessage(
    "ValueType",
    "type" / ProtoField(1, INT64) * "String index of the kind, e.g. \"cpu\", \"samples\", "
    "\"alloc_space\"",
    "unit" / ProtoField(2, INT64) * "String index of the unit, e.g. \"nanoseconds\", "
    "\"count\", \"bytes\"",
)

LABEL = "One annotation of a sample: a string or a number under a key" * ProtoMessage(
    "Label",
    "key" / ProtoField(1, INT64) * "String index of the key, e.g. \"thread id\"",
    "str" / ProtoField(2, INT64) * "String index of the value; at most one of `str` and "
    "`num` is set",
    "num" / ProtoField(3, INT64) * "Numeric value",
    "num_unit" / ProtoField(4, INT64) * "String index of the unit of `num` (e.g. "
    "\"nanoseconds\"); 0 = none",
)

LINE = "One source line of a Location" * ProtoMessage(
    "Line",
    "function_id" / ProtoField(1, UINT64) * "Id of the Function; 0 = none",
    "line" / ProtoField(2, INT64) * "Line number in the source file; 0 = unknown",
    "column" / ProtoField(3, INT64) * "Column in the source line; 0 = unknown",
)

FUNCTION = "A function of the program" * ProtoMessage(
    "Function",
    "id" / ProtoField(1, UINT64) * "Unique nonzero id, referred to by `Line.function_id`",
    "name" / ProtoField(2, INT64) * "String index of the name in human-readable form (e.g. "
    "demangled)",
    "system_name" / ProtoField(3, INT64) * "String index of the name as the system knows it "
    "(e.g. a mangled C++ symbol); 0 = none",
    "filename" / ProtoField(4, INT64) * "String index of the source file's path",
    "start_line" / ProtoField(5, INT64) * "Line number where the function starts; "
    "0 = unknown",
)

LOCATION = ("A unique place in the program, usually an instruction address with the source "
            "lines it stands for") * ProtoMessage(
    "Location",
    "id" / ProtoField(1, UINT64) * "Unique nonzero id, referred to by `Sample.location_id`",
    "mapping_id" / ProtoField(2, UINT64) * "Id of the Mapping holding `address`; 0 = none",
    "address" / ProtoField(3, UINT64) * "Instruction address in the profiled process (for a "
    "caller: the return address minus one, as pprof writes); 0 = none",
    "line" / ProtoField(4, LINE, repeated=True) * "Source lines of this address: several "
    "when functions were inlined, the last being the caller into which the others were "
    "inlined",
    "is_folded" / ProtoField(5, BOOL) * "Identical code folded into one address by the "
    "linker: the function of the address is a guess",
)

MAPPING = "An address range of the program mapped from a file" * ProtoMessage(
    "Mapping",
    "id" / ProtoField(1, UINT64) * "Unique nonzero id, referred to by `Location.mapping_id`",
    "memory_start" / ProtoField(2, UINT64) * "First address of the mapping",
    "memory_limit" / ProtoField(3, UINT64) * "One past the last address of the mapping",
    "file_offset" / ProtoField(4, UINT64) * "Offset in the file of `memory_start`",
    "filename" / ProtoField(5, INT64) * "String index of the file's path (or a kernel/vdso "
    "name)",
    "build_id" / ProtoField(6, INT64) * "String index of the file's build id (ELF: hex of "
    "the GNU build id note)",
    "has_functions" / ProtoField(7, BOOL) * "Locations in this mapping have function names",
    "has_filenames" / ProtoField(8, BOOL) * "Locations in this mapping have source file "
    "names",
    "has_line_numbers" / ProtoField(9, BOOL) * "Locations in this mapping have line numbers",
    "has_inline_frames" / ProtoField(10, BOOL) * "Locations in this mapping have inlined "
    "frames",
)

SAMPLE = "One measurement: a call stack, its values and labels" * ProtoMessage(
    "Sample",
    "location_id" / ProtoField(1, UINT64, repeated=True) * "Ids of the stack's locations, "
    "innermost (the leaf) first; a Location of several lines stands for several frames",
    "value" / ProtoField(2, INT64, repeated=True) * "One value per `Profile.sample_type`, in "
    "that order",
    "label" / ProtoField(3, LABEL, repeated=True) * "Key/value annotations (thread, span, "
    "timestamp...); a key may repeat only with different units",
)

PROFILE = "The whole profile: tables, samples and profile-level facts" * ProtoMessage(
    "Profile",
    "sample_type" / ProtoField(1, VALUE_TYPE, repeated=True) * "What each entry of "
    "`Sample.value` measures, in order; all samples have exactly this many values",
    "sample" / ProtoField(2, SAMPLE, repeated=True) * "The measurements, each a call stack "
    "with values and labels",
    "mapping" / ProtoField(3, MAPPING, repeated=True) * "Memory mappings of the profiled "
    "program; mapping[0] is the main binary when present",
    "location" / ProtoField(4, LOCATION, repeated=True) * "Unique code locations (addresses "
    "and their source lines); samples refer to them by id",
    "function" / ProtoField(5, FUNCTION, repeated=True) * "Functions, referred to by "
    "`Line.function_id`",
    "string_table" / ProtoField(6, STRING, repeated=True) * "Every string of the profile; "
    "entry 0 must be \"\", other fields hold indices into it",
    "drop_frames" / ProtoField(7, INT64) * "String index: frames whose function name fully "
    "matches this regexp are dropped from samples, with their callers' parts below them; "
    "0 = none",
    "keep_frames" / ProtoField(8, INT64) * "String index: a regexp of frames kept even if "
    "they match `drop_frames`; 0 = none",
    "time_nanos" / ProtoField(9, INT64) * "Time of collection, UTC nanoseconds since the Unix "
    "epoch; 0 = unknown",
    "duration_nanos" / ProtoField(10, INT64) * "Length of the profile in nanoseconds; "
    "0 = unknown",
    "period_type" / ProtoField(11, VALUE_TYPE) * "What `period` counts (e.g. "
    "cpu/nanoseconds)",
    "period" / ProtoField(12, INT64) * "The interval between samples, in `period_type` units",
    "comment" / ProtoField(13, INT64, repeated=True) * "String indices of free-form comments "
    "shown by pprof",
    "default_sample_type" / ProtoField(14, INT64) * "String index of the `sample_type.type` "
    "viewers show by default; 0 = the last sample type",
    "doc_url" / ProtoField(15, INT64) * "String index of an absolute URL documenting this "
    "profile type; 0 = none",
)

MESSAGES = (PROFILE, VALUE_TYPE, SAMPLE, LABEL, MAPPING, LOCATION, LINE, FUNCTION)
"""Every message of ``profile.proto``, in the upstream file's order (the profile first)."""
