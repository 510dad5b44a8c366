"""The tables of the format reference: one per declaration (offset or bits, field, type,
meaning), per enum, per text grammar and per module's constants."""

from __future__ import annotations

import enum
import inspect
import re
from types import ModuleType

import construct as cs

from ..schema import gperftools as G
from ..schema import primitives as P
from .pages import WORD_LAYOUTS, Decl, Registry
from .text import attribute_docs, one_line

# --- type labels --------------------------------------------------------------------------------

_WIDTH = {"B": "u8", "H": "u16", "L": "u32", "I": "u32", "Q": "u64",
          "b": "i8", "h": "i16", "l": "i32", "i": "i32", "q": "i64", "f": "f32", "d": "f64"}
_ORDER = {"<": "le", ">": "be"}


def is_bitwise(sc: cs.Construct) -> bool:
    return isinstance(sc, cs.Transformed) and sc.decodefunc is cs.bytes2bits


def struct_of(sc: cs.Construct) -> tuple[cs.Struct, bool] | None:
    """The Struct under a declaration, and whether its fields are bits."""
    sc = P.peel(sc)
    bits = False
    while isinstance(sc, cs.Transformed | cs.Renamed):
        bits = bits or is_bitwise(sc)
        sc = sc.subcon
    return (sc, bits) if isinstance(sc, cs.Struct) else None


def expr(path) -> str:
    """``this['prefix']['encoding']`` as ``prefix.encoding``."""
    return ".".join(re.findall(r"\['([^']+)'\]", repr(path))) or repr(path)


def type_label(sc: cs.Construct, reg: Registry, here: str) -> str:
    while isinstance(sc, cs.Renamed):  # a named declaration is shown as a link to its table
        if link := reg.link(sc, here):
            return link
        sc = sc.subcon
    if isinstance(sc, P.UnsignedLEB128):
        return "uleb128 (u32)" if sc.max_value == P.U32_MAX else "uleb128 (u64)"
    if isinstance(sc, P.ZigZagLEB128Int32):
        return "zigzag-leb128 (i32)"
    if isinstance(sc, cs.FormatField):
        width = _WIDTH[sc.fmtstr[1]]
        return f"{width} {_ORDER[sc.fmtstr[0]]}" if sc.length > 1 else width
    if isinstance(sc, cs.BitsInteger):
        return f"uint, {sc.length} bits"
    if sc is cs.Flag:
        return "flag, 1 bit"
    if isinstance(sc, cs.Const):
        value = sc.value
        shown = f'"{value.decode("ascii")}"' if isinstance(value, bytes) else f"0x{value:08X}"
        return f"const {shown}, {type_label(sc.subcon, reg, here)}"
    if isinstance(sc, P.Sentinel):
        return f"{type_label(sc.subcon, reg, here)} ({sc.raw} = None)"
    if isinstance(sc, G.KnownEnum):
        return type_label(sc.subcon, reg, here) + " (no other value)"
    if isinstance(sc, G.AtLeast):
        return f"{type_label(sc.subcon, reg, here)}, at least {sc.minimum}"
    if isinstance(sc, cs.FlagsEnum):
        flags = ", ".join(f"{k}={v}" for k, v in sc.flags.items())
        return f"{type_label(sc.subcon, reg, here)} flags: {flags}"
    if isinstance(sc, cs.Enum):
        cases = ", ".join(f"{k}={v}" for k, v in sc.encmapping.items())
        return f"{type_label(sc.subcon, reg, here)} enum: {cases}"
    if isinstance(sc, cs.Prefixed):
        return f"{type_label(sc.lengthfield, reg, here)} byte count, then the bytes"
    if isinstance(sc, cs.Array):
        count = sc.count if isinstance(sc.count, int) else expr(sc.count)
        return f"{type_label(sc.subcon, reg, here)} × {count}"
    if isinstance(sc, cs.Bytes):
        return f"bytes[{sc.length}]"
    if sc is cs.GreedyBytes:
        return "bytes to the end of the file"
    if isinstance(sc, cs.RepeatUntil):
        until = re.sub(r"obj_\['(\w+)'\]", r"\1", repr(sc.predicate))
        until = until.replace(") & (", " and ").removeprefix("((").removesuffix("))")
        return f"{type_label(sc.subcon, reg, here)}, repeated up to the first with {until}"
    if isinstance(sc, cs.Switch):
        keys: dict[int, list] = {}
        subcons: dict[int, cs.Construct] = {}
        for key, case in sc.cases.items():
            keys.setdefault(id(case), []).append(key)
            subcons[id(case)] = case
        cases = ", ".join(
            f"{'/'.join(str(k) for k in ks if isinstance(k, str)) or ks[0]} → "
            f"{type_label(subcons[i], reg, here)}"
            for i, ks in keys.items()
        )
        default = "" if sc.default is cs.Pass else "; anything else: error"
        return f"by {expr(sc.keyfunc)}: {cases}{default}"
    if struct_of(sc) is not None:
        return "struct"
    return type(sc).__name__


def merge_orders(labels: tuple[str, ...]) -> str:
    """One label for every byte order: ``u32 le`` and ``u32 be`` become ``u32 (native order)``;
    across word sizes, ``u32 le`` ... ``u64 be`` become ``word (native order)``."""
    if len(set(labels)) == 1:
        return labels[0]
    native = {re.sub(r"\b(\w+) (le|be)\b", r"\1 (native order)", label) for label in labels}
    if len(native) == 1:
        return native.pop()
    words = {re.sub(r"\bu(32|64) \(native order\)", "word (native order)", label)
             for label in native}
    if len(words) == 1:
        return words.pop()
    raise ValueError(f"layout instances differ beyond byte order and word size: {labels}")


# --- tables -------------------------------------------------------------------------------------


def offsets(struct: cs.Struct, bits: bool) -> list[str]:
    fields = struct.subcons
    if bits:
        total = cs.Struct(*fields).sizeof()  # in bits under Bitwise
        out, pos = [], total
        for f in fields:
            width = f.sizeof()
            hi, lo = pos - 1, pos - width
            out.append(str(lo) if hi == lo else f"{lo}..{hi}")
            pos -= width
        return out
    out = []
    for k in range(len(fields)):
        try:
            out.append(str(cs.Struct(*fields[:k]).sizeof()))
        except cs.SizeofError:
            out.append("-")
    return out


def size_note(sc: cs.Construct, bits: bool) -> str:
    try:
        size = sc.sizeof()
    except cs.SizeofError:
        return "Variable size."
    return f"Size: {size} bytes" + (f" ({size * 8} bits)." if bits else ".")


def word_offsets(structs: list[cs.Struct], layouts: tuple[tuple, ...]) -> list[str]:
    """Offsets in words, the same in every layout (``-`` past a variable-size field)."""
    per_layout = []
    for struct, (word_size, _) in zip(structs, layouts, strict=True):
        cells = offsets(struct, False)
        per_layout.append([c if c == "-" else str(int(c) // word_size) for c in cells])
    assert all(cells == per_layout[0] for cells in per_layout), "offsets differ in words"
    return per_layout[0]


def table(decl: Decl, reg: Registry, here: str) -> str:
    instances = decl.instances()
    structs = [struct_of(inst) for inst in instances]
    assert all(structs), f"{decl.name} is not a Struct"
    struct, bits = structs[0]
    per_order = [[type_label(f, reg, here) for f in st.subcons] for st, _ in structs]
    labels = [merge_orders(cells) for cells in zip(*per_order, strict=True)]
    lines = [f"## {decl.name}", ""]
    if decl.has_word_size:
        lines += [f"Declared as `{decl.title}`: words of the writer's pointer size (4 or 8 "
                  "bytes) in its byte order.", ""]
        note = word_size_note([inst for inst in instances])
        column = "word"
        cells = word_offsets([st for st, _ in structs], decl.layouts())
    else:
        if decl.is_factory:
            lines += [f"Declared as `{decl.title}`: fixed-width fields in the writer's byte "
                      "order.", ""]
        else:
            lines += [f"Declared as `{decl.title}`: no byte order.", ""]
        note = size_note(instances[0], bits)
        column = "bits" if bits else "offset"
        cells = offsets(struct, bits)
    lines += [one_line(instances[0].docs) + ". " + note, ""]
    lines += [f"| {column} | field | type | meaning |", "|---|---|---|---|"]
    for off, f, label in zip(cells, struct.subcons, labels, strict=True):
        lines.append(f"| {off} | `{f.name}` | {label} | {one_line(f.docs)} |")
    return "\n".join(lines)


def word_size_note(instances: list[cs.Construct]) -> str:
    try:
        words = {inst.sizeof() // size for inst, (size, _) in zip(instances, WORD_LAYOUTS,
                                                                  strict=True)}
    except cs.SizeofError:
        return "Variable size."
    (count,) = words
    return f"Size: {count} words ({count * 4} or {count * 8} bytes)."


def enum_table(cls: type[enum.Enum]) -> str:
    lines = [f"## {cls.__name__}", "", one_line(inspect.getdoc(cls) or ""), ""]
    if issubclass(cls, enum.IntFlag):
        lines += ["| name | value | bit |", "|---|---|---|"]
        lines += [f"| `{m.name}` | {m.value} | {m.value.bit_length() - 1} |" for m in cls]
    else:
        lines += ["| name | value |", "|---|---|"]
        lines += [f"| `{m.name}` | {m.value} |" for m in cls]
    return "\n".join(lines)


def show_value(value: object) -> str:
    if isinstance(value, bytes):
        return f"`{value!r}`"
    if isinstance(value, int) and value >= 0x10000:
        return f"{value} (0x{value:X})"
    return str(value)


def patterns_table(module: ModuleType) -> str:
    """The module's regular expressions (a text grammar), each with its doc."""
    docs = attribute_docs(module)
    lines = ["| name | pattern (Python bytes) | meaning |", "|---|---|---|"]
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, re.Pattern):
            pattern = value.pattern.decode("ascii").replace("|", "\\|")
            lines.append(f"| `{name}` | `{pattern}` | {one_line(docs.get(name, ''))} |")
    return "\n".join(lines)


def constants_table(module: ModuleType) -> str:
    docs = attribute_docs(module)
    lines = ["| name | value | meaning |", "|---|---|---|"]
    for name, value in vars(module).items():
        if not name.isupper() or name.startswith("_") or isinstance(value, enum.Enum | bool):
            continue
        if isinstance(value, int | bytes):
            lines.append(f"| `{name}` | {show_value(value)} | {one_line(docs.get(name, ''))} |")
    return "\n".join(lines)
