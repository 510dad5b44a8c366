"""The one exception type for malformed profile files."""

from __future__ import annotations


class FormatError(ValueError):
    """A profile file does not follow its format.

    ``offset`` is the byte offset of the problem (in the file, or in the decompressed sample
    region when ``region`` is true), ``path`` the field path in construct's notation
    (``header -> num_samples``), and ``record`` the index of the sample-region record, when
    those are known. The message text follows CPython's own reader where one exists.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        path: str | None = None,
        record: int | None = None,
        region: bool = False,
    ) -> None:
        self.message = message
        self.offset = offset
        self.path = path
        self.record = record
        self.region = region
        super().__init__(self._describe())

    def _describe(self) -> str:
        where = []
        if self.offset is not None:
            where.append(f"{'region ' if self.region else ''}offset {self.offset}")
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.path:
            where.append(self.path)
        return f"{self.message} ({', '.join(where)})" if where else self.message


class LimitError(FormatError):
    """A file that may well be valid is larger than a configurable limit of the reader
    (``limit`` names the keyword argument that raises it, ``value`` its value)."""

    def __init__(self, message: str, *, limit: str, value: int, **where) -> None:
        self.limit = limit
        self.value = value
        super().__init__(message, **where)
