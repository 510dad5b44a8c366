"""CPython 3.15's JSON Lines export (``profiling.sampling replay --jsonl``).

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

import json


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of CPython's JSONL export? Its first
    line is a ``meta`` record: ``{"type":"meta","v":...,"run_id":...}``."""
    first = head.split(b"\n", 1)[0].strip()
    if not first.startswith(b"{") or b'"meta"' not in first:
        return False
    try:
        record = json.loads(first)
    except (ValueError, RecursionError):  # nested deeper than Python's recursion limit
        return False
    return (isinstance(record, dict) and record.get("type") == "meta"
            and "run_id" in record and "v" in record)
