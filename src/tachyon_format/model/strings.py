"""The string table: the bytes a file holds are the truth, text is decoded on demand.

Profile formats store strings as UTF-8 bytes, and real files do not always hold valid UTF-8:
CPython's profiler can read a remote string while it changes, and writes what it read. Text
decoded with ``errors="replace"`` (as CPython's reader does) would turn two different byte
strings into the same text and could never be written back, so the model keeps the bytes
(``write(read(f))`` stays byte-identical) and decodes each entry only to show it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

TEXT_ERRORS = "replace"
"""How bytes that are not UTF-8 show as text: CPython's reader decodes with "replace"."""


class Strings(Sequence[str]):
    """Entry ``i`` is ``buffer[starts[i]:ends[i]]`` (raw bytes, :meth:`raw`), shown as text by
    ``strings[i]``. Entries may repeat and may overlap in the buffer (a reader can point into
    a table as stored, length prefixes and all)."""

    __slots__ = ("_buffer", "_starts", "_ends", "_texts", "_index", "_text_ids")

    def __init__(
        self,
        buffer: bytes,
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
    ) -> None:
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        if starts.shape != ends.shape or starts.ndim != 1:
            raise ValueError("starts and ends must be 1-d and of equal length")
        if starts.size and (starts.min() < 0 or (ends < starts).any()
                            or ends.max() > len(buffer)):
            raise ValueError("string spans must lie inside the buffer")
        self._buffer = bytes(buffer)
        self._starts = starts
        self._ends = ends
        self._texts: list[str] | None = None
        self._index: dict[str, int] | None = None
        self._text_ids: npt.NDArray[np.int64] | None = None

    @classmethod
    def from_raw(cls, items: Iterable[bytes]) -> Strings:
        """Strings from their bytes."""
        items = [bytes(item) for item in items]
        ends = np.cumsum(np.fromiter(map(len, items), np.int64, len(items)))
        return cls(b"".join(items), ends - np.fromiter(map(len, items), np.int64, len(items)),
                   ends)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Strings:
        """Strings from text, stored as UTF-8 (a lone surrogate from ``surrogateescape``
        decoding becomes its original byte again)."""
        return cls.from_raw(text.encode("utf-8", "surrogateescape") for text in texts)

    # -- the sequence of text ---------------------------------------------------------------

    def __len__(self) -> int:
        return int(self._starts.size)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index):
        if self._texts is not None:
            return self._texts[index]
        if isinstance(index, slice):
            return [self._decode(i) for i in range(*index.indices(len(self)))]
        return self._decode(range(len(self))[index])

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts())

    def texts(self) -> list[str]:
        """Every entry as text (decoded once, then kept)."""
        if self._texts is None:
            self._texts = [self._decode(i) for i in range(len(self))]
        return self._texts

    def index(self, text: str, start: int = 0, stop: int | None = None) -> int:
        """The first entry that shows as *text* (``ValueError`` if none)."""
        if start or stop is not None:
            return super().index(text, start, len(self) if stop is None else stop)
        try:
            return self._first_entries()[text]
        except KeyError:
            raise ValueError(f"{text!r} is not in the string table") from None

    def text_ids(self, indices: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Per string index of *indices*, a number for its text: the first entry that shows
        as that text, so that texts compare as numbers (entries of different bytes that show
        alike share one). An index past the table stands for the empty text: its number is
        that of the first empty entry, or ``len(self)`` without one."""
        if self._text_ids is None:
            first = self._first_entries()
            ids = np.fromiter((first[t] for t in self.texts()), np.int64, len(self))
            self._text_ids = np.append(ids, first.get("", len(self)))
        return self._text_ids[np.minimum(np.asarray(indices, np.int64), len(self))]

    def _first_entries(self) -> dict[str, int]:
        """Per text, the first entry that shows as it."""
        if self._index is None:
            self._index = {}
            for i, t in enumerate(self.texts()):
                self._index.setdefault(t, i)
        return self._index

    def __contains__(self, text: object) -> bool:
        try:
            self.index(text)  # type: ignore[arg-type]
        except ValueError:
            return False
        return True

    # -- the bytes --------------------------------------------------------------------------

    def raw(self, index: int) -> bytes:
        """The bytes of entry *index*, as the file holds them."""
        i = range(len(self))[index]
        return self._buffer[self._starts[i] : self._ends[i]]

    def raws(self) -> list[bytes]:
        """Every entry's bytes."""
        buffer = self._buffer
        return [buffer[s:e] for s, e in zip(self._starts.tolist(), self._ends.tolist(),
                                            strict=True)]

    def rows_of(self, raw: bytes) -> npt.NDArray[np.int64]:
        """The rows whose bytes are *raw*, in order, found with numpy (one pass per byte of
        *raw* over the entries of its length): no entry is decoded, so looking up a few
        keys costs no Python object per entry of a table of millions."""
        rows = np.flatnonzero(self._ends - self._starts == len(raw))
        buffer = np.frombuffer(self._buffer, np.uint8)
        starts = self._starts[rows]
        same = np.ones(rows.size, bool)
        for k, byte in enumerate(raw):
            same &= buffer[starts + k] == byte
        return rows[same]

    def is_valid_utf8(self) -> npt.NDArray[np.bool_]:
        """Per entry: are its bytes valid UTF-8 (shown without replacement characters)?"""
        out = np.ones(len(self), dtype=bool)
        for i, raw in enumerate(self.raws()):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                out[i] = False
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held: the strings' bytes and their start and end offsets."""
        return len(self._buffer) + int(self._starts.nbytes + self._ends.nbytes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Strings):
            return self.raws() == other.raws()
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self.texts() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  (mutable caches; compared by content)

    def __repr__(self) -> str:
        shown = ", ".join(repr(t) for t in self[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Strings([{shown}{more}], {len(self)} entries)"

    def _decode(self, i: int) -> str:
        return self._buffer[self._starts[i] : self._ends[i]].decode("utf-8", TEXT_ERRORS)
