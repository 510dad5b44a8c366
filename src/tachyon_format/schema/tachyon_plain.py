"""The fixed layouts of :mod:`.tachyon` for ``struct`` (:mod:`.plain`), and the record
layout of the sample region: generated from the declarations by ``tools/specgen.py``
(``tachyon_format.specdoc.plain``); do not edit. The readers that must start fast
use these without loading construct."""

from .plain import Bits, Field, Layout

HEADER = Layout('header', (
    Field('magic', 'L'),
    Field('format_version', 'L'),
    Field('py_major', 'B'),
    Field('py_minor', 'B'),
    Field('py_micro', 'B'),
    Field('reserved', 'B'),
    Field('start_time_us', 'Q'),
    Field('sample_interval_us', 'Q'),
    Field('sample_count', 'Q'),
    Field('thread_count', 'L'),
    Field('string_table_offset', 'Q'),
    Field('frame_table_offset', 'Q'),
    Field('compression', 'L'),
    Field('profiling_config', 'L', bits=(
        Bits('reserved', 9, 23),
        Bits('capture_features', 4, 5),
        Bits('features_known', 3, 1, flag=True),
        Bits('mode_plus_one', 0, 3),
    )),
))
"""File header: 64 bytes at offset 0 (layout L3, CPython 3.15.2)."""


LEGACY_HEADER = Layout('legacy_header', (
    Field('magic', 'L'),
    Field('format_version', 'L'),
    Field('py_major', 'B'),
    Field('py_minor', 'B'),
    Field('py_micro', 'B'),
    Field('reserved', 'B'),
    Field('start_time_us', 'Q'),
    Field('sample_interval_us', 'Q'),
    Field('sample_count', 'L'),
    Field('thread_count', 'L'),
    Field('string_table_offset', 'Q'),
    Field('frame_table_offset', 'Q'),
    Field('compression', 'L'),
    Field('reserved_tail', '8s'),
))
"""File header of layouts L1/L2 (3.15 pre-releases, before PR #153425): u32 sample count, fields
from offset 32 on moved 4 bytes earlier, no profiling_config."""


FOOTER = Layout('footer', (
    Field('string_count', 'L'),
    Field('frame_count', 'L'),
    Field('file_size', 'Q'),
    Field('checksum', '16s'),
))
"""Footer: the last 32 bytes of the file."""


STATS_TRAILER = Layout('stats_trailer', (
    Field('magic', '8s'),
    Field('version', 'L'),
    Field('size', 'L'),
))
"""TACHSTAT trailer: the last 16 bytes before the footer, when present."""


STATS = Layout('stats', (
    Field('duration_sec', 'd'),
    Field('sample_rate', 'd'),
    Field('error_rate', 'd'),
    Field('missed_samples', 'd'),
    Field('present', 'L', bits=(
        Bits('error_rate', 0, 1, flag=True),
        Bits('missed_samples', 1, 1, flag=True),
    )),
    Field('reserved', 'L'),
    Field('trailer', '', nested=STATS_TRAILER),
))
"""TACHSTAT profile statistics: 56 bytes between the frame table and the footer, written only
when set_stats() was called."""


LEGACY_STATS = Layout('legacy_stats', (
    Field('duration_sec', 'd'),
    Field('sample_rate', 'd'),
    Field('trailer', '', nested=STATS_TRAILER),
))
"""TACHSTAT, legacy 32-byte block: no error_rate or missed_samples."""


RECORD_PREFIX = Layout('record_prefix', (
    Field('thread_id', 'Q'),
    Field('interpreter_id', 'L'),
    Field('encoding', 'B'),
))
"""Record prefix: 13 bytes before every record body."""


STACK_COUNTS = {
    1: ('depth',),  # FULL
    2: ('shared', 'new'),  # SUFFIX
    3: ('pop', 'push'),  # POP_PUSH
}
"""Per stack-change encoding: the names of its counts, in order; the last one counts
its frames (every such body is ``delta_us, status, counts..., frames``)."""
