"""Render :mod:`tachyon_format.schema.tachyon_plain` from the declarations of
:mod:`tachyon_format.schema.tachyon`: each fixed layout as a :class:`~..schema.plain.Layout`
(``struct`` codes, bit fields, nested layouts), and the record layout the region decoders
follow, so that the readers that must start fast load no construct and nothing is declared
twice. ``tools/specgen.py`` writes the module; the test of the generated pages checks that
it is current.

A declaration the plain twin cannot express (a field type other than fixed-width integers,
floats, bytes, a bit word or a nested struct; a record body other than ``delta_us, status,
counts..., frames``) is refused here with the field's name, so a schema change that the fast
readers would misread fails at generation, not at run time.
"""

from __future__ import annotations

import textwrap

import construct as cs

from tachyon_format.schema import primitives
from tachyon_format.schema import tachyon as spec
from tachyon_format.schema.plain import Bits, Field
from tachyon_format.schema.primitives import peel

MODULE = "tachyon_plain.py"
"""The generated module's file name, in the ``schema`` package."""

LAYOUTS = (
    ("HEADER", spec.header),
    ("LEGACY_HEADER", spec.legacy_header),
    ("FOOTER", spec.footer),
    ("STATS_TRAILER", spec.stats_trailer),
    ("STATS", spec.stats),
    ("LEGACY_STATS", spec.legacy_stats),
    ("RECORD_PREFIX", spec.record_prefix),
)
"""The generated layouts: name, and the declaration's factory of the byte order."""

_INT_CODES = {1: "B", 2: "H", 4: "L", 8: "Q"}
_FLAG = type(cs.Flag)  # (construct exports the one instance)


def _struct_of(sc: cs.Construct) -> cs.Struct | None:
    """The struct inside a bit word's byte-swapping and bit transforms, if any."""
    while not isinstance(sc, cs.Struct):
        if not isinstance(sc, cs.Subconstruct):
            return None
        sc = sc.subcon
    return sc


def _bits(struct: cs.Struct, width: int) -> tuple[Bits, ...]:
    """The bit fields of a BitStruct over a word of *width* bits: construct reads them most
    significant bit first, so each field's shift is what follows it."""
    out, left = [], width
    for sub in struct.subcons:
        t = peel(sub)
        size = 1 if isinstance(t, _FLAG) else t.length if isinstance(t, cs.BitsInteger) else None
        if size is None:
            raise TypeError(f"bit field {sub.name!r}: {type(t).__name__} has no plain twin")
        left -= size
        out.append(Bits(sub.name, left, size, isinstance(t, _FLAG)))
    if left != 0:
        raise TypeError(f"bit fields cover {width - left} of {width} bits")
    return tuple(out)


def _field(sub: cs.Construct, order: str) -> Field:
    name, t = sub.name, peel(sub)
    if isinstance(t, cs.Struct):
        return Field(name, "", nested=_layout_fields(name, t, order))
    if isinstance(t, cs.Bytes):
        return Field(name, f"{t.length}s")
    if isinstance(t, cs.Const) and isinstance(t.value, bytes):
        return Field(name, f"{len(t.value)}s")
    if isinstance(t, cs.FlagsEnum):
        word = peel(t.subcon)
        bits = tuple(Bits(flag, value.bit_length() - 1, 1, True)
                     for flag, value in t.flags.items() if value & (value - 1) == 0)
        return Field(name, word.fmtstr[1], bits=bits)
    inner = _struct_of(t)
    if inner is not None and isinstance(t, cs.Transformed | cs.Restreamed):
        size = t.sizeof()
        if size not in _INT_CODES:
            raise TypeError(f"field {name!r}: bit fields in {size} bytes, not a 1/2/4/8-byte word")
        return Field(name, _INT_CODES[size], bits=_bits(inner, 8 * size))
    while isinstance(t, cs.Subconstruct) and not isinstance(t, cs.FormatField):
        t = peel(t.subcon)  # Const(int), Enum, Sentinel: the stored integer
    if isinstance(t, cs.FormatField):
        return Field(name, t.fmtstr[1])
    raise TypeError(f"field {name!r}: {type(t).__name__} has no plain twin")


def _layout_fields(name: str, struct: cs.Struct, order: str):
    from tachyon_format.schema.plain import Layout

    return Layout(name, tuple(_field(sub, order) for sub in struct.subcons))


def layout_of(factory, name: str):
    """The plain layout of a declaration factory, the same for both byte orders."""
    little, big = (_layout_fields(name.lower(), peel(factory(order)), order)
                   for order in "<>")
    if little.fields != big.fields:
        raise TypeError(f"{name}: the two byte orders differ in more than byte order")
    if little.size != factory("<").sizeof():
        raise TypeError(f"{name}: {little.size} bytes, but the declaration has "
                        f"{factory('<').sizeof()}")
    return little


# -- the record bodies ------------------------------------------------------------------------


def _named(struct: cs.Construct) -> dict[str, cs.Construct]:
    return {sub.name: peel(sub) for sub in peel(struct).subcons}


def _is_uleb128(sc: cs.Construct, max_value: int) -> bool:
    return isinstance(sc, primitives.UnsignedLEB128) and sc.max_value == max_value


def stack_counts(body: cs.Construct) -> tuple[str, ...]:
    """The counts of a stack-change body, checked to be ``delta_us, status, counts...,
    frames`` with the frames counted by the last count."""
    fields = _named(body)
    names = list(fields)
    counts = tuple(names[2:-1])
    frames = fields[names[-1]]
    ok = (names[:2] == ["delta_us", "status"]
          and _is_uleb128(fields["delta_us"], primitives.U64_MAX)
          and fields["status"].sizeof() == 1 and len(counts) in (1, 2)
          and all(_is_uleb128(fields[c], primitives.U32_MAX) for c in counts)
          and isinstance(frames, cs.Array) and _is_uleb128(frames.subcon, primitives.U32_MAX)
          and repr(frames.count) == repr(getattr(cs.this, counts[-1])))
    if not ok:
        raise TypeError(f"the region decoders cannot read this record body: {names}")
    return counts


def check_repeat() -> None:
    """A REPEAT body is ``count`` then that many ``(delta_us, status)`` entries."""
    body, entry = _named(spec.REPEAT), _named(spec.REPEAT_ENTRY)
    if not (list(body) == ["count", "samples"]
            and _is_uleb128(body["count"], primitives.U32_MAX)
            and list(entry) == ["delta_us", "status"]
            and _is_uleb128(entry["delta_us"], primitives.U64_MAX)
            and entry["status"].sizeof() == 1):
        raise TypeError("the region decoders cannot read this REPEAT body")


# -- the module -------------------------------------------------------------------------------


def _field_source(f: Field, indent: str, emitted: dict) -> str:
    if f.nested is not None:
        if f.nested not in emitted:
            raise TypeError(f"field {f.name!r}: its layout must be generated before it")
        return f"{indent}Field({f.name!r}, '', nested={emitted[f.nested]}),"
    if not f.bits:
        return f"{indent}Field({f.name!r}, {f.code!r}),"
    bits = "".join(f"\n{indent}    Bits({b.name!r}, {b.shift}, {b.width}"
                   f"{', flag=True' if b.flag else ''})," for b in f.bits)
    return f"{indent}Field({f.name!r}, {f.code!r}, bits=({bits}\n{indent})),"


def render_module() -> str:
    """The source of ``schema/tachyon_plain.py``."""
    check_repeat()
    out = [
        '"""The fixed layouts of :mod:`.tachyon` for ``struct`` (:mod:`.plain`), and the record',
        "layout of the sample region: generated from the declarations by ``tools/specgen.py``",
        "(``tachyon_format.specdoc.plain``); do not edit. The readers that must start fast",
        'use these without loading construct."""',
        "",
        "from .plain import Bits, Field, Layout",
    ]
    emitted: dict = {}
    for name, factory in LAYOUTS:
        layout = layout_of(factory, name)
        doc = (_docs(factory("<")) or name).replace('"""', "'''").rstrip(".")
        out += ["", f"{name} = Layout({layout.name!r}, ("]
        out += [_field_source(f, "    ", emitted) for f in layout.fields]
        out += ["))", textwrap.fill(f'"""{doc}."""', 96), ""]
        emitted[layout] = name
    counts = {int(spec.Encoding[name]): stack_counts(body)
              for name, body in spec.BODIES.items() if name != spec.Encoding.REPEAT.name}
    out += [
        "",
        "STACK_COUNTS = {",
        *(f"    {code}: {names!r},  # {spec.Encoding(code).name}"
          for code, names in counts.items()),
        "}",
        '"""Per stack-change encoding: the names of its counts, in order; the last one counts',
        'its frames (every such body is ``delta_us, status, counts..., frames``)."""',
        "",
    ]
    return "\n".join(out)


def _docs(sc: cs.Construct) -> str:
    return getattr(sc, "docs", "") or ""
