"""Records of whole words that each say how many words follow them (``count, n, w1 .. wn``).

Finding where each record starts is a chain (record ``k + 1`` starts where ``k`` ends), so
:func:`scan_counted_records` walks it once, reading one word per record (tier d); everything
else about the records (their counts, lengths and payload words) is then gathered with numpy
from those starts in one pass each (tier c, :func:`gather_counted_records`). The walk stops
at a terminating record given word for word, at the end of the words, or at a record whose
length runs past the end; the caller decides which of those is an error. Formats: gperftools
CPU profiles (``count, num_pcs, pcs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .segments import decode_ragged_ranges

Stop = Literal["terminator", "end", "overrun", "short"]
"""Why the walk stopped: the terminating record, the exact end of the words, a record whose
length runs past the end (``overrun``), or too few words left for a record's head (``short``)."""


@dataclass(frozen=True)
class CountedRecords:
    """Where the walk found records: ``starts`` (word index of each record, the terminator
    excluded), ``end`` (the word after the last record read, the terminator included), and
    ``stop``; for ``overrun``/``short``, ``end`` is where the offending record starts."""

    starts: npt.NDArray[np.intp]
    end: int
    stop: Stop


def scan_counted_records(
    words: npt.NDArray[np.unsignedinteger],
    start: int,
    *,
    head: int = 2,
    length_slot: int = 1,
    terminator: tuple[int, ...] | None = None,
) -> CountedRecords:
    """Walk records from word *start*: each has *head* words, of which the one at
    *length_slot* counts the words after the head. A record equal to *terminator* (head and
    payload, word for word) ends the walk and is not listed."""
    native = np.ascontiguousarray(words, dtype=words.dtype.newbyteorder("="))
    view = memoryview(native)  # indexing gives Python ints, without a numpy scalar each
    n = len(view)
    starts: list[int] = []
    at = start
    term_len = len(terminator) if terminator is not None else 0
    term_body = terminator[head:] if terminator is not None else ()
    term_length = terminator[length_slot] if terminator is not None else -1
    while at < n:
        if at + head > n:
            return CountedRecords(np.asarray(starts, np.intp), at, "short")
        length = view[at + length_slot]
        if length > n - at - head:
            return CountedRecords(np.asarray(starts, np.intp), at, "overrun")
        if (length == term_length
                and tuple(view[at : at + head]) == terminator[:head]  # type: ignore[index]
                and tuple(view[at + head : at + term_len]) == term_body):
            return CountedRecords(np.asarray(starts, np.intp), at + term_len, "terminator")
        starts.append(at)
        at += head + length
    return CountedRecords(np.asarray(starts, np.intp), at, "end")


def gather_counted_records(
    words: npt.NDArray[np.unsignedinteger],
    starts: npt.NDArray[np.intp],
    *,
    head: int = 2,
    length_slot: int = 1,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Vectorised: ``(head_words, offsets, payload)`` of the records at *starts* (found by
    :func:`scan_counted_records`): ``head_words[i]`` is record ``i``'s head (shape
    ``(records, head)``), and its payload is ``payload[offsets[i]:offsets[i + 1]]``, all
    as native-order uint64."""
    starts = np.asarray(starts, dtype=np.intp)
    heads = words[starts[:, None] + np.arange(head)].astype(np.uint64)
    lengths = heads[:, length_slot].astype(np.int64)
    offsets = np.zeros(starts.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    payload = words[decode_ragged_ranges(starts + head, lengths)].astype(np.uint64)
    return heads, offsets, payload



def encode_counted_records(
    heads: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    payload: npt.NDArray[np.uint64],
    dtype: np.dtype | str,
    *,
    length_slot: int = 1,
) -> npt.NDArray:
    """Vectorised, the inverse of :func:`gather_counted_records`: the records as one array
    of words of *dtype*, record ``i`` being ``heads[i]`` then
    ``payload[offsets[i]:offsets[i + 1]]`` (``heads[:, length_slot]`` must be those lengths).
    Values must fit *dtype*; that is the caller's check."""
    heads = np.asarray(heads, dtype=np.uint64)
    n, head = heads.shape
    lengths = np.diff(np.asarray(offsets, dtype=np.int64))
    if n and not np.array_equal(heads[:, length_slot].astype(np.int64), lengths):
        raise ValueError("each head's length slot must equal its payload length")
    starts = np.zeros(n, np.int64)
    if n:
        np.cumsum(lengths[:-1] + head, out=starts[1:])
    out = np.empty(int(lengths.sum()) + n * head, dtype=dtype)
    out[starts[:, None] + np.arange(head)] = heads
    out[decode_ragged_ranges(starts + head, lengths)] = payload
    return out
