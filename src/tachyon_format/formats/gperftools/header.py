"""The header of a gperftools CPU profile: which word size and byte order a file has, found
by testing the declared header rule (:mod:`tachyon_format.schema.gperftools_plain`, generated
from ``schema.gperftools.header``) in each layout. Light to import: no construct, no numpy,
so that sniffing any file stays cheap.
"""

from __future__ import annotations

from tachyon_format.schema.gperftools_plain import HEADER

HEADER_WORDS = len(HEADER)
"""The header's length in words."""
FIELDS = tuple(name for name, _, _ in HEADER)
"""The header's field names, in order."""
LAYOUTS = ((4, "<"), (4, ">"), (8, "<"), (8, ">"))
"""``(word_size, order)`` in the order pprof's ``parseCPU`` tries them (at most one of
them can hold a header, except for a 64-bit big-endian one also read as 32-bit)."""


def words_that_fit(data: bytes, word_size: int, order: str) -> int:
    """How many of the header's words, from the first, hold what the declaration allows
    (a word the file ends in does not)."""
    byteorder = "little" if order == "<" else "big"
    for k, (_, values, minimum) in enumerate(HEADER):
        chunk = data[k * word_size : (k + 1) * word_size]
        if len(chunk) < word_size:
            return k
        value = int.from_bytes(chunk, byteorder)
        if value < minimum or (values is not None and value not in values):
            return k
    return HEADER_WORDS


def layout_of(head: bytes) -> tuple[int, str, int] | None:
    """``(word_size, order, version)`` of a file starting with *head*, None if its first five
    words are not a header (pprof's ``parseCPU``)."""
    for word_size, order in LAYOUTS:
        if words_that_fit(head, word_size, order) == HEADER_WORDS:
            version = int.from_bytes(head[2 * word_size : 3 * word_size],
                                     "little" if order == "<" else "big")
            return word_size, order, version
    return None
