"""Render :mod:`tachyon_format.schema.gperftools_plain` from the header declaration of
:mod:`tachyon_format.schema.gperftools`: which values each header word may hold, so that
sniffing and reading a gperftools profile test the declared rule without loading construct,
and the rule is stated once. ``tools/specgen.py`` writes the module; the tests check that it
is current.

Each header field must be one word (of the layout's size and byte order) under what it
allows: ``Const`` (one value), ``KnownEnum`` (its members), ``AtLeast`` (a least value), or
nothing (any value). Anything else is refused here with the field's name, and the rule must
be the same in all four layouts.
"""

from __future__ import annotations

import construct as cs

from tachyon_format.schema import gperftools as spec
from tachyon_format.schema.primitives import peel

MODULE = "gperftools_plain.py"
"""The generated module's file name, in the ``schema`` package."""

LAYOUTS = ((4, "<"), (4, ">"), (8, "<"), (8, ">"))
"""Every word size and byte order a header can have."""


def _rule(sub: cs.Construct, word: cs.Construct) -> tuple[tuple[int, ...] | None, int]:
    """``(values, minimum)`` of one header field: the values it may hold (None: any) and
    its least value."""
    t = peel(sub)
    if t is word:
        return None, 0
    if isinstance(t, cs.Const) and peel(t.subcon) is word:
        return (t.value,), t.value
    if isinstance(t, spec.KnownEnum) and isinstance(t.subcon, cs.Enum) \
            and peel(t.subcon.subcon) is word:
        values = tuple(sorted(t.subcon.decmapping))
        return values, values[0]
    if isinstance(t, spec.AtLeast) and peel(t.subcon) is word:
        return None, t.minimum
    raise TypeError(f"header field {sub.name!r}: {type(t).__name__} has no plain twin")


def header_rule() -> tuple[tuple[str, tuple[int, ...] | None, int], ...]:
    """``(name, values, minimum)`` for each header word, the same in every layout."""
    rules = {tuple((sub.name, *_rule(sub, spec.word(size, order)))
                   for sub in peel(spec.header(size, order)).subcons)
             for size, order in LAYOUTS}
    if len(rules) != 1:
        raise TypeError("the header's rule differs between layouts")
    (rule,) = rules
    if len(rule) != spec.HEADER_WORDS:
        raise TypeError(f"the header declares {len(rule)} words, HEADER_WORDS is "
                        f"{spec.HEADER_WORDS}")
    return rule


def render_module() -> str:
    """The source of ``schema/gperftools_plain.py``."""
    out = [
        '"""The header rule of :mod:`.gperftools` as plain data: generated from the header',
        "declaration by ``tools/specgen.py`` (``tachyon_format.specdoc.gperftools_plain``); do",
        "not edit. Sniffing and reading a gperftools profile use it without loading construct.",
        '"""',
        "",
        "HEADER = (",
        *(f"    ({name!r}, {values!r}, {minimum!r}),"
          for name, values, minimum in header_rule()),
        ")",
        '"""The header\'s words in order: name, the values it may hold (None: any), its least',
        'value."""',
        "",
    ]
    return "\n".join(out)
