"""numpy kernels with stable signatures, shared by every format (no format knowledge).

A kernel's name says how it runs: ``decode_*``, ``encode_*`` and ``find_*`` are vectorised
(arrays in and out, no Python loop per value or entry); ``scan_*`` is a plain-Python loop
over a stream whose next entry starts where the previous one ends, as
:func:`~tachyon_format.schema.leb128.scan_uleb128` is for one varint (for a few entries, or
where no array form exists).
"""
