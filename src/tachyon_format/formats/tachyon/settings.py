"""CPython 3.15.2's reader and writer settings: choices of its implementation, not of the layout
(nothing in a file records them; docs/format/writer.md#settings, docs/format/reader.md#settings).

A writer that wants CPython's exact bytes needs the writer's values (and, for zstd, the same
libzstd); a reader that wants CPython's exact batches and limits needs the reader's.
"""

from __future__ import annotations

# -- the writer ------------------------------------------------------------------------------

WRITE_BUFFER_SIZE = 524288
"""Records reach the file (or zstd) in chunks of exactly this many bytes."""
REPEAT_BUFFER_SIZE = 16384
"""Per-thread pending-REPEAT buffer; written out when ``used + 11 > 16384``."""
REPEAT_ENTRY_MAX_SIZE = 11
"""The most a REPEAT entry takes: a 10-byte delta varint and its status byte."""
ZSTD_LEVEL = 5
"""The only zstd parameter CPython's writer sets."""

# -- the reader ------------------------------------------------------------------------------

MAX_DECOMPRESSED_SIZE = 2**30
"""The reader refuses a zstd sample region that decompresses to more than this."""
REPLAY_BATCH_MAX = 8192
"""replay() hands at most this many REPEAT timestamps to one collect() call."""
