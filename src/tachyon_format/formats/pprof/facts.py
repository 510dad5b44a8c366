"""What a pprof file says beyond the format-neutral :class:`~tachyon_format.Profile`.

A profile read from pprof carries :class:`PprofFacts` in ``profile.extras["pprof"]``: the
ids, flags and string indices that the model has no place for, as columns, so that writing
the profile back gives the same profile (ids renumbered only if the frames changed). String
references are rows of ``profile.strings``, which is the file's string table as stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

EXTRAS_KEY = "pprof"

THREAD_ID = "thread id"
"""Label key of the thread id (a decimal string), as Datadog's profilers name it."""
INTERPRETER_ID = "interpreter id"
"""Label key of the CPython interpreter id (a decimal string)."""
THREAD_STATUS = "thread status"
"""Label key of the thread status bits, as names joined by ``|`` (``none`` for no bit)."""
TIMESTAMP = "end_timestamp_ns"
"""Numeric label (unit ``nanoseconds``) of a sample's time, as Datadog's profilers name it."""
NANOSECONDS = "nanoseconds"


@dataclass
class PprofFacts:
    """The pprof-only parts of a profile read from pprof.

    - ``info``: header-level facts (what :func:`tachyon_format.info` returns).
    - ``compression``: the wrapper the file had (``gzip``, ``zstd``, ``none``).
    - ``strings_of``: string indices of ``sample_type`` (rows of (type, unit)),
      ``period_type`` (or None), ``default_sample_type``, ``drop_frames``, ``keep_frames``,
      ``doc_url`` and ``comment``.
    - ``mapping_id`` and the mapping flags ``has_functions``, ``has_filenames``,
      ``has_line_numbers``, ``has_inline_frames`` (per row of ``profile.mappings``).
    - Locations: ``location_id``, ``location_is_folded``, and ``location_first_frame`` /
      ``location_num_lines``: location ``i`` is frames ``first .. first + max(1, lines) - 1``
      (innermost line first; a location without lines has one frame without a function).
    - Per frame: ``frame_function`` (row of the function table, -1 none), ``frame_line`` and
      ``frame_column`` as stored (the model's ``lineno`` / ``column`` are converted).
    - Functions: ``function_id``, ``function_name``, ``function_system_name``,
      ``function_filename``, ``function_start_line``.
    - Labels the model has no column for: ``label_sample`` (sample row), ``label_key``,
      ``label_str``, ``label_num``, ``label_num_unit`` (string rows; 0 = none).
    - ``mapped_labels``: the label keys that became model columns (concept -> key).
    """

    info: dict[str, Any]
    compression: str = "gzip"
    strings_of: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, npt.NDArray] = field(default_factory=dict)
    mapped_labels: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    @property
    def nbytes(self) -> int:
        return sum(int(c.nbytes) for c in self.columns.values())
