"""The header rule of :mod:`.gperftools` as plain data: generated from the header
declaration by ``tools/specgen.py`` (``tachyon_format.specdoc.gperftools_plain``); do
not edit. Sniffing and reading a gperftools profile use it without loading construct.
"""

HEADER = (
    ('header_count', (0,), 0),
    ('num_header_slots', (3,), 3),
    ('version', (0, 1), 0),
    ('period_us', None, 1),
    ('padding', (0,), 0),
)
"""The header's words in order: name, the values it may hold (None: any), its least
value."""
