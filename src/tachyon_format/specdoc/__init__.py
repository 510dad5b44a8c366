"""The format reference (``docs/format/*.md``), rendered from the schema declarations.

Everything on the pages comes from ``tachyon_format.schema``: the module docstrings, each
declaration's doc (``"..." * cs.Struct(...)``), each field's name, type and doc, the
attribute docstrings of constants, and the enums. Offsets are computed with ``sizeof()`` of
the fields before (``-`` once a variable-size field has passed); bit ranges for bit structs.
Factories of the byte order are rendered for ``"<"`` and ``">"``: a field whose type differs
only in byte order between the two is shown as ``(native order)``. Factories of the word size
and byte order (gperftools) are rendered for all four layouts: a field that is one word in
each is shown as ``word``, and offsets are counted in words. Other formats get one page each,
with their regular expressions (text grammar) in a table.

``tools/specgen.py`` writes the pages into ``docs/format/`` (and checks them in CI);
``tachyon-format spec`` prints them. The hand-written pages of that directory
(``PROSE_PAGES``) are only listed in the index, never written, checked or deleted.

Parts: ``pages`` (what each page holds), ``text`` (docstrings to Markdown), ``tables`` (type
labels, offsets, the tables), ``render`` (whole pages).
"""

from __future__ import annotations

from .pages import GENERATED, PROSE_PAGES
from .render import render

FORMAT_FILES = {
    "tachyon": ("index.md", "primitives.md", "header.md", "sample-region.md", "tables.md",
                "stats-and-footer.md", "legacy-layouts.md"),
    "gperftools": ("gperftools.md",),
    "pprof": ("pprof.md",),
}
"""The generated pages of each format's reference, in reading order."""

__all__ = ["FORMAT_FILES", "GENERATED", "PROSE_PAGES", "reference", "render"]


def reference(format: str = "tachyon", pages: dict[str, str] | None = None) -> str:
    """The reference of *format* (a key of ``FORMAT_FILES``) as one Markdown document: its
    generated pages in reading order, without their generated-file markers. Links between
    pages keep their ``page.md#anchor`` form, as in ``docs/format/``."""
    if format not in FORMAT_FILES:
        raise ValueError(f"no format reference for {format!r}; "
                         f"one of: {', '.join(FORMAT_FILES)}")
    pages = render() if pages is None else pages
    texts = [pages[name].removeprefix(GENERATED + "\n").lstrip("\n")
             for name in FORMAT_FILES[format]]
    return "\n".join(texts)
