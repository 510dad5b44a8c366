"""Check a gperftools CPU profile: the problems that make it unreadable, never an exception."""

from __future__ import annotations

from tachyon_format.errors import FormatError

from ..sources import Source
from .reader import read


def validate(source: Source, **options) -> list[str]:
    """Problems that stop :func:`~.reader.read`, ``[]`` if there are none. Malformed input
    never raises: an unreadable path is reported too, and so (as a last resort) is any
    other failure, named as an internal error."""
    try:
        read(source, **options)
    except FormatError as exc:
        return [str(exc)]
    except OSError as exc:
        return [f"cannot read: {exc}"]
    except Exception as exc:  # a reader bug must not break the never-raises contract
        return [f"internal error while reading: {type(exc).__name__}: {exc}"]
    return []
