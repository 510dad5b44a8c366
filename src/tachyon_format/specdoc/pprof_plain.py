"""Render :mod:`tachyon_format.schema.pprof_plain` from the message declarations of
:mod:`tachyon_format.schema.pprof`: each message and field as a plain record
(:mod:`tachyon_format.schema.protobuf_plain`), so that reading and writing pprof follow the
declared messages without loading construct, and each message is declared once.
``tools/specgen.py`` writes the module; the tests check that it is current.

Each message must be a named ``ProtoMessage`` of named, documented ``ProtoField`` s whose
type is a ``ProtoScalar`` or a declared message; anything else is refused with the field's
name.
"""

from __future__ import annotations

import textwrap

import construct as cs

from tachyon_format.schema import pprof as spec
from tachyon_format.schema.pprof_wire import ProtoField, ProtoMessage, ProtoScalar
from tachyon_format.schema.protobuf_plain import Field, Message

from .text import attribute_docs

MODULE = "pprof_plain.py"
"""The generated module's file name, in the ``schema`` package."""

CONSTANTS = ("UPSTREAM_COMMIT", "PACKAGE", "PROTO_FILE", "GZIP_MAGIC", "ZSTD_MAGIC")
"""The constants of :mod:`.pprof` the generated module repeats (readers sniff by the magics;
the descriptors need the package and file name)."""


def _peel(sc: cs.Construct) -> cs.Construct:
    while isinstance(sc, cs.Renamed):
        sc = sc.subcon
    return sc


def _type_name(f: ProtoField, where: str) -> str:
    t = f.type
    if isinstance(t, ProtoScalar):
        return t.proto_type
    if isinstance(t, ProtoMessage):
        return t.proto_name
    raise TypeError(f"{where}: {type(t).__name__} is neither a ProtoScalar nor a message")


def message_of(declaration: cs.Construct) -> Message:
    """The plain record of one message declaration (``"doc" * ProtoMessage(...)``)."""
    m = _peel(declaration)
    if not isinstance(m, ProtoMessage) or not declaration.docs:
        raise TypeError(f"{declaration!r} is not a documented ProtoMessage")
    fields = []
    for sc in m.subcons:
        f, where = _peel(sc), f"{m.proto_name}.{sc.name}"
        if not isinstance(f, ProtoField) or not sc.name or not sc.docs:
            raise TypeError(f"{where}: not a named, documented ProtoField")
        fields.append(Field(f.number, sc.name, _type_name(f, where), f.repeated, sc.docs))
    return Message(m.proto_name, declaration.docs, tuple(fields))


def messages() -> tuple[Message, ...]:
    """Every declared message as a plain record, in the order of ``pprof.MESSAGES``."""
    return tuple(message_of(m) for m in spec.MESSAGES)


def _names() -> dict[str, str]:
    """The module-level name of each message declaration, by message name."""
    return {_peel(value).proto_name: name for name, value in vars(spec).items()
            if name.isupper() and isinstance(_peel(value), ProtoMessage)}


def _text(text: str, indent: int) -> str:
    """*text* as adjacent string literals that fit the line length."""
    pieces = textwrap.wrap(text, 92 - indent, drop_whitespace=False, break_on_hyphens=False)
    return ("\n" + " " * indent).join(repr(p) for p in pieces) if pieces else "''"


def render_module() -> str:
    """The source of ``schema/pprof_plain.py``."""
    docs = attribute_docs(spec)
    names = _names()
    out = [
        '"""The messages of :mod:`.pprof` as plain records (:mod:`.protobuf_plain`): generated',
        "from the declarations by ``tools/specgen.py`` (``tachyon_format.specdoc.pprof_plain``);",
        "do not edit. Reading and writing pprof follow them without loading construct.",
        '"""',
        "",
        "from .protobuf_plain import Field, Message, ProtoFile",
        "",
    ]
    for name in CONSTANTS:
        out += [f"{name} = {getattr(spec, name)!r}", f'"""{docs[name]}"""']
    for message in messages():
        out += ["", "", f"{names[message.name]} = Message(",
                f"    {message.name!r},", f"    {_text(message.doc, 4)},", "    ("]
        for f in message.fields:
            head = f"Field({f.number}, {f.name!r}, {f.type!r}, {f.repeated},"
            out += [f"        {head}", f"              {_text(f.doc, 14)}),"]
        out += ["    ),", ")"]
    listed = ", ".join(names[m.name] for m in messages())
    out += ["", "", f"MESSAGES = ({listed})", f'"""{docs["MESSAGES"]}"""',
            "PROTO = ProtoFile(PROTO_FILE, PACKAGE, MESSAGES)",
            '"""``profile.proto`` as one record (for ``protobuf_plain.message_classes``)."""',
            ""]
    return "\n".join(out)
