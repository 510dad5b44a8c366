"""The binary part of a gperftools CPU profile: header, records and trailer, checked.

Pipeline:

1. the layout (word size, byte order, variant) from the header: the declared rule of each
   word tested in each layout (:mod:`.header`); a file that is not a header, or is cut
   inside one, gets a :class:`FormatError` naming the first field that disagrees;
2. the whole file as one numpy array of words (a view, no copy);
3. the chain of records walked once (``kernels.counted_records``), every ``num_pcs``
   checked against the words left before anything is allocated for it;
4. counts and pcs gathered with numpy (tier c); the text after the trailer kept as bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tachyon_format.errors import FormatError
from tachyon_format.kernels.counted_records import gather_counted_records, scan_counted_records
from tachyon_format.schema import gperftools as spec

from .facts import Layout
from .header import FIELDS, HEADER_WORDS, layout_of, words_that_fit

_TRAILER = (0, 1, 0)


@dataclass(frozen=True)
class Records:
    """The binary part of a file: its layout and header words, the records before the
    trailer (``counts``; the pcs of record ``i`` are ``pcs[offsets[i]:offsets[i + 1]]``), and
    the text after the trailer with its file offset."""

    layout: Layout
    header: tuple[int, ...]
    counts: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    pcs: npt.NDArray[np.uint64]
    text: bytes
    text_offset: int

    def __len__(self) -> int:
        return int(self.counts.size)


def read_records(data: bytes) -> Records:
    """Header, records and trailer of *data*, or a :class:`FormatError` saying where and
    which field is wrong."""
    found = layout_of(data[: HEADER_WORDS * 8])
    if found is None:
        raise _header_error(data)
    word_size, order, version = found
    words = np.frombuffer(data, dtype=f"{order}u{word_size}", count=len(data) // word_size)
    header = tuple(int(w) for w in words[:HEADER_WORDS])
    walk = scan_counted_records(words, HEADER_WORDS, terminator=_TRAILER)
    index = len(walk.starts)
    if walk.stop == "short":
        slot = len(words) - walk.end  # 0: no count, 1: a count but no num_pcs
        raise FormatError(f"truncated: the file ends inside record {index}",
                          offset=(walk.end + slot) * word_size,
                          path=f"records -> {index} -> {('count', 'num_pcs')[slot]}")
    if walk.stop == "overrun":
        num_pcs = int(words[walk.end + 1])
        left = len(words) - walk.end - 2
        raise FormatError(f"num_pcs {num_pcs} runs past the end of the file ({left} words "
                          "left): truncated, or not a profile",
                          offset=(walk.end + 1) * word_size,
                          path=f"records -> {index} -> num_pcs")
    if walk.stop == "end" and len(data) % word_size:
        raise FormatError(f"truncated: the file ends inside record {index}",
                          offset=walk.end * word_size, path=f"records -> {index} -> count")
    if walk.stop == "end":
        raise FormatError(f"truncated: no trailer after record {index - 1} (the file ends "
                          "there)", offset=walk.end * word_size, path="trailer")
    heads, offsets, pcs = gather_counted_records(words, walk.starts)
    text_offset = walk.end * word_size
    return Records(Layout(word_size, order, spec.Variant(version)), header, heads[:, 0],
                   offsets, pcs, data[text_offset:], text_offset)


def _header_error(data: bytes) -> FormatError:
    """What is wrong with a start that is no header: in the layout that matches it longest,
    the first field that disagrees (or the field the file ends in)."""
    best = (-1, 8, "<")
    for word_size, order in ((8, "<"), (4, "<"), (4, ">"), (8, ">")):
        good = words_that_fit(data, word_size, order)
        if good > best[0]:
            best = (good, word_size, order)
    good, word_size, order = best
    field = FIELDS[min(good, HEADER_WORDS - 1)]
    if (good + 1) * word_size > len(data) and good < HEADER_WORDS:
        return FormatError(f"truncated: a gperftools header is {HEADER_WORDS} words, "
                           f"the file has {len(data)} bytes", offset=len(data),
                           path=f"header -> {field}")
    if good == 0:
        return FormatError("not a gperftools CPU profile (its header starts with words 0, 3, "
                           f"0, a period, 0; this file starts {data[:8].hex(' ')})", offset=0,
                           path="header -> header_count")
    bits = word_size * 8
    return FormatError(f"not a gperftools CPU profile: {field} is wrong for a {bits}-bit "
                       f"{'little' if order == '<' else 'big'}-endian header",
                       offset=good * word_size, path=f"header -> {field}")
