"""The golden files' companions: CPython's own decode of each ``tests/data/NAME.bin``."""

from __future__ import annotations

import gzip
from pathlib import Path


def reference_text(path: Path) -> str:
    """``NAME.ref.jsonl.gz`` of ``NAME.bin``: CPython's canonical decode (tests/data/README)."""
    with gzip.open(path.with_name(path.name.replace(".bin", ".ref.jsonl.gz")), "rt") as f:
        return f.read()
