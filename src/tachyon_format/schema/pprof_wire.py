"""The protobuf wire format as construct declares it: one field (:data:`FIELD`), a message
as fields back to back (:data:`MESSAGE`), and the types :mod:`.pprof` declares its messages
with (:class:`ProtoScalar`, :class:`ProtoField`, :class:`ProtoMessage`), which parse and
build a message by its declaration. The pprof reference page shows them; the tests decode
with them as the scalar oracle of the vectorised decoder (``kernels.protowire``) and the
readers. Reading and writing pprof load none of this: they follow the plain twin of the
declarations, :mod:`.pprof_plain`.
"""

from __future__ import annotations

import construct as cs
from construct import this

from .leb128 import I32, I64, LEN, U64_MAX, VARINT
from .primitives import ULEB128

FIELD = "One protobuf field: a key (field_number << 3 | wire_type), then its value" * cs.Struct(
    "key" / ULEB128 * "field_number << 3 | wire_type",
    "number" / cs.Computed(this.key >> 3) * "Field number (1 and above)",
    "wire_type" / cs.Computed(this.key & 7) * "How the value is stored",
    "value" / cs.Switch(this.wire_type, {
        VARINT: ULEB128,
        I64: cs.Bytes(8),
        LEN: cs.Prefixed(ULEB128, cs.GreedyBytes),
        I32: cs.Bytes(4),
    }, default=cs.Error) * "VARINT (0): a ULEB128; I64 (1): 8 bytes; LEN (2): a ULEB128 byte "
                           "count and the bytes (message, string or packed run); I32 (5): 4 "
                           "bytes; groups (3, 4) are not used by profile.proto",
)
MESSAGE = "A message: fields back to back, in any order, until its end" * cs.GreedyRange(FIELD)


def _peel(sc: cs.Construct) -> cs.Construct:
    while isinstance(sc, cs.Renamed):
        sc = sc.subcon
    return sc


class ProtoScalar(cs.Adapter):
    """A protobuf scalar type, by its ``.proto`` name: ``int64`` (a VARINT, two's
    complement), ``uint64``, ``bool`` (VARINT) or ``string`` (LEN, UTF-8). Parses one value
    from its wire form: the VARINT's bytes, or a LEN field's payload."""

    DEFAULTS = {"int64": 0, "uint64": 0, "bool": False, "string": ""}

    def __init__(self, proto_type: str) -> None:
        super().__init__(cs.GreedyBytes if proto_type == "string" else ULEB128)
        self.proto_type = proto_type
        self.wire_type = LEN if proto_type == "string" else VARINT
        self.default = self.DEFAULTS[proto_type]

    def from_wire(self, value):
        """The value of a VARINT's number, or of a LEN field's payload."""
        return self._decode(value, None, "")

    def to_wire(self, value):
        """The VARINT's number, or the LEN field's payload, of *value*."""
        return self._encode(value, None, "")

    def _decode(self, obj, context, path):
        if self.proto_type == "string":
            return obj.decode("utf-8")
        if self.proto_type == "bool":
            return bool(obj)
        if self.proto_type == "int64" and obj >> 63:
            return obj - (1 << 64)
        return obj

    def _encode(self, obj, context, path):
        if self.proto_type == "string":
            return obj.encode("utf-8")
        return int(obj) & U64_MAX


class ProtoField(cs.Subconstruct):
    """A declared field of a :class:`ProtoMessage`: its number, its type (a
    :class:`ProtoScalar` or a message) and whether it is ``repeated`` (proto3 packs repeated
    scalars into one LEN run). Parsed and built by its message, which finds it by number."""

    def __init__(self, number: int, subcon: cs.Construct, *, repeated: bool = False) -> None:
        super().__init__(subcon)
        self.number = number
        self.repeated = repeated

    @property
    def type(self) -> ProtoScalar | ProtoMessage:
        return _peel(self.subcon)

    @property
    def packed(self) -> bool:
        return self.repeated and isinstance(self.type, ProtoScalar) \
            and self.type.wire_type == VARINT

    def _parse(self, stream, context, path):
        raise cs.ExplicitError("a ProtoField is parsed by its ProtoMessage", path=path)

    def _build(self, obj, stream, context, path):
        raise cs.ExplicitError("a ProtoField is built by its ProtoMessage", path=path)


class ProtoMessage(cs.Construct):
    """A protobuf message of declared fields (``"name" / ProtoField(...) * "doc"``), as
    protobuf reads it: fields in any order, unknown ones skipped, a repeated scalar packed
    or not, the last value of a singular scalar wins and a singular message's occurrences
    merge. Parses to a Container of every declared field (proto3 defaults where absent);
    builds as protobuf serializes (declaration order, defaults left out, scalars packed)."""

    def __init__(self, proto_name: str, *subcons: cs.Construct) -> None:
        super().__init__()
        self.proto_name = proto_name
        self.subcons = subcons
        self._by_number = {_peel(sc).number: sc for sc in subcons}

    def _parse(self, stream, context, path):
        out = cs.Container()
        merged: dict[str, bytes] = {}
        for sc in self.subcons:
            f = _peel(sc)
            out[sc.name] = cs.ListContainer() if f.repeated else \
                (None if isinstance(f.type, ProtoMessage) else f.type.default)
        for wire in MESSAGE.parse_stream(stream):
            sc = self._by_number.get(wire.number)
            if sc is None:
                continue
            f, here = _peel(sc), f"{path} -> {sc.name}"
            if isinstance(f.type, ProtoMessage):
                self._expect(wire, LEN, here)
                if f.repeated:
                    out[sc.name].append(f.type.parse(wire.value))
                else:
                    merged[sc.name] = merged.get(sc.name, b"") + wire.value
            elif f.packed and wire.wire_type == LEN:
                out[sc.name].extend(cs.GreedyRange(f.type).parse(wire.value))
            else:
                self._expect(wire, f.type.wire_type, here)
                value = f.type.from_wire(wire.value)
                if f.repeated:
                    out[sc.name].append(value)
                else:
                    out[sc.name] = value
        for name, payload in merged.items():
            out[name] = _peel(self._field(name)).type.parse(payload)
        return out

    def _build(self, obj, stream, context, path):
        for sc in self.subcons:
            f, value = _peel(sc), obj.get(sc.name)
            items = list(value or ()) if f.repeated else [value]
            if f.packed:
                if items:
                    payload = b"".join(f.type.build(v) for v in items)
                    self._write(stream, self._field_bytes(f.number, LEN, payload), path)
                continue
            for item in items:
                if isinstance(f.type, ProtoMessage):
                    if item is not None:
                        self._write(stream, self._field_bytes(f.number, LEN, f.type.build(item)),
                                    path)
                elif f.repeated or item != f.type.default:
                    raw = f.type.to_wire(item)
                    self._write(stream, self._field_bytes(f.number, f.type.wire_type, raw), path)
        return obj

    def _sizeof(self, context, path):
        raise cs.SizeofError("a protobuf message has no fixed size", path=path)

    def _field(self, name: str) -> cs.Construct:
        return next(sc for sc in self.subcons if sc.name == name)

    @staticmethod
    def _write(stream, data: bytes, path: str) -> None:
        cs.stream_write(stream, data, len(data), path)

    @staticmethod
    def _field_bytes(number: int, wire_type: int, value) -> bytes:
        return FIELD.build({"key": number << 3 | wire_type, "value": value})

    @staticmethod
    def _expect(wire, wire_type: int, path: str) -> None:
        if wire.wire_type != wire_type:
            raise cs.ExplicitError(f"wire type {wire.wire_type}, expected {wire_type}",
                                   path=path)
