"""Shared fixtures. The reference-interpreter helpers live in ``helpers/reference.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: the golden files (see its README for provenance)."""
    return DATA_DIR


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """Third-party fixture files kept beside the repository, when present."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"no shared fixtures at {SHARED_FIXTURES}")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def golden_bins() -> list[Path]:
    """Every golden Tachyon file, ``tests/data/*.bin``, sorted by name."""
    return sorted(DATA_DIR.glob("*.bin"))
