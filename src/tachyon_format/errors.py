"""The one exception type for malformed profile files."""

from __future__ import annotations


class FormatError(ValueError):
    """A profile file does not follow its format.

    ``offset`` is the byte offset of the problem (in the file, or in the decompressed sample
    region when ``region`` is true), ``path`` the field path in construct's notation
    (``header -> num_samples``), and ``record`` the index of the sample-region record, when
    those are known. The message text follows CPython's own reader where one exists.

    The decoders of a sample region know only the region; the reader that hands the region
    to them says where it lies (:meth:`in_file`): ``region_start``, the file offset of the
    region's first byte, and ``compressed``, whether those bytes are a zstd frame (whose
    decompressed offsets have no place in the file). ``file_offset`` is then the file offset
    of the problem, when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        path: str | None = None,
        record: int | None = None,
        region: bool = False,
        region_start: int | None = None,
        compressed: bool = False,
    ) -> None:
        self.message = message
        self.offset = offset
        self.path = path
        self.record = record
        self.region = region
        self.region_start = region_start
        self.compressed = compressed
        super().__init__(self._describe())

    def _describe(self) -> str:
        return located(self.message, offset=self.offset, record=self.record, path=self.path,
                       region=self.region, region_start=self.region_start,
                       compressed=self.compressed)

    @property
    def file_offset(self) -> int | None:
        """The problem's offset in the file; None when unknown, or in a zstd region."""
        return file_offset(self.offset, region=self.region, region_start=self.region_start,
                           compressed=self.compressed)

    def in_file(self, region_start: int, compressed: bool) -> FormatError:
        """This error, told where the sample region lies (a no-op for an error that is not
        about the region, or already placed); returns it, to be raised again in place (the
        type, the traceback and the other attributes kept)."""
        if self.region and self.region_start is None:
            self.region_start, self.compressed = region_start, compressed
            self.args = (self._describe(),)
        return self


class LimitError(FormatError):
    """A file that may well be valid is larger than a configurable limit of the reader
    (``limit`` names the keyword argument that raises it, ``value`` its value)."""

    def __init__(self, message: str, *, limit: str, value: int, **where) -> None:
        self.limit = limit
        self.value = value
        super().__init__(message, **where)


def located(text: str, *, offset: int | None, record: int | None, path: str | None,
            region: bool, region_start: int | None = None, compressed: bool = False) -> str:
    """*text* followed by where it applies: ``(file offset 82, region offset 18, record 3)``,
    ``(offset 18 of the decompressed region (zstd frame at file offset 64), record 3)``,
    ``(offset 28, header -> sample_count)``; the one wording of a place in a file, for errors
    and for validate's problems. (``region offset 18`` alone: a region whose place in the
    file was not given.)"""
    where = []
    if offset is not None:
        if not region:
            where.append(f"offset {offset}")
        elif region_start is None:
            where.append(f"region offset {offset}")
        elif compressed:
            where.append(f"offset {offset} of the decompressed region (zstd frame at file "
                         f"offset {region_start})")
        else:
            where.append(f"file offset {region_start + offset}, region offset {offset}")
    if record is not None:
        where.append(f"record {record}")
    if path:
        where.append(path)
    return f"{text} ({', '.join(where)})" if where else text


def file_offset(offset: int | None, *, region: bool, region_start: int | None,
                compressed: bool) -> int | None:
    """The file offset of a place given as errors and problems give it: *offset* itself,
    or in the sample region, *offset* past the region's start; None where the place has no
    file offset (a zstd region's bytes are decompressed) or is unknown."""
    if offset is None or not region:
        return offset
    if region_start is None or compressed:
        return None
    return region_start + offset
