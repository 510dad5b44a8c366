"""Where :mod:`.file_checks` and :mod:`.salvage` found the table scans before they became the
one scanner of :mod:`.tables`; import them from there."""

from .tables import ScannedTable, scan_frames, scan_strings

__all__ = ["ScannedTable", "scan_frames", "scan_strings"]
