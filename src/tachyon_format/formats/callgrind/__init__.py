"""callgrind profiles (Valgrind's callgrind, read by KCachegrind, QCachegrind and
``callgrind_annotate``): written from any profile, one function per (file, function name).

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

MAGIC = b"# callgrind format"
"""The first line callgrind (since 3.x) and this package write."""
_HEADER_KEYS = (b"version:", b"creator:", b"pid:", b"cmd:", b"part:", b"thread:",
                b"desc:", b"positions:", b"events:")


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a callgrind profile: the magic
    line, or (older files) header lines of which one is ``events:``?"""
    if head.startswith(MAGIC):
        return True
    lines = [line.strip() for line in head.split(b"\n")[:32]]
    lines = [line for line in lines if line and not line.startswith(b"#")]
    if not lines or not lines[0].startswith(_HEADER_KEYS):
        return False
    for line in lines:
        if line.startswith(b"events:"):
            return True
        if not line.startswith(_HEADER_KEYS):
            return False
    return False
