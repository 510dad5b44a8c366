"""CPython's ``BinaryReader.get_info()`` dict, built once for the full reader (:mod:`.file`)
and the standard-library one (:mod:`.header_info`)."""

from __future__ import annotations

from typing import Any


def info_of(header, footer, stats: dict[str, float | None]) -> dict[str, Any]:
    """``get_info()``'s dict, in its order, from the parsed header (of any layout: a legacy
    one has no ``profiling_config``), footer and statistics values."""
    h, config = header, getattr(header, "profiling_config", None)
    compression = h.compression
    return {
        "version": h.format_version,
        "python_version": (h.py_major, h.py_minor, h.py_micro),
        "start_time_us": h.start_time_us,
        "sample_interval_us": h.sample_interval_us,
        "sample_count": h.sample_count,
        "thread_count": h.thread_count,
        "string_count": footer.string_count,
        "frame_count": footer.frame_count,
        "compression_type": compression - (1 << 32) if compression >= 1 << 31 else compression,
        **stats,
        "mode": config.mode_plus_one - 1 if config and config.mode_plus_one else None,
        "capture_features": (config.capture_features if config and config.features_known
                             else None),
    }
