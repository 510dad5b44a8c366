"""The generated pages of the format reference, as Markdown text by file name."""

from __future__ import annotations

import ast
import inspect
import re

import construct as cs

from ..schema import leb128 as L
from ..schema import pprof as PP
from ..schema import pprof_wire as PW
from ..schema import primitives as P
from ..schema import tachyon as T
from ..schema import tachyon_values as TV
from ..schema.protobuf_plain import wire_type_of
from . import pprof_plain
from .pages import (
    FORMAT_PAGES,
    GENERATED,
    INDEX_PAGE,
    PAGES,
    PPROF_PAGE,
    PRIMITIVES_PAGE,
    PROSE_PAGES,
    Decl,
    Page,
    Registry,
    anchor,
)
from .tables import (
    constants_table,
    enum_table,
    patterns_table,
    size_note,
    struct_of,
    table,
    type_label,
)
from .text import attribute_docs, first_line, one_line, rst_to_md


def head(title: str) -> list[str]:
    return [GENERATED, "", f"# {title}", ""]


def render_page(page: Page, reg: Registry) -> str:
    parts = ["\n".join(head(page.title)).rstrip()]
    if page.intro:
        parts.append(page.intro)
    parts += [table(Decl(name, page.module), reg, page.file) for name in page.decls]
    parts += [enum_table(getattr(page.module, name)) for name in page.enums]
    return "\n\n".join(parts) + "\n"


def render_format_page(page: Page, reg: Registry) -> str:
    """A whole format on one page: the module docstring, tables, enums, text grammar and
    constants."""
    module = page.module
    intro = rst_to_md(module.__doc__ or "")
    body = render_page(Page(page.file, page.title, page.decls, page.enums, intro, module), reg)
    extra = []
    if any(isinstance(v, re.Pattern) for v in vars(module).values()):
        extra += ["## Text", "", "The text after the binary part, as regular expressions "
                  "over its lines.", "", patterns_table(module), ""]
    extra += ["## Constants", "", constants_table(module), ""]
    return body + "\n" + "\n".join(extra)


def render_index() -> str:
    lines = head(INDEX_PAGE.title)
    lines += [rst_to_md(T.__doc__ or ""), "", "## Layouts", "",
              "Generated from the declarations in `src/tachyon_format/schema/`.", ""]
    lines.append(f"- [{PRIMITIVES_PAGE.title}]({PRIMITIVES_PAGE.file}): "
                 f"{first_line(P.__doc__ or '')}")
    for page in PAGES:
        names = ", ".join(f"[{n}]({page.file}#{anchor(n)})" for n in page.decls)
        lines.append(f"- [{page.title}]({page.file}): {names}")
    lines += ["", "## Behaviour", "",
              "Hand-written: what the fields mean, and what CPython 3.15.2's reader and writer do.",
              ""]
    lines += [f"- [{page.title}]({page.file}): {page.summary}" for page in PROSE_PAGES]
    lines += ["", "## Other formats", "",
              "Generated in the same way from their schema modules.", ""]
    lines += [f"- [{page.title}]({page.file}): {first_line(page.module.__doc__ or '')}"
              for page in FORMAT_PAGES]
    lines.append(f"- [{PPROF_PAGE.title}]({PPROF_PAGE.file}): {first_line(PP.__doc__ or '')}")
    lines += ["", "## Constants", "", constants_table(TV)]
    return "\n".join(lines) + "\n"


def render_pprof(reg: Registry) -> str:
    """The pprof page: one table per message (number, field, type, meaning), the wire-level
    field, the constants."""
    here = PPROF_PAGE.file
    messages = pprof_plain.messages()
    names = {m.name for m in messages}
    lines = head(PPROF_PAGE.title)
    lines += [rst_to_md(PP.__doc__ or ""), "",
              "Messages: " + ", ".join(f"[{m.name}](#{anchor(m.name)})" for m in messages)
              + ".", ""]
    for message in messages:
        lines += [f"## {message.name}", "", one_line(message.doc) + ".", "",
                  "| number | field | type | meaning |", "|---|---|---|---|"]
        for f in message.fields:
            shown = f"[{f.type}](#{anchor(f.type)})" if f.type in names else f.type
            wire = {0: "VARINT", 2: "LEN"}[wire_type_of(f)]
            packed = ", packed" if f.repeated and f.type not in names and f.type != "string" \
                else ""
            label = f"repeated {shown}" if f.repeated else shown
            lines.append(f"| {f.number} | `{f.name}` | {label} ({wire}{packed}) | "
                         f"{one_line(f.doc)} |")
        lines.append("")
    field = PW.FIELD
    struct, _ = struct_of(field)
    lines += ["## FIELD", "", one_line(field.docs) + ". " + size_note(field, False), "",
              "| field | type | meaning |", "|---|---|---|"]
    for f in struct.subcons:
        lines.append(f"| `{f.name}` | {type_label(f, reg, here)} | {one_line(f.docs)} |")
    lines += ["", "## Constants", "", constants_table(PP)]
    return "\n".join(lines) + "\n"


def render_primitives(reg: Registry) -> str:
    lines = head(PRIMITIVES_PAGE.title)
    lines += [rst_to_md(P.__doc__ or ""), ""]
    attr_docs = attribute_docs(P)
    instances, classes, functions = [], [], []
    # the construct types, then the construct-free scalars they are built on
    for stmt in ast.parse(inspect.getsource(P)).body + ast.parse(inspect.getsource(L)).body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if isinstance(getattr(P, name, None), cs.Construct) and name in attr_docs:
                instances.append(name)
        elif isinstance(stmt, ast.ClassDef) and ast.get_docstring(stmt):
            classes.append(stmt)
        elif isinstance(stmt, ast.FunctionDef) and ast.get_docstring(stmt):
            functions.append(stmt)
    lines += ["## Field types", "", "| name | shown in tables as | meaning |", "|---|---|---|"]
    for name in instances:
        label = type_label(getattr(P, name), reg, PRIMITIVES_PAGE.file)
        lines.append(f"| `{name}` | {label} | {one_line(attr_docs[name])} |")
    for stmt in classes:
        lines += ["", f"## {stmt.name}", "", rst_to_md(ast.get_docstring(stmt) or "")]
    for stmt in functions:
        lines += ["", f"## {stmt.name}()", "", rst_to_md(ast.get_docstring(stmt) or "")]
    lines += ["", "## Constants", "", constants_table(L)]
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    """Every page, by file name."""
    reg = Registry()
    for page in PAGES + FORMAT_PAGES:
        for name in page.decls:
            reg.add(page, Decl(name, page.module))
    pages = {INDEX_PAGE.file: render_index(), PRIMITIVES_PAGE.file: render_primitives(reg),
             PPROF_PAGE.file: render_pprof(reg)}
    for page in PAGES:
        pages[page.file] = render_page(page, reg)
    for page in FORMAT_PAGES:
        pages[page.file] = render_format_page(page, reg)
    return pages
