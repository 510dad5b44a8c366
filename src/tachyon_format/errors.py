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
        return located(self.message, offset=self.offset, record=self.record, path=self.path,
                       region=self.region)


class LimitError(FormatError):
    """A file that may well be valid is larger than a configurable limit of the reader
    (``limit`` names the keyword argument that raises it, ``value`` its value)."""

    def __init__(self, message: str, *, limit: str, value: int, **where) -> None:
        self.limit = limit
        self.value = value
        super().__init__(message, **where)


def located(text: str, *, offset: int | None, record: int | None, path: str | None,
            region: bool) -> str:
    """*text* followed by where it applies: ``(region offset 12, record 3, header -> x)``;
    the one wording of a place in a file, for errors and for validate's problems."""
    where = []
    if offset is not None:
        where.append(f"{'region ' if region else ''}offset {offset}")
    if record is not None:
        where.append(f"record {record}")
    if path:
        where.append(path)
    return f"{text} ({', '.join(where)})" if where else text
