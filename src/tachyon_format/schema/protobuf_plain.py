"""Protobuf messages as plain data, for the readers and writers that must not load construct:
:class:`Message` and :class:`Field` records, the wire type and key of each field, and the
runtime descriptors built from them.

The records themselves are not written by hand: ``specdoc.pprof_plain`` derives them from
the construct declarations of :mod:`.pprof` into the generated module :mod:`.pprof_plain`
(``tools/specgen.py`` writes it; the test of the generated pages checks that it is current),
so that each message is declared once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from . import leb128 as wire  # protobuf's wire types, declared with the LEB128 primitives

SCALAR_TYPES = {"int64": 3, "uint64": 4, "bool": 8, "string": 9}
"""``FieldDescriptorProto.Type`` numbers of the scalar types ``profile.proto`` uses."""

WIRE_TYPES = {"int64": wire.VARINT, "uint64": wire.VARINT, "bool": wire.VARINT,
              "string": wire.LEN}
"""Wire type of each scalar type as one value; messages, strings and packed runs are LEN."""


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


@dataclass(frozen=True)
class ProtoFile:
    """A ``.proto`` file: its name, its protobuf package and its messages (the first is the
    one a file of this format holds)."""

    name: str
    package: str
    messages: tuple[Message, ...]


def wire_type_of(field: Field) -> int:
    """The wire type *field* has on disk: LEN for messages, strings and packed runs."""
    if field.type not in WIRE_TYPES or field.repeated:
        return wire.LEN
    return WIRE_TYPES[field.type]


def key_of(message: Message, name: str) -> int:
    """The key of field *name* of *message* on the wire: ``number << 3 | wire type``."""
    f = message.field(name)
    return f.number << 3 | wire_type_of(f)


# --- descriptors at run time (protobuf: the tests' oracle, other tools) -----------------------


def file_descriptor(proto: ProtoFile):
    """*proto* as a ``google.protobuf.descriptor_pb2.FileDescriptorProto``."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name=proto.name, package=proto.package,
                                             syntax="proto3")
    fd = descriptor_pb2.FieldDescriptorProto
    for message in proto.messages:
        mdp = fdp.message_type.add(name=message.name)
        for f in message.fields:
            field = mdp.field.add(name=f.name, number=f.number, json_name=_camel(f.name))
            field.label = fd.LABEL_REPEATED if f.repeated else fd.LABEL_OPTIONAL
            if f.type in SCALAR_TYPES:
                field.type = SCALAR_TYPES[f.type]
            else:
                field.type = fd.TYPE_MESSAGE
                field.type_name = f".{proto.package}.{f.type}"
    return fdp


@functools.cache
def message_classes(proto: ProtoFile) -> dict[str, type]:
    """Protobuf message classes of every message of *proto*, by name, from a private
    descriptor pool (so that another copy of the file loaded in the same process cannot
    clash); no ``protoc``, no generated ``_pb2`` module, any protobuf version from 4.21."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor(proto))
    get_class = getattr(message_factory, "GetMessageClass", None)
    out = {}
    for message in proto.messages:
        descriptor = pool.FindMessageTypeByName(f"{proto.package}.{message.name}")
        if get_class is not None:
            out[message.name] = get_class(descriptor)
        else:  # protobuf < 4.22
            out[message.name] = message_factory.MessageFactory(pool).GetPrototype(descriptor)
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
