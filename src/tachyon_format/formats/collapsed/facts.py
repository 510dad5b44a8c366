"""What a collapsed file says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from one carries a :class:`CollapsedFacts` in ``profile.extras["collapsed"]``;
``tachyon_format.info(profile)`` returns :attr:`CollapsedFacts.info`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EXTRAS_KEY = "collapsed"


@dataclass(frozen=True)
class CollapsedFacts:
    """``encoding`` of the text (``utf-8``, ``utf-8-sig``, ``utf-16-le``, ``utf-16-be``);
    ``style`` and ``lines``: the dialect its frames were read in; ``num_lines``: lines of
    text; ``num_stacks``: stack lines read; ``num_comments``: ``#`` and ``//`` lines;
    ``skipped_lines``: numbers (from 1) of the lines that are not ``stack count``, left out
    when reading with ``errors="skip"``; ``line_ends``: ``"\\n"`` or ``"\\r\\n"``."""

    encoding: str
    style: str
    lines: bool
    num_lines: int
    num_stacks: int
    num_comments: int = 0
    skipped_lines: tuple[int, ...] = ()
    line_ends: str = "\n"

    @property
    def info(self) -> dict[str, Any]:
        """The facts as plain values (what :func:`tachyon_format.info` returns)."""
        return {"format": EXTRAS_KEY, "encoding": self.encoding, "style": self.style,
                "lines": self.lines, "num_lines": self.num_lines,
                "num_stacks": self.num_stacks, "num_comments": self.num_comments,
                "num_skipped_lines": len(self.skipped_lines),
                "line_ends": "crlf" if self.line_ends == "\r\n" else "lf"}
