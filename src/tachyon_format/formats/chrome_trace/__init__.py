"""Chrome trace event JSON (the format of chrome://tracing, read by Perfetto and the Firefox
Profiler): written from a profile with timestamps, as a timeline of stack slices per thread.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations

import re

_OBJECT_START = re.compile(rb'\A\s*\{\s*"traceEvents"\s*:', re.S)
_ANY_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a trace event JSON object (the
    object form, ``{"traceEvents": [...]}``; a bare array has no mark to tell it by)?"""
    text = head.lstrip(b"\xef\xbb\xbf")
    if not text.lstrip().startswith(b"{"):
        return False
    return bool(_OBJECT_START.match(text) or _ANY_KEY.search(text))
