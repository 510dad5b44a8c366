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

The messages below are declared once, as data (``Message``, ``Field``), with a doc on every
field: the reader and the writer (``formats/pprof/``) decode and encode every field by these
declarations with the wire kernels, field numbers and wire types included, and load no
protobuf runtime. ``pprof_wire.FIELD`` is the wire-level view of one field (construct: the
reference page and the tests' scalar oracle). ``file_descriptor()`` turns the declarations
into a ``FileDescriptorProto`` and ``message_classes()`` into protobuf message classes (no
``protoc``, no generated ``_pb2`` module, any protobuf version from 4.21), for other tools
and for the tests, which hold the decoder to protobuf's own parse.

Conventions (``encode.go``): ``string_table[0]`` is ``""``; every other string field is an
index into the table; ``id`` fields of mappings, locations and functions are nonzero and
unique, and 0 in a reference means "none".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import leb128 as wire  # protobuf's wire types, declared with the LEB128 primitives

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


@dataclass(frozen=True)
class Field:
    """One field of a message: its number, name, protobuf type (a scalar type name or a
    message name), whether it is ``repeated``, and what it means."""

    number: int
    name: str
    type: str
    repeated: bool
    doc: str

    @property
    def label(self) -> str:
        return "repeated" if self.repeated else "singular"


@dataclass(frozen=True)
class Message:
    """One message: its name, what it is, and its fields in declaration order."""

    name: str
    doc: str
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


def _f(number: int, name: str, type_: str, doc: str, *, repeated: bool = False) -> Field:
    return Field(number, name, type_, repeated, doc)


PROFILE = Message("Profile", "The whole profile: tables, samples and profile-level facts", (
    _f(1, "sample_type", "ValueType", "What each entry of `Sample.value` measures, in order; "
       "all samples have exactly this many values", repeated=True),
    _f(2, "sample", "Sample", "The measurements, each a call stack with values and labels",
       repeated=True),
    _f(3, "mapping", "Mapping", "Memory mappings of the profiled program; "
       "mapping[0] is the main binary when present", repeated=True),
    _f(4, "location", "Location", "Unique code locations (addresses and their source lines); "
       "samples refer to them by id", repeated=True),
    _f(5, "function", "Function", "Functions, referred to by `Line.function_id`",
       repeated=True),
    _f(6, "string_table", "string", "Every string of the profile; entry 0 must be \"\", "
       "other fields hold indices into it", repeated=True),
    _f(7, "drop_frames", "int64", "String index: frames whose function name fully matches "
       "this regexp are dropped from samples, with their callers' parts below them; 0 = none"),
    _f(8, "keep_frames", "int64", "String index: a regexp of frames kept even if they match "
       "`drop_frames`; 0 = none"),
    _f(9, "time_nanos", "int64", "Time of collection, UTC nanoseconds since the Unix epoch; "
       "0 = unknown"),
    _f(10, "duration_nanos", "int64", "Length of the profile in nanoseconds; 0 = unknown"),
    _f(11, "period_type", "ValueType", "What `period` counts (e.g. cpu/nanoseconds)"),
    _f(12, "period", "int64", "The interval between samples, in `period_type` units"),
    _f(13, "comment", "int64", "String indices of free-form comments shown by pprof",
       repeated=True),
    _f(14, "default_sample_type", "int64", "String index of the `sample_type.type` viewers "
       "show by default; 0 = the last sample type"),
    _f(15, "doc_url", "int64", "String index of an absolute URL documenting this profile "
       "type; 0 = none"),
))

VALUE_TYPE = Message("ValueType", "The kind and unit of a measured value", (
    _f(1, "type", "int64", "String index of the kind, e.g. \"cpu\", \"samples\", \"alloc_space\""),
    _f(2, "unit", "int64", "String index of the unit, e.g. \"nanoseconds\", \"count\", "
       "\"bytes\""),
))

SAMPLE = Message("Sample", "One measurement: a call stack, its values and labels", (
    _f(1, "location_id", "uint64", "Ids of the stack's locations, innermost (the leaf) first; "
       "a Location of several lines stands for several frames", repeated=True),
    _f(2, "value", "int64", "One value per `Profile.sample_type`, in that order",
       repeated=True),
    _f(3, "label", "Label", "Key/value annotations (thread, span, timestamp...); a key may "
       "repeat only with different units", repeated=True),
))

LABEL = Message("Label", "One annotation of a sample: a string or a number under a key", (
    _f(1, "key", "int64", "String index of the key, e.g. \"thread id\""),
    _f(2, "str", "int64", "String index of the value; at most one of `str` and `num` is set"),
    _f(3, "num", "int64", "Numeric value"),
    _f(4, "num_unit", "int64", "String index of the unit of `num` (e.g. \"nanoseconds\"); "
       "0 = none"),
))

MAPPING = Message("Mapping", "An address range of the program mapped from a file", (
    _f(1, "id", "uint64", "Unique nonzero id, referred to by `Location.mapping_id`"),
    _f(2, "memory_start", "uint64", "First address of the mapping"),
    _f(3, "memory_limit", "uint64", "One past the last address of the mapping"),
    _f(4, "file_offset", "uint64", "Offset in the file of `memory_start`"),
    _f(5, "filename", "int64", "String index of the file's path (or a kernel/vdso name)"),
    _f(6, "build_id", "int64", "String index of the file's build id (ELF: hex of the GNU "
       "build id note)"),
    _f(7, "has_functions", "bool", "Locations in this mapping have function names"),
    _f(8, "has_filenames", "bool", "Locations in this mapping have source file names"),
    _f(9, "has_line_numbers", "bool", "Locations in this mapping have line numbers"),
    _f(10, "has_inline_frames", "bool", "Locations in this mapping have inlined frames"),
))

LOCATION = Message("Location", "A unique place in the program, usually an instruction "
                   "address with the source lines it stands for", (
    _f(1, "id", "uint64", "Unique nonzero id, referred to by `Sample.location_id`"),
    _f(2, "mapping_id", "uint64", "Id of the Mapping holding `address`; 0 = none"),
    _f(3, "address", "uint64", "Instruction address in the profiled process (for a caller: "
       "the return address minus one, as pprof writes); 0 = none"),
    _f(4, "line", "Line", "Source lines of this address: several when functions were "
       "inlined, the last being the caller into which the others were inlined",
       repeated=True),
    _f(5, "is_folded", "bool", "Identical code folded into one address by the linker: the "
       "function of the address is a guess"),
))

LINE = Message("Line", "One source line of a Location", (
    _f(1, "function_id", "uint64", "Id of the Function; 0 = none"),
    _f(2, "line", "int64", "Line number in the source file; 0 = unknown"),
    _f(3, "column", "int64", "Column in the source line; 0 = unknown"),
))

FUNCTION = Message("Function", "A function of the program", (
    _f(1, "id", "uint64", "Unique nonzero id, referred to by `Line.function_id`"),
    _f(2, "name", "int64", "String index of the name in human-readable form (e.g. demangled)"),
    _f(3, "system_name", "int64", "String index of the name as the system knows it (e.g. a "
       "mangled C++ symbol); 0 = none"),
    _f(4, "filename", "int64", "String index of the source file's path"),
    _f(5, "start_line", "int64", "Line number where the function starts; 0 = unknown"),
))

MESSAGES = (PROFILE, VALUE_TYPE, SAMPLE, LABEL, MAPPING, LOCATION, LINE, FUNCTION)
"""Every message of ``profile.proto``, in the upstream file's order (the profile first)."""

SCALAR_TYPES = {"int64": 3, "uint64": 4, "bool": 8, "string": 9}
"""``FieldDescriptorProto.Type`` numbers of the scalar types the messages use."""

WIRE_TYPES = {"int64": wire.VARINT, "uint64": wire.VARINT, "bool": wire.VARINT,
              "string": wire.LEN}
"""Wire type of each scalar type as one value; messages, strings and packed runs are LEN."""


def wire_type_of(field: Field) -> int:
    """The wire type *field* has on disk: LEN for messages, strings and packed runs."""
    if field.type not in WIRE_TYPES or field.repeated:
        return wire.LEN
    return WIRE_TYPES[field.type]


def key_of(message: Message, name: str) -> int:
    """The key of field *name* of *message* on the wire: ``number << 3 | wire type``."""
    f = message.field(name)
    return f.number << 3 | wire_type_of(f)


# --- descriptors at run time ------------------------------------------------------------------


def file_descriptor():
    """The declarations as a ``google.protobuf.descriptor_pb2.FileDescriptorProto``."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name=PROTO_FILE, package=PACKAGE, syntax="proto3")
    fd = descriptor_pb2.FieldDescriptorProto
    for message in MESSAGES:
        mdp = fdp.message_type.add(name=message.name)
        for f in message.fields:
            field = mdp.field.add(name=f.name, number=f.number, json_name=_camel(f.name))
            field.label = fd.LABEL_REPEATED if f.repeated else fd.LABEL_OPTIONAL
            if f.type in SCALAR_TYPES:
                field.type = SCALAR_TYPES[f.type]
            else:
                field.type = fd.TYPE_MESSAGE
                field.type_name = f".{PACKAGE}.{f.type}"
    return fdp


@functools.cache
def message_classes() -> dict[str, type]:
    """Protobuf message classes of every message, by name, from a private descriptor pool
    (so that another ``profile.proto`` loaded in the same process cannot clash)."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())
    get_class = getattr(message_factory, "GetMessageClass", None)
    out = {}
    for message in MESSAGES:
        descriptor = pool.FindMessageTypeByName(f"{PACKAGE}.{message.name}")
        if get_class is not None:
            out[message.name] = get_class(descriptor)
        else:  # protobuf < 4.22
            out[message.name] = message_factory.MessageFactory(pool).GetPrototype(descriptor)
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
