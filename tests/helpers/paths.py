"""Where the tests find the repository, the golden files and the shared third-party fixtures."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO / "tests" / "data"
SHARED_FIXTURES = REPO.parent / "shared" / "fixtures"
"""Third-party files kept beside the repository (never copied into it); tests that need
them skip with the reason when this directory is absent."""
CPYTHON_FIXTURES = SHARED_FIXTURES / "tachyon" / "cpython-3.15.2"
"""Profiles written by CPython 3.15.2 itself (see the fixtures' README)."""
