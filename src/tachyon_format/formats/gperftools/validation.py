"""Check a gperftools CPU profile: the problems that make it unreadable, never an exception."""

from __future__ import annotations

from tachyon_format.problems import Problem

from ..sources import Source, problems_reading
from .reader import read


def validate(source: Source, **options) -> list[Problem]:
    """Problems that stop :func:`~.reader.read`, ``[]`` if there are none. Malformed input
    never raises: an unreadable path is reported too, and so (as a last resort) is any
    other failure, named as an internal error."""
    return problems_reading(read, source, **options)
