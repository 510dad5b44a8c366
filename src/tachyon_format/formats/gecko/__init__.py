"""The Firefox Profiler's Gecko profile JSON, as CPython 3.15 writes it
(``profiling.sampling replay --gecko``). Written only.

Only :func:`sniff` is here, light to import; the registry (:mod:`tachyon_format.formats`)
names the modules of the other verbs, loaded on first use.
"""

from __future__ import annotations


def sniff(head: bytes) -> bool:
    """Is *head* (the first bytes of a file) the start of a Gecko profile? A ``.json`` name
    says nothing, so the content decides: a JSON object with a ``meta`` object holding the
    Gecko meta fields ``interval`` and ``startTime``. CPython and Firefox write ``meta``
    first; ``threads`` comes after it, often past *head*."""
    if not head.lstrip().startswith(b"{"):
        return False
    return all(key in head for key in (b'"meta"', b'"interval"', b'"startTime"'))
