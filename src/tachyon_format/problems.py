"""What ``validate`` reports: one :class:`Problem` per thing wrong with a file.

A problem has a severity, so that a CI job can fail on what makes a file unreadable and only
warn about the rest:

- ``"unreadable"``: the file cannot be read (CPython's reader rejects it, or no reader of the
  format can make sense of it); ``read`` raises :class:`~tachyon_format.FormatError`;
- ``"inconsistent"``: the file reads, but two of its parts disagree (a statistics block or a
  footer's file size that does not match what the file holds);
- ``"note"``: nothing is wrong with the data, but a reader may want to know (a layout older
  than 3.15's, a section a reader ignores).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from .errors import FormatError, file_offset, located

Severity = Literal["unreadable", "inconsistent", "note"]
SEVERITIES: tuple[Severity, ...] = ("unreadable", "inconsistent", "note")
"""From worst to mildest."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file, where it is, and what was expected there.

    ``offset`` is a byte offset in the file, or in the decompressed sample region when
    ``region`` is true (the region then starting at file offset ``region_start``, a zstd
    frame when ``compressed``: see :class:`~tachyon_format.FormatError`); ``field`` the field
    path (``header -> num_samples``); ``record`` the index of a sample-region record;
    ``expected`` and ``found`` short texts, when the check compares two values.
    ``str(problem)`` is the one-line message of the CLI."""

    severity: Severity
    message: str
    offset: int | None = None
    field: str | None = None
    record: int | None = None
    region: bool = False
    expected: str | None = None
    found: str | None = None
    region_start: int | None = None
    compressed: bool = False

    def __str__(self) -> str:
        text = self.message
        if self.expected is not None or self.found is not None:
            text += f": expected {self.expected}, found {self.found}"
        text = located(text, offset=self.offset, record=self.record, path=self.field,
                       region=self.region, region_start=self.region_start,
                       compressed=self.compressed)
        return text if self.severity == "unreadable" else f"{self.severity}: {text}"

    @property
    def fatal(self) -> bool:
        """Whether the file cannot be read because of it."""
        return self.severity == "unreadable"

    @property
    def file_offset(self) -> int | None:
        """The problem's offset in the file; None when unknown, or in a zstd region."""
        return file_offset(self.offset, region=self.region, region_start=self.region_start,
                           compressed=self.compressed)

    def in_file(self, region_start: int, compressed: bool) -> Problem:
        """This problem, told where the sample region lies (itself when it is not about the
        region, or already placed)."""
        if not self.region or self.region_start is not None:
            return self
        return replace(self, region_start=region_start, compressed=compressed)

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values (for ``validate --json``), and ``file_offset``."""
        return {**asdict(self), "file_offset": self.file_offset}

    @classmethod
    def from_error(cls, error: FormatError, severity: Severity = "unreadable") -> Problem:
        """The problem a reader raised."""
        return cls(severity, error.message, offset=error.offset, field=error.path,
                   record=error.record, region=error.region, region_start=error.region_start,
                   compressed=error.compressed)

    @classmethod
    def from_os_error(cls, error: OSError) -> Problem:
        """A path that cannot be read at all (missing, a directory, no permission)."""
        return cls("unreadable", f"cannot read: {error.strerror or error}")


def worst(problems: list[Problem]) -> Severity | None:
    """The worst severity among *problems*, ``None`` for none."""
    found = {problem.severity for problem in problems}
    return next((severity for severity in SEVERITIES if severity in found), None)
