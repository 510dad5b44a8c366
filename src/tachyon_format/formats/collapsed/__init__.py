"""Collapsed ("folded") stacks: one line per distinct stack, ``frame;frame;... count``.

The text format of Brendan Gregg's ``flamegraph.pl``, speedscope, py-spy and CPython 3.15's
``profiling.sampling --collapsed``. Only :func:`sniff` is here, light to import; the registry
(:mod:`tachyon_format.formats`) names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

import re

_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_COUNT = re.compile(r"[ \t][0-9]+[ \t]*\Z")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def sniff(head: bytes) -> bool:
    """Do the first bytes of a file look like collapsed stacks: text (UTF-8, or UTF-16 with a
    byte order mark, not JSON) whose complete lines, comments (``#``, ``//``) and blank lines
    aside, end in a space and a count (but for one in three at most)? With no complete line
    in *head*, text with a ``;`` counts."""
    from .text import decode_head

    text = decode_head(bytes(head))
    if text is None or _CONTROL.search(text) or text.lstrip()[:1] in ("{", "["):
        return False  # (not text, or JSON)
    lines = text.split("\n")
    complete = lines[:-1] if len(lines) > 1 else []
    if not text.endswith("\n") and len(head) < 4096 and lines[-1].strip():
        complete.append(lines[-1])  # the whole (short) file: its last line is complete too
    seen = bad = 0
    for line in complete:
        line = line.rstrip("\r")
        stripped = line.strip()
        count = _COUNT.search(line)
        if not stripped or (count is None and stripped.startswith(("#", "//"))):
            continue
        if count is None or not count.start() or line[0].isspace():
            bad += 1  # (speedscope skips such lines; reading names them)
        else:
            seen += 1
    if seen or bad:
        return seen > 2 * bad
    rest = lines[-1]
    return len(head) >= 4096 and ";" in rest and not complete
